/** Helpers for service tests: real Postgres and NATS from the environment the test setup provisions. */
import { pino } from 'pino';
import { createLogger, type Logger } from './log.ts';
import { migrate, recreateDatabase } from './db/migrate.ts';
import { createPrincipalSigner, createPrincipalVerifier, generateInternalKeyPair, PRINCIPAL_HEADER, type Principal, type PrincipalSigner, type PrincipalVerifier } from './auth/principal.ts';
import { ROLE_PERMISSIONS } from './auth/permissions.ts';
import { newId } from './ids.ts';
import { createStrataPrincipalSigner, createStrataPrincipalVerifier, STRATA_PRINCIPAL_HEADER, type StrataPrincipalSigner, type StrataPrincipalVerifier } from './auth/strata-principal.ts';
import type { StrataPrincipal, StrataRole } from '@sigil/proto/strata';
import type { OrganizationEntitlements } from '@sigil/proto/internal-billing';

export function testPostgresAdminUrl(): string {
  return process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
}

export function testNatsUrl(): string {
  return process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
}

/** A fresh database with the service's migrations applied. */
export async function freshTestDatabase(name: string, migrationsDir: string): Promise<string> {
  const url = await recreateDatabase(testPostgresAdminUrl(), name);
  await migrate(url, migrationsDir);
  return url;
}

export interface TestAuth {
  sign: PrincipalSigner;
  verify: PrincipalVerifier;
  publicJwk: string;
  /** Headers carrying a signed principal, as the gateway would send them. */
  headers(principal: Principal): Promise<Record<string, string>>;
}

export async function createTestAuth(): Promise<TestAuth> {
  const keys = await generateInternalKeyPair();
  const sign = await createPrincipalSigner(keys.privateJwk);
  return {
    sign,
    verify: await createPrincipalVerifier(keys.publicJwk),
    publicJwk: JSON.stringify(keys.publicJwk),
    headers: async (principal) => ({ [PRINCIPAL_HEADER]: await sign(principal) }),
  };
}

export function apiKeyPrincipal(overrides: Partial<Principal> = {}): Principal {
  const apiKeyId = overrides.apiKeyId ?? newId('key');
  return {
    kind: 'api_key',
    organizationId: newId('org'),
    actorId: apiKeyId,
    apiKeyId,
    mode: 'test',
    permissions: ROLE_PERMISSIONS.member.slice(),
    ...overrides,
  };
}

export function sessionPrincipal(overrides: Partial<Principal> = {}): Principal {
  const userId = overrides.userId ?? newId('usr');
  return {
    kind: 'session',
    organizationId: newId('org'),
    actorId: userId,
    userId,
    sessionId: newId('ses'),
    role: 'owner',
    mode: 'live',
    permissions: ROLE_PERMISSIONS.owner.slice(),
    ...overrides,
  };
}

export const silentLogger = () => createLogger('test', process.env.TEST_LOG_LEVEL ?? 'silent');

/** A logger that keeps every line it writes, at every level: for tests that search what a service logged. */
export function capturingLogger(service = 'test'): { log: Logger; text: () => string } {
  const lines: string[] = [];
  return { log: pino({ name: service, level: 'trace' }, { write: (line: string) => void lines.push(line) }), text: () => lines.join('') };
}

export interface StrataTestAuth {
  publicJwk: string;
  /** The signing key as JSON (a service started as a process of its own signs its calls with it). */
  privateJwk: string;
  verify: StrataPrincipalVerifier;
  /** Headers carrying a signed Strata principal, as the gateway would send them. */
  headers(principal: StrataPrincipal): Promise<Record<string, string>>;
  /** Signs a principal with the same key (a service calling another as itself). */
  sign: StrataPrincipalSigner;
}

export async function createStrataTestAuth(): Promise<StrataTestAuth> {
  const keys = await generateInternalKeyPair();
  const sign = await createStrataPrincipalSigner(keys.privateJwk);
  return {
    publicJwk: JSON.stringify(keys.publicJwk),
    privateJwk: JSON.stringify(keys.privateJwk),
    verify: await createStrataPrincipalVerifier(keys.publicJwk),
    headers: async (principal) => ({ [STRATA_PRINCIPAL_HEADER]: await sign(principal) }),
    sign,
  };
}

export function strataPrincipal(role: StrataRole, overrides: Partial<StrataPrincipal> = {}): StrataPrincipal {
  return { id: `user:${role}`, email: `${role}@example.test`, role, groups: [`strata:${role}`], orgs: [], projects: [], service: false, ...overrides };
}

/** Rejects after `ms`: a test's waits stay bounded and say what they waited for. */
export function within<T>(promise: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A promise and the function that resolves it. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** What `roundTrip` needs of a WebSocket (the `ws` package's). */
export interface BinarySocket {
  on(event: 'message', listener: (data: Buffer | ArrayBuffer | Buffer[]) => void): unknown;
  off(event: 'message', listener: (data: Buffer | ArrayBuffer | Buffer[]) => void): unknown;
  send(data: Buffer, options: { binary: boolean }): void;
}

/** Sends `bytes` on a socket whose far end echoes, and resolves with as many bytes echoed back. */
export async function roundTrip(ws: BinarySocket, bytes: Buffer): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  const done = deferred<Buffer>();
  const onMessage = (data: Buffer | ArrayBuffer | Buffer[]) => {
    const chunk = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    chunks.push(chunk);
    length += chunk.length;
    if (length >= bytes.length) done.resolve(Buffer.concat(chunks));
  };
  ws.on('message', onMessage);
  ws.send(bytes, { binary: true });
  try {
    return await within(done.promise, 'the echoed bytes');
  } finally {
    ws.off('message', onMessage);
  }
}

/** The features of the spec's plans, for service tests that fake billing's entitlements. */
const TEST_PLAN_FEATURES = {
  free: { ssoConnections: 0, enforcedSso: false, scim: false, branding: false, signingLinks: false, viewersPerEnvelope: 1, viewerDocumentAccess: false, sms: false },
  team: { ssoConnections: 1, enforcedSso: false, scim: false, branding: true, signingLinks: true, viewersPerEnvelope: 5, viewerDocumentAccess: true, sms: true },
  business: { ssoConnections: 3, enforcedSso: true, scim: true, branding: true, signingLinks: true, viewersPerEnvelope: 20, viewerDocumentAccess: true, sms: true },
} as const;
export type TestPlan = keyof typeof TEST_PLAN_FEATURES;

/** An organization's entitlements on one of the spec's plans (Free, Team, Business), as billing would answer. */
export function testPlanEntitlements(organizationId: string, plan: TestPlan): OrganizationEntitlements {
  const paid = plan !== 'free';
  return {
    organizationId,
    plan,
    planName: plan[0]!.toUpperCase() + plan.slice(1),
    includedEnvelopes: { free: 100, team: 500, business: 2000 }[plan],
    overageAllowed: paid,
    features: { api: true, webhooks: true, embeddedSigning: true, testMode: true, auditLogExport: plan === 'business', euDataResidency: plan === 'business', whiteLabel: false, subAccounts: false, ...TEST_PLAN_FEATURES[plan] },
    periodStart: '2026-11-01T00:00:00.000Z',
    periodEnd: '2026-12-01T00:00:00.000Z',
    upgradeUrl: 'https://app.example.test/app/settings/billing',
  };
}

/** Entitlements a test sets per organization (`plans.set(orgId, 'business')`); unknown organizations are on `fallback`. */
export function testEntitlementsSource(fallback: TestPlan = 'free'): { plans: Map<string, TestPlan>; source: (organizationId: string) => Promise<OrganizationEntitlements> } {
  const plans = new Map<string, TestPlan>();
  return { plans, source: async (organizationId) => testPlanEntitlements(organizationId, plans.get(organizationId) ?? fallback) };
}
