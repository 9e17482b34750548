import type { CacheItem, CacheProvider } from '@node-saml/node-saml';
import type { Db, Tx } from '../db.ts';
import { randomToken, sha256Hex } from '../tokens.ts';

/** How long a login may take at the IdP: the state, the SAML request id and the OIDC checks expire then. */
export const LOGIN_STATE_SECONDS = 10 * 60;

export type LoginPurpose = 'sign_in' | 'test';

export interface NewLoginState {
  connectionId: string;
  purpose: LoginPurpose;
  testId?: string;
  samlRequestId?: string;
  codeVerifier?: string;
  nonce?: string;
  /** browser-binding.ts */
  browserHash: string;
  /** A sign-in's dashboard path to land on (return-path.ts). */
  returnTo?: string;
}

/**
 * A login in flight, stored server side and keyed by the SHA-256 of its random `state` (OIDC `state`, SAML
 * `RelayState`): the browser carries only the token, which names nothing and is good for one callback.
 */
export async function createLoginState(db: Db | Tx, input: NewLoginState, now: Date): Promise<string> {
  const state = randomToken();
  await db.ssoLoginState.create({
    data: { stateHash: sha256Hex(state), ...input, expiresAt: new Date(now.getTime() + LOGIN_STATE_SECONDS * 1000) },
  });
  return state;
}

export type LoginState = NonNullable<Awaited<ReturnType<Db['ssoLoginState']['findUnique']>>>;

export type Consumed = { ok: true; login: LoginState } | { ok: false; login: LoginState | null; why: 'unknown' | 'expired' | 'used' };

/** Claims a state once: a second callback with it (a replayed response, a reused link) finds it used. */
export async function consumeLoginState(db: Db, state: string | undefined, now: Date): Promise<Consumed> {
  if (!state || state.length > 200) return { ok: false, login: null, why: 'unknown' };
  const stateHash = sha256Hex(state);
  const claimed = await db.ssoLoginState.updateMany({ where: { stateHash, consumedAt: null, expiresAt: { gt: now } }, data: { consumedAt: now } });
  const login = await db.ssoLoginState.findUnique({ where: { stateHash } });
  if (claimed.count === 1 && login) return { ok: true, login };
  if (!login) return { ok: false, login: null, why: 'unknown' };
  return { ok: false, login, why: login.consumedAt ? 'used' : 'expired' };
}

/**
 * node-saml's request-id cache in Postgres, so the replica (or the restarted process) that receives the IdP's POST
 * knows the AuthnRequest another one sent. Entries older than the request lifetime are purged by `purgeExpired`.
 */
export class PostgresSamlCache implements CacheProvider {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async saveAsync(key: string, value: string): Promise<CacheItem | null> {
    const row = await this.db.ssoSamlRequest.upsert({ where: { id: key }, create: { id: key, value }, update: {} });
    return row.value === value ? { value, createdAt: row.createdAt.getTime() } : null;
  }

  async getAsync(key: string): Promise<string | null> {
    const row = await this.db.ssoSamlRequest.findUnique({ where: { id: key } });
    return row?.value ?? null;
  }

  async removeAsync(key: string | null): Promise<string | null> {
    if (!key) return null;
    const row = await this.db.ssoSamlRequest.findUnique({ where: { id: key } });
    await this.db.ssoSamlRequest.deleteMany({ where: { id: key } });
    return row?.value ?? null;
  }
}

/**
 * Remembers an assertion id until it expires; false when it was seen before (a replay). The id is namespaced by the
 * IdP's entity id, since ids are only unique per issuer.
 */
export async function firstUseOfAssertion(db: Db, issuer: string, assertionId: string, expiresAt: Date): Promise<boolean> {
  const rows = await db.$queryRawUnsafe<{ id: string }[]>(
    `INSERT INTO sso_assertions (id, expires_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id`,
    sha256Hex(`${issuer}\n${assertionId}`),
    expiresAt,
  );
  return rows.length === 1;
}

/** Housekeeping: login states, SAML request ids and assertion ids whose time is over. */
export async function purgeExpiredSsoState(db: Db, now: Date): Promise<number> {
  const states = await db.ssoLoginState.deleteMany({ where: { expiresAt: { lt: now } } });
  const requests = await db.ssoSamlRequest.deleteMany({ where: { createdAt: { lt: new Date(now.getTime() - LOGIN_STATE_SECONDS * 1000) } } });
  const assertions = await db.ssoAssertion.deleteMany({ where: { expiresAt: { lt: now } } });
  return states.count + requests.count + assertions.count;
}
