import { createHash, randomBytes } from 'node:crypto';

/** SHA-256 hex: how session tokens, invitation tokens and API key secrets are stored and looked up. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** A random bearer token: 32 bytes from the CSPRNG, base64url (43 characters). */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

export const SHA256_HEX = /^[0-9a-f]{64}$/;
