import { randomBytes } from 'node:crypto';

export { sha256Hex } from '@sigil/kit/crypto';

/** A random bearer token: 32 bytes from the CSPRNG, base64url (43 characters). */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

export const SHA256_HEX = /^[0-9a-f]{64}$/;
