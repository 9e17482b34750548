import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { z } from '@sigil/kit/config';
import { isSecureRequest } from '@sigil/kit/http';
import { STRATA_ROLES, type StrataRole } from '@sigil/proto/strata';
import { DEFAULT_STRATA_CREDENTIAL_NAMES, sendStrataError as sendError, type TrustedIssuerKey } from './strata-auth.ts';

/**
 * A stand-in for the access proxy on the local stack: it mints the JWTs Cloudflare Access would put in
 * front of Strata, signed with an Ed25519 key the gateway trusts besides the configured issuer. Never in
 * production (refused at boot and here).
 */
export const DEV_ISSUER = 'strata-dev';
export const DEV_ISSUER_PREFIX = '/api/dev';
export const DEV_JWKS_PATH = `${DEV_ISSUER_PREFIX}/jwks.json`;
export const DEV_TOKEN_PATH = `${DEV_ISSUER_PREFIX}/token`;
/** The console's sign-in on the local stack: a token put in the access cookie, as the access proxy would. */
export const DEV_SESSION_PATH = `${DEV_ISSUER_PREFIX}/session`;

export const devTokenRequestSchema = z
  .object({
    email: z.string().email(),
    role: z.enum(STRATA_ROLES).default('restorer-admin'),
    groups: z.array(z.string().min(1).max(200)).max(100).optional(),
    ttlSeconds: z.number().int().min(60).max(86_400).default(43_200),
  })
  .strict();
export type DevTokenRequest = z.input<typeof devTokenRequestSchema>;

export interface DevIssuerOptions {
  /** The audience the gateway expects (the first of `STRATA_ACCESS_AUDIENCE`). */
  audience: string;
  /** Ed25519 private JWK; a fresh pair is generated when absent (tokens then die with the process). */
  privateJwk?: JWK;
  /** The deployment's `NODE_ENV` (from the gateway's configuration). `production` is refused. */
  nodeEnv: string | undefined;
  /** The access cookie the gateway reads (`STRATA_ACCESS_COOKIE`); `POST /api/dev/session` sets it. */
  cookieName?: string;
  /** Proxies in front whose `X-Forwarded-Proto` is believed: the cookie is `Secure` on a request that came over TLS. */
  trustedProxies?: number;
}

export interface DevIssuer {
  issuer: string;
  audience: string;
  /** The public key, with `kid`, `alg` and `use`. */
  publicJwk: JWK;
  /** What the Strata authenticator trusts besides its configured issuer. */
  trusted: TrustedIssuerKey;
  issue(request: DevTokenRequest): Promise<{ token: string; expiresAt: string }>;
  /** Serves `GET /api/dev/jwks.json` and `POST /api/dev/token`; every other `/api/dev` path is 404. */
  router: Router;
}

export async function createDevIssuer(options: DevIssuerOptions): Promise<DevIssuer> {
  if (options.nodeEnv === 'production') throw new Error('The Strata dev issuer cannot run with NODE_ENV=production.');
  if (!options.audience) throw new Error('The Strata dev issuer needs an audience.');

  let privateKey: CryptoKey;
  let publicBase: JWK;
  if (options.privateJwk) {
    const jwk = options.privateJwk;
    if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.d !== 'string' || typeof jwk.x !== 'string') {
      throw new Error('STRATA_DEV_ISSUER_KEY must be an Ed25519 private JWK (kty OKP, crv Ed25519, with d and x).');
    }
    privateKey = (await importJWK(jwk, 'EdDSA')) as CryptoKey;
    publicBase = { kty: 'OKP', crv: 'Ed25519', x: jwk.x };
  } else {
    const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    privateKey = pair.privateKey;
    const exported = await exportJWK(pair.publicKey);
    publicBase = { kty: exported.kty, crv: exported.crv, x: exported.x };
  }
  const kid = await calculateJwkThumbprint(publicBase);
  const publicJwk: JWK = { ...publicBase, kid, alg: 'EdDSA', use: 'sig' };
  const verifyKey = (await importJWK(publicJwk, 'EdDSA')) as CryptoKey;
  const jwksBody = JSON.stringify({ keys: [publicJwk] });

  async function issue(request: DevTokenRequest): Promise<{ token: string; expiresAt: string }> {
    const input = devTokenRequestSchema.parse(request);
    const role: StrataRole = input.role;
    const now = Math.floor(Date.now() / 1000);
    const exp = now + input.ttlSeconds;
    const groups = [...new Set([`strata:${role}`, ...(input.groups ?? [])])];
    const token = await new SignJWT({ email: input.email, groups })
      .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'JWT' })
      .setIssuer(DEV_ISSUER)
      .setAudience(options.audience)
      .setSubject(`dev:${input.email}`)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(exp)
      .sign(privateKey);
    return { token, expiresAt: new Date(exp * 1000).toISOString() };
  }

  const router = express.Router();
  router.get(DEV_JWKS_PATH, (_req, res) => {
    res.status(200).type('application/json').setHeader('cache-control', 'no-store');
    res.send(jwksBody);
  });
  /** The body of a token or session request, or an answer already sent (400). */
  const tokenRequestOf = (req: Request, res: Response): DevTokenRequest | undefined => {
    if (!req.is('application/json')) return void sendError(res, 400, 'The body must be JSON (content-type application/json).');
    const parsed = devTokenRequestSchema.safeParse(req.body);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    sendError(res, 400, `Invalid token request: ${where}${issue?.message ?? 'invalid'}.`);
  };
  router.post(DEV_TOKEN_PATH, express.json({ limit: '16kb' }), async (req: Request, res: Response, next: NextFunction) => {
    try {
      const request = tokenRequestOf(req, res);
      if (!request) return;
      res.status(200).type('application/json').setHeader('cache-control', 'no-store');
      res.send(JSON.stringify(await issue(request)));
    } catch (error) {
      next(error);
    }
  });
  // The token never reaches the page's scripts: HttpOnly, same site only (a cross-site form cannot ride on it).
  const cookieName = options.cookieName ?? DEFAULT_STRATA_CREDENTIAL_NAMES.cookie;
  const secure = (req: Request) => (isSecureRequest(req, options.trustedProxies ?? 0) ? '; Secure' : '');
  router.post(DEV_SESSION_PATH, express.json({ limit: '16kb' }), async (req: Request, res: Response, next: NextFunction) => {
    try {
      const request = tokenRequestOf(req, res);
      if (!request) return;
      const { token, expiresAt } = await issue(request);
      const maxAge = Math.round((Date.parse(expiresAt) - Date.now()) / 1000);
      res.setHeader('set-cookie', `${cookieName}=${token}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure(req)}`);
      res.status(200).type('application/json').setHeader('cache-control', 'no-store');
      res.send(JSON.stringify({ email: request.email, role: request.role ?? 'restorer-admin', expiresAt }));
    } catch (error) {
      next(error);
    }
  });
  router.delete(DEV_SESSION_PATH, (req, res) => {
    res.setHeader('set-cookie', `${cookieName}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict${secure(req)}`);
    res.status(204).end();
  });
  router.all([DEV_JWKS_PATH, DEV_TOKEN_PATH, DEV_SESSION_PATH], (req, res) => {
    const path = req.path.toLowerCase();
    res.setHeader('allow', path === DEV_TOKEN_PATH ? 'POST' : path === DEV_SESSION_PATH ? 'POST, DELETE' : 'GET, HEAD');
    sendError(res, 405, `${req.method} is not allowed on this path.`);
  });
  router.use((_req, res) => sendError(res, 404, 'No operation exists at this path.'));
  router.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = (error as { status?: unknown }).status;
    if (status === 413) return sendError(res, 413, 'The body is too large.');
    if (typeof status === 'number' && status >= 400 && status < 500) return sendError(res, 400, 'The body is not valid JSON.');
    sendError(res, 500, 'The dev issuer failed.');
  });

  return {
    issuer: DEV_ISSUER,
    audience: options.audience,
    publicJwk,
    trusted: { issuer: DEV_ISSUER, key: verifyKey },
    issue,
    router,
  };
}
