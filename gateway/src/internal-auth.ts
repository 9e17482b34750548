import type { Principal } from '@sigil/kit';

/**
 * The wire contract of the accounts service's `POST /internal/v1/authenticate`, declared structurally
 * here until `@sigil/accounts/internal-auth` exports it (the gateway must not depend on the accounts
 * implementation, only on this shape).
 */
export const AUTHENTICATE_PATH = '/internal/v1/authenticate';

export type AuthenticateRequest = { type: 'api_key'; secretHash: string } | { type: 'session'; tokenHash: string };

export type AuthenticateFailureReason = 'unknown' | 'revoked' | 'expired';

export type AuthenticateResponse =
  | {
      principal: Principal;
      /** Optional: when the credential stops being valid; the cache never keeps it past that moment. */
      expiresAt?: string | null;
    }
  | { principal: null; reason: AuthenticateFailureReason };
