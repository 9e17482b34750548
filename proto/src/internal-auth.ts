/**
 * The gateway → accounts credential look-up, a contract between two services (not part of the public API):
 *
 *   POST /internal/v1/authenticate
 *   x-sigil-principal: <gateway-signed token with kind 'service', actorId 'gateway'>
 *   { "type": "api_key", "secretHash": "<sha256 hex of the full secret>" }
 *   { "type": "session", "tokenHash": "<sha256 hex of the session cookie value>" }
 *
 * Answers 200 with `{ principal, expiresAt }` or `{ principal: null, reason }`; 400 for a malformed body and 401 for any
 * caller but the gateway (problem+json). The gateway hashes the raw credential itself, so raw secrets never leave the
 * edge. `expiresAt` bounds how long the gateway may cache the answer; it must also drop entries on `apikey.revoked`
 * (`keyHash`), `session.revoked` (`sessionHash`) and, for the sessions of that user in that organization, on
 * `member.role_changed` and `member.removed`.
 */
import type { Mode, Permission, Role } from './auth.ts';

export const INTERNAL_AUTHENTICATE_PATH = '/internal/v1/authenticate';
/** The `actorId` of the only service principal allowed to call the endpoint. */
export const GATEWAY_ACTOR_ID = 'gateway';

/** Who is calling, resolved once by the gateway and handed to services as a signed token (`x-sigil-principal`). */
export interface Principal {
  kind: 'api_key' | 'session' | 'service';
  organizationId: string;
  /** API key id, user id, or service name. */
  actorId: string;
  mode: Mode;
  permissions: Permission[];
  userId?: string;
  role?: Role;
  apiKeyId?: string;
  sessionId?: string;
}

export interface AuthenticateApiKeyRequest {
  type: 'api_key';
  /** SHA-256, lower-case hex, of the full key (`sgl_live_...` / `sgl_test_...`). */
  secretHash: string;
}

export interface AuthenticateSessionRequest {
  type: 'session';
  /** SHA-256, lower-case hex, of the session cookie value. */
  tokenHash: string;
}

export type AuthenticateRequest = AuthenticateApiKeyRequest | AuthenticateSessionRequest;

export type AuthenticateFailureReason = 'unknown' | 'revoked' | 'expired';

export interface AuthenticateSuccess {
  /**
   * API key: `{ kind: 'api_key', organizationId, actorId: keyId, apiKeyId: keyId, mode: key.mode, permissions: key.scopes }`.
   * Session: `{ kind: 'session', organizationId, actorId: userId, userId, sessionId, role, permissions: ROLE_PERMISSIONS[role], mode: 'live' }`.
   */
  principal: Principal;
  /** When the credential stops working (RFC 3339), or null for a key without expiry. */
  expiresAt: string | null;
}

export interface AuthenticateFailure {
  principal: null;
  reason: AuthenticateFailureReason;
}

export type AuthenticateResponse = AuthenticateSuccess | AuthenticateFailure;

/** Whether an answer has the shape the gateway may cache (checked by the gateway on every answer). */
export function isAuthenticateResponse(value: unknown): value is AuthenticateResponse {
  if (!value || typeof value !== 'object' || !('principal' in value)) return false;
  const { principal } = value as { principal: unknown };
  if (principal === null) {
    const reason = (value as { reason?: unknown }).reason;
    return reason === 'unknown' || reason === 'revoked' || reason === 'expired';
  }
  if (!principal || typeof principal !== 'object') return false;
  const p = principal as Record<string, unknown>;
  return (
    (p.kind === 'api_key' || p.kind === 'session') &&
    typeof p.organizationId === 'string' &&
    typeof p.actorId === 'string' &&
    (p.mode === 'test' || p.mode === 'live') &&
    Array.isArray(p.permissions)
  );
}
