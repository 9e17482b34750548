import { SignJWT, jwtVerify, importJWK, type JWK, type CryptoKey } from 'jose';
import { STRATA, isStrataRole, type StrataPrincipal } from '@sigil/proto/strata';
import { rememberVerified } from './verified-tokens.ts';

const ISSUER = 'sigil-gateway';
const AUDIENCE = 'strata-services';
const ALG = 'EdDSA';
const LIFETIME_SECONDS = 60;

export const STRATA_PRINCIPAL_HEADER = STRATA.principalHeader;

export type StrataPrincipalSigner = (principal: StrataPrincipal) => Promise<string>;
export type StrataPrincipalVerifier = (token: string) => Promise<StrataPrincipal>;

/** The gateway signs the principal it resolved from the access proxy's JWT; Strata services verify it. */
export async function createStrataPrincipalSigner(privateJwk: JWK): Promise<StrataPrincipalSigner> {
  const key = (await importJWK(privateJwk, ALG)) as CryptoKey;
  return (principal) =>
    new SignJWT({ principal })
      .setProtectedHeader({ alg: ALG })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(principal.id)
      .setIssuedAt()
      .setExpirationTime(`${LIFETIME_SECONDS}s`)
      .sign(key);
}

export async function createStrataPrincipalVerifier(publicJwk: JWK): Promise<StrataPrincipalVerifier> {
  const key = (await importJWK(publicJwk, ALG)) as CryptoKey;
  return rememberVerified(async (token) => {
    const { payload } = await jwtVerify(token, key, { issuer: ISSUER, audience: AUDIENCE, algorithms: [ALG] });
    return { principal: parseStrataPrincipal(payload.principal), expiresAt: (payload.exp ?? 0) * 1000 };
  });
}

function parseStrataPrincipal(value: unknown): StrataPrincipal {
  const p = value as Partial<StrataPrincipal> | undefined;
  const strings = (list: unknown): list is string[] => Array.isArray(list) && list.every((s) => typeof s === 'string');
  if (!p || typeof p.id !== 'string' || typeof p.email !== 'string' || !isStrataRole(p.role)) throw new Error('bad strata principal');
  if (!strings(p.groups) || !strings(p.orgs) || !strings(p.projects) || typeof p.service !== 'boolean') throw new Error('bad strata principal');
  return { id: p.id, email: p.email, role: p.role, groups: p.groups, orgs: p.orgs, projects: p.projects, service: p.service };
}
