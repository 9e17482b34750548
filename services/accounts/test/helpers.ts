import path from 'node:path';
import { createHash } from 'node:crypto';
import type { Express } from 'express';
import request from 'supertest';
import { SIGIL } from '@sigil/proto';
import { createTestAuth, freshTestDatabase, silentLogger, testEntitlementsSource, type TestAuth, type TestPlan } from '@sigil/kit/testing';
import { createEntitlementsCache, type EntitlementsCache } from '@sigil/kit/entitlements';
import type { Principal } from '@sigil/kit/auth';
import { createApp } from '../src/app.ts';
import { createPasswordHasher } from '../src/passwords.ts';
import type { SsoOptions } from '../src/sso/handlers.ts';

/** argon2id at the smallest cost: tests check behaviour, not the work factor (passwords.test.ts checks production's). */
export const cheapPasswords = createPasswordHasher({ memory: 64, passes: 1, parallelism: 1 });
import { createDb, type Db } from '../src/db.ts';
import type { AuthenticateResponse } from '@sigil/proto/internal-auth';

export const migrationsDir = path.resolve(import.meta.dirname, '../../../prisma/accounts/migrations');

export interface Harness {
  app: Express;
  db: Db;
  /** For what connects on its own (the outbox relay). */
  databaseUrl: string;
  auth: TestAuth;
  /** Each organization's plan (`plans.set(orgId, 'business')`); Free unless set. Read afresh on every call. */
  plans: Map<string, TestPlan>;
  close(): Promise<void>;
}

/** Entitlements answered by a test's own plan table (Free unless set). */
export async function testEntitlements(): Promise<{ plans: Map<string, TestPlan>; entitlements: EntitlementsCache }> {
  const { plans, source } = testEntitlementsSource();
  return { plans, entitlements: await createEntitlementsCache({ source, ttlMs: 0 }) };
}

/** One fresh database per test file (`sigil_accounts_test_<name>`), so files run in parallel. */
export async function createHarness(name: string, options: { clock?: () => Date; publicUrl?: string; sso?: SsoOptions } = {}): Promise<Harness> {
  const url = await freshTestDatabase(`sigil_accounts_test_${name}`, migrationsDir);
  const db = createDb(url);
  const auth = await createTestAuth();
  const { plans, entitlements } = await testEntitlements();
  const { app } = await createApp({ db, log: silentLogger(), verifyPrincipal: auth.verify, passwords: cheapPasswords, clock: options.clock, entitlements, publicUrl: options.publicUrl ?? 'http://127.0.0.1:8080', sso: options.sso });
  return { app, db, databaseUrl: url, auth, plans, close: () => db.$disconnect() };
}

export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

export const gatewayPrincipal: Principal = {
  kind: 'service',
  organizationId: 'org_platform0000',
  actorId: 'gateway',
  mode: 'live',
  permissions: [],
};

let counter = 0;
/** A distinct client address per call, so attempt limits of one test do not leak into another. */
export function freshIp(): string {
  counter += 1;
  return `10.${(counter >> 16) & 255}.${(counter >> 8) & 255}.${counter & 255}`;
}

export function uniqueEmail(tag = 'user'): string {
  return `${tag}.${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}@example.com`;
}

export const PASSWORD = 'correct horse battery staple';

/** The `Set-Cookie` header of the session cookie. */
export function cookieOf(res: request.Response): string {
  const header = res.headers['set-cookie'] as unknown;
  const cookies = Array.isArray(header) ? (header as string[]) : typeof header === 'string' ? [header] : [];
  const cookie = cookies.find((c) => c.startsWith(`${SIGIL.sessionCookie}=`));
  if (!cookie) throw new Error(`no session cookie in ${JSON.stringify(res.headers)}`);
  return cookie;
}

/** The session token from a `Set-Cookie` response header. */
export function sessionTokenOf(res: request.Response): string {
  return cookieOf(res).slice(SIGIL.sessionCookie.length + 1).split(';')[0] as string;
}

export async function authenticate(h: Harness, body: object): Promise<AuthenticateResponse> {
  const res = await request(h.app).post('/internal/v1/authenticate').set(await h.auth.headers(gatewayPrincipal)).send(body);
  if (res.status !== 200) throw new Error(`authenticate: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as AuthenticateResponse;
}

/** What the gateway does with a session cookie: look it up, then forward the principal as a signed header. */
export async function sessionHeaders(h: Harness, token: string): Promise<Record<string, string>> {
  const result = await authenticate(h, { type: 'session', tokenHash: sha256(token) });
  if (!result.principal) throw new Error(`session not valid: ${result.reason}`);
  return h.auth.headers(result.principal);
}

export interface SignedUp {
  token: string;
  headers: Record<string, string>;
  organizationId: string;
  userId: string;
  email: string;
}

export async function signUp(h: Harness, overrides: Record<string, string> = {}): Promise<SignedUp> {
  const email = overrides.email ?? uniqueEmail('owner');
  const res = await request(h.app)
    .post('/v1/auth/sign-up')
    .set('x-forwarded-for', freshIp())
    .send({ organizationName: 'Acme', name: 'Ada Owner', email, password: PASSWORD, ...overrides });
  if (res.status !== 201) throw new Error(`sign-up: ${res.status} ${JSON.stringify(res.body)}`);
  const token = sessionTokenOf(res);
  return { token, headers: await sessionHeaders(h, token), organizationId: res.body.organization.id, userId: res.body.user.id, email };
}

export interface OutboxRow {
  subject: string;
  payload: { type: string; organizationId: string; data: Record<string, unknown> };
}

export async function outbox(h: Harness, type: string, organizationId?: string): Promise<OutboxRow[]> {
  const rows = await h.db.$queryRawUnsafe<OutboxRow[]>(
    `SELECT subject, payload FROM outbox_events WHERE payload->>'type' = $1 ORDER BY created_at, id`,
    type,
  );
  return organizationId ? rows.filter((r) => r.payload.organizationId === organizationId) : rows;
}
