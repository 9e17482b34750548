import { createHash } from 'node:crypto';

/**
 * SHA-256 hex of a credential: how API key secrets, session and invitation tokens are stored by accounts
 * and looked up by the gateway. Both sides must hash identically, so both use this.
 */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}
