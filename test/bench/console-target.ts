// The console bench's target, through the API as a person sets one up: a dev session (the access cookie), a store in
// the stack's S3, a policy with change capture and no retention rule (nothing expires while the bench runs), a
// Postgres target of the stack's own server (its demo database), then ONE real backup taken with backup-now.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Stack } from '@sigil/local-stack';
import { generateAgeIdentity } from '@strata/stream/age';

export const TARGET = { namespace: 'default', name: 'postgres' } as const;
export const BUCKET = 'console-bench';

export interface Target {
  namespace: string;
  name: string;
}

/** A dev-issuer session for the role: the access cookie (`CF_Authorization=<token>`), as the console's sign-in sets it. */
export async function devSession(gatewayUrl: string, role: 'viewer' | 'restorer-admin'): Promise<string> {
  const res = await fetch(`${gatewayUrl}/api/dev/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `console-bench-${role}@example.test`, role }) });
  if (res.status !== 200) throw new Error(`POST /api/dev/session answered ${res.status}: ${await res.text()}`);
  const cookie = res.headers.getSetCookie()[0]?.split(';')[0];
  if (!cookie) throw new Error('POST /api/dev/session set no cookie');
  return cookie;
}

type Api = (method: string, url: string, body?: unknown) => Promise<Record<string, unknown>>;

function apiOf(gatewayUrl: string, cookie: string): Api {
  return async (method, url, body) => {
    const res = await fetch(`${gatewayUrl}/api/v1${url}`, { method, headers: { cookie, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${method} /api/v1${url}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
}

/** What `strata quickstart` reads of the stack (its stack.json): here, the demo database the target backs up. */
async function demoDatabase(stateDir: string): Promise<string> {
  const facts = JSON.parse(await readFile(path.join(stateDir, 'stack.json'), 'utf8')) as { postgres: { demoDatabase?: string } };
  if (!facts.postgres.demoDatabase) throw new Error("the stack's Postgres holds no demo database (is POSTGRES_URL set? the bench needs the stack's own server)");
  return facts.postgres.demoDatabase;
}

/** The resources, as `POST /api/v1/resources` takes them (quickstart's, for Postgres only). */
async function documents(stack: Stack, stateDir: string): Promise<object[]> {
  const metadata = (name: string) => ({ name, namespace: TARGET.namespace });
  const server = new URL(stack.infra.postgres.adminUrl);
  const { identity, recipient } = await generateAgeIdentity();
  return [
    { apiVersion: 'v1', kind: 'Secret', metadata: metadata('bench-s3'), stringData: { accessKeyId: stack.infra.s3.accessKey, secretAccessKey: stack.infra.s3.secretKey } },
    { apiVersion: 'v1', kind: 'Secret', metadata: metadata('bench-age'), stringData: { identity } },
    { apiVersion: 'v1', kind: 'Secret', metadata: metadata('postgres-credentials'), stringData: { username: decodeURIComponent(server.username), password: decodeURIComponent(server.password) } },
    {
      apiVersion: 'backups.strata.dev/v1alpha1',
      kind: 'BackupStore',
      metadata: metadata('local'),
      // The bench's S3 is s3rver: no conditional writes.
      spec: { s3: { endpoint: stack.infra.s3.endpoint, region: stack.infra.s3.region, bucket: BUCKET, pathStyle: true, disableConditionalPut: true, credentialsSecret: { name: 'bench-s3' } }, encryption: { ageRecipients: [recipient], identitySecret: { name: 'bench-age' } } },
    },
    // No `retain`: every backup is kept (retention would otherwise expire most of the 2,000 while the bench runs).
    // The partial interval is the default (60 s; quickstart's 10 s would renew the chain six times as often).
    { apiVersion: 'backups.strata.dev/v1alpha1', kind: 'BackupPolicy', metadata: metadata('nightly'), spec: { store: 'local', full: { schedule: '0 3 * * *' }, pitr: { enabled: true } } },
    {
      apiVersion: 'backups.strata.dev/v1alpha1',
      kind: 'BackupTarget',
      metadata: metadata(TARGET.name),
      spec: { engine: 'postgres', endpoint: { host: server.hostname, port: Number(server.port) }, databases: [await demoDatabase(stateDir)], credentials: { secretRef: { name: 'postgres-credentials' } }, policy: 'nightly' },
    },
  ];
}

/** Applies the resources, waits until the target may replicate (so its backup is physical), takes one backup. */
export async function targetWithOneBackup(stack: Stack, stateDir: string, adminCookie: string): Promise<{ backupId: string; seconds: number }> {
  const api = apiOf(stack.gatewayUrl, adminCookie);
  await api('POST', '/resources', await documents(stack, stateDir));
  await waitFor('the target to be checked for replication (change capture on)', 120_000, async () => ((await api('GET', `/targets/${TARGET.namespace}/${TARGET.name}`)).target as { pitr?: boolean }).pitr === true);
  const started = performance.now();
  await api('POST', `/targets/${TARGET.namespace}/${TARGET.name}/backup-now`, { reason: 'console bench' });
  let backup: { id: string; phase: string; mode?: string; error?: string } | undefined;
  await waitFor('the backup to finish', 600_000, async () => {
    backup = ((await api('GET', `/targets/${TARGET.namespace}/${TARGET.name}/backups?limit=5`)).backups as Array<typeof backup>)[0];
    return backup?.phase === 'Succeeded' || backup?.phase === 'Failed';
  });
  if (backup?.phase !== 'Succeeded') throw new Error(`the backup did not succeed: ${JSON.stringify(backup)}`);
  return { backupId: backup.id, seconds: (performance.now() - started) / 1000 };
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** Suspends the target: no scheduled runs, and its change-log streamer is stopped (the history stays as it is). */
export async function suspendTarget(gatewayUrl: string, adminCookie: string): Promise<void> {
  await apiOf(gatewayUrl, adminCookie)('POST', `/targets/${TARGET.namespace}/${TARGET.name}/suspend`, {});
}
