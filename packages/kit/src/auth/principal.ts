import { SignJWT, jwtVerify, exportJWK, generateKeyPair, importJWK, type JWK, type CryptoKey } from 'jose';
import { AppError, missingPermission } from '../errors.ts';
import { isPermission, type Permission, type Role } from './permissions.ts';
import { rememberVerified } from './verified-tokens.ts';

export const PRINCIPAL_HEADER = 'x-sigil-principal';
const ISSUER = 'sigil-gateway';
const AUDIENCE = 'sigil-services';
const ALG = 'EdDSA';
const LIFETIME_SECONDS = 60;

export type { Mode } from '@sigil/proto/auth';
/** Who is calling, resolved once by the gateway and handed to services as a signed token (a proto contract). */
export type { Principal } from '@sigil/proto/internal-auth';
import type { Principal } from '@sigil/proto/internal-auth';

export interface InternalKeyPair {
  privateJwk: JWK;
  publicJwk: JWK;
}

export async function generateInternalKeyPair(): Promise<InternalKeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(ALG, { crv: 'Ed25519', extractable: true });
  return { privateJwk: await exportJWK(privateKey), publicJwk: await exportJWK(publicKey) };
}

export type PrincipalSigner = (principal: Principal) => Promise<string>;
export type PrincipalVerifier = (token: string) => Promise<Principal>;

export async function createPrincipalSigner(privateJwk: JWK): Promise<PrincipalSigner> {
  const key = (await importJWK(privateJwk, ALG)) as CryptoKey;
  return (principal) =>
    new SignJWT({ ...principal })
      .setProtectedHeader({ alg: ALG })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(principal.actorId)
      .setIssuedAt()
      .setExpirationTime(`${LIFETIME_SECONDS}s`)
      .sign(key);
}

export async function createPrincipalVerifier(publicJwk: JWK): Promise<PrincipalVerifier> {
  const key = (await importJWK(publicJwk, ALG)) as CryptoKey;
  return rememberVerified(async (token) => {
    const { payload } = await jwtVerify(token, key, { issuer: ISSUER, audience: AUDIENCE, algorithms: [ALG] });
    return { principal: principalFromClaims(payload), expiresAt: (payload.exp ?? 0) * 1000 };
  });
}

function principalFromClaims(claims: Record<string, unknown>): Principal {
  const { kind, organizationId, actorId, mode, permissions } = claims;
  if (kind !== 'api_key' && kind !== 'session' && kind !== 'service') throw new Error('bad principal kind');
  if (typeof organizationId !== 'string' || typeof actorId !== 'string') throw new Error('bad principal ids');
  if (mode !== 'test' && mode !== 'live') throw new Error('bad principal mode');
  if (!Array.isArray(permissions) || !permissions.every((p) => typeof p === 'string' && isPermission(p))) {
    throw new Error('bad principal permissions');
  }
  const optional = (name: string): string | undefined => (typeof claims[name] === 'string' ? (claims[name] as string) : undefined);
  return {
    kind,
    organizationId,
    actorId,
    mode,
    permissions: permissions as Permission[],
    ...(optional('userId') ? { userId: optional('userId') } : {}),
    ...(optional('role') ? { role: optional('role') as Role } : {}),
    ...(optional('apiKeyId') ? { apiKeyId: optional('apiKeyId') } : {}),
    ...(optional('sessionId') ? { sessionId: optional('sessionId') } : {}),
  };
}

export function requirePermission(principal: Principal, permission: Permission): void {
  if (!principal.permissions.includes(permission)) throw missingPermission(permission);
}

/** The caller identity idempotency keys are scoped to: organization plus key or dashboard user. */
export function callerScope(principal: Principal): string {
  return `${principal.organizationId}:${principal.apiKeyId ?? principal.userId ?? principal.actorId}`;
}

export function unauthorized(detail = 'A valid API key or dashboard session is required.'): AppError {
  return new AppError('unauthorized', detail, { headers: { 'www-authenticate': 'Bearer realm="sigil"' } });
}
