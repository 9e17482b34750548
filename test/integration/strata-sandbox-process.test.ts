import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshTestDatabase, silentLogger, strataPrincipal, testNatsUrl, testPostgresAdminUrl } from '@sigil/kit/testing';
import type { StrataRole } from '@sigil/proto/strata';
import { startWorker, type Worker } from '@strata/mover';
import { generateAgeIdentity } from '@strata/stream';
import { accessFromUrl, createPostgresFixture, dropPostgresDatabase, uniqueDatabaseName } from '@strata/mover/testing';
import { stackDocuments, startCatalogHarness, type CatalogHarness } from '@strata/backup-catalog/testing';
import { serve, type SandboxView } from '@strata/sandbox/testing';
import { waitFor } from './wait.ts';

/**
 * The sandbox service as the process it is in production (`services/sandbox/src/main.ts`), killed with SIGKILL and
 * started again: a sandbox that fell due while it was down is expired by the new process's first passes, and one that
 * did not is adopted with its server still running. The catalog and a mover run in this process.
 */
const repoRoot = path.resolve(import.meta.dirname, '../..');
const pgAdmin = testPostgresAdminUrl();
const pgSource = accessFromUrl(pgAdmin);
const sourceDb = uniqueDatabaseName('sbxproc');

let h: CatalogHarness;
let worker: Worker;
let catalogServer: { url: string; close(): Promise<void> };
let databaseUrl: string;
let baseDir: string;
let service: { child: ChildProcess; url: string; output: string[] } | undefined;

async function startService(): Promise<NonNullable<typeof service>> {
  const listenFile = path.join(baseDir, `listen-${randomBytes(3).toString('hex')}.url`);
  const child = spawn(process.execPath, [path.join(repoRoot, 'services/sandbox/src/main.ts')], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: '0', LISTEN_URL_FILE: listenFile, LOG_LEVEL: 'warn',
      DATABASE_URL: databaseUrl, NATS_URL: testNatsUrl(), CONSUMER_PREFIX: h.cell,
      INTERNAL_JWT_PUBLIC_KEY: h.auth.publicJwk, INTERNAL_JWT_PRIVATE_KEY: h.auth.privateJwk,
      STRATA_SECRETS_KEY: h.secretsKey.toString('base64'), BACKUP_CATALOG_URL: catalogServer.url,
      SANDBOX_DIR: path.join(baseDir, 'servers'), SANDBOX_INTERVAL_MS: '200',
    },
  });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const url = await waitFor('the sandbox service to listen', async () => {
    if (child.exitCode !== null) throw new Error(`the sandbox service exited ${child.exitCode}: ${output.join('')}`);
    const address = existsSync(listenFile) ? readFileSync(listenFile, 'utf8').trim() : '';
    if (!address) return undefined;
    const ready = await fetch(`${address}/readyz`).catch(() => undefined);
    return ready?.ok ? address : undefined;
  }, 60_000);
  return { child, url, output };
}

async function kill(running: NonNullable<typeof service>): Promise<void> {
  const exited = new Promise((resolve) => running.child.once('exit', resolve));
  running.child.kill('SIGKILL');
  await exited;
}

async function call(role: StrataRole, method: 'GET' | 'POST', url: string, body?: unknown) {
  const res = await fetch(`${service?.url}${url}`, {
    method,
    headers: { ...(await h.auth.headers(strataPrincipal(role))), ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as { name?: string; sandbox?: SandboxView; rows?: string[][]; error?: string } };
}

const sandboxIn = (name: string, phases: string[]) =>
  waitFor(`sandbox ${name} in ${phases.join(' or ')}`, async () => {
    const res = await call('viewer', 'GET', `/api/v1/sandboxes/${name}`);
    return res.body.sandbox && phases.includes(res.body.sandbox.phase) ? res.body.sandbox : undefined;
  }, 180_000);

async function sandboxRow(name: string): Promise<{ runtime: { dir: string; pid: number; port: number } }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query('SELECT runtime FROM sandboxes WHERE name = $1', [name])).rows[0];
  } finally {
    await client.end();
  }
}

async function customersAtSource(): Promise<number> {
  const client = new pg.Client({ connectionString: pgAdmin.replace(/\/[^/]*$/, `/${sourceDb}`) });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM customers')).rows[0]?.n);
  } finally {
    await client.end();
  }
}

const running = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  const { identity, recipient } = await generateAgeIdentity();
  await createPostgresFixture(pgAdmin, sourceDb, { rows: 20 });
  h = await startCatalogHarness('sandbox_process');
  catalogServer = await serve(h.app);
  worker = await startWorker({ bus: h.bus, log: silentLogger(), secretsKey: h.secretsKey, concurrency: 2, consumerPrefix: h.cell });
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'sbx-process-'));
  databaseUrl = await freshTestDatabase('strata_sandbox_test_process', path.join(repoRoot, 'prisma/sandbox/migrations'));
  const docs = stackDocuments({
    bucket: `strata-sbxproc-${randomBytes(3).toString('hex')}`, recipients: [recipient], identity,
    postgres: { host: '127.0.0.1', port: pgSource.port, username: pgSource.username, password: pgSource.password },
    databases: { postgres: [sourceDb] }, postgresMode: 'logical', policySandbox: { defaultTTL: '2h', maxTTL: '6h' },
  });
  const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  await h.runtime.mirror();
  const backup = await h.call('operator', 'post', '/api/v1/targets/default/postgres-main/backup-now', { reason: 'process test' });
  const row = await waitFor('the backup', async () => {
    const found = await h.runtime.db.backup.findFirst({ where: { name: backup.body.name } });
    return found && ['Succeeded', 'Failed'].includes(found.phase) ? found : undefined;
  });
  expect(row.phase, row.message).toBe('Succeeded');
  service = await startService();
}, 300_000);

afterAll(async () => {
  if (service) await kill(service);
  // The servers a failed run left behind belong to this test only.
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect().then(async () => {
    const rows = (await client.query(`SELECT runtime FROM sandboxes`)).rows as Array<{ runtime: { pid?: number } }>;
    for (const { runtime } of rows) if (runtime.pid && running(runtime.pid)) process.kill(runtime.pid, 'SIGTERM');
  }).finally(() => client.end()).catch(() => undefined);
  await worker?.stop();
  await catalogServer?.close();
  await h?.close();
  await dropPostgresDatabase(pgAdmin, sourceDb);
  if (baseDir) rmSync(baseDir, { recursive: true, force: true });
});

describe('the sandbox service killed and started again', () => {
  it('expires what fell due while it was down, and adopts the server of a sandbox that did not', async () => {
    const names: string[] = [];
    for (let i = 0; i < 2; i++) {
      const created = await call('restorer', 'POST', '/api/v1/sandboxes', { target: 'default/postgres-main', mode: 'sandbox' });
      expect(created.status, JSON.stringify(created.body)).toBe(202);
      names.push(created.body.name as string);
    }
    const [due, kept] = names as [string, string];
    for (const name of names) expect((await sandboxIn(name, ['Ready', 'Failed'])).phase).toBe('Ready');
    const dueServer = (await sandboxRow(due)).runtime;
    const keptServer = (await sandboxRow(kept)).runtime;

    await kill(service as NonNullable<typeof service>);
    service = undefined;
    // Servers are detached from the service: they outlive it.
    expect(running(dueServer.pid) && running(keptServer.pid)).toBe(true);
    // While nobody watches, one sandbox falls due.
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`UPDATE sandboxes SET expires_at = now() - interval '1 second' WHERE name = $1`, [due]);
    await client.end();

    service = await startService();
    const expired = await sandboxIn(due, ['Expired']);
    expect(expired.message).toMatch(/^expired at .*; its server was stopped and its data wiped$/);
    await waitFor('the expired server to stop', async () => (running(dueServer.pid) ? undefined : true));
    expect(existsSync(dueServer.dir)).toBe(false);

    // The other one was adopted as it ran: same server, still answering with its data.
    const adopted = await sandboxIn(kept, ['Ready']);
    expect((await sandboxRow(kept)).runtime.pid).toBe(keptServer.pid);
    expect(adopted.port).toBe(keptServer.port);
    const query = await call('restorer', 'POST', `/api/v1/sandboxes/${kept}/query`, { sql: 'SELECT count(*) AS n FROM customers' });
    expect(query.status, JSON.stringify(query.body)).toBe(200);
    expect(query.body.rows).toEqual([[String(await customersAtSource())]]);

    const extended = await call('restorer', 'POST', `/api/v1/sandboxes/${kept}/extend`, { by: '1h' });
    expect(extended.status).toBe(200);
    const deleted = await fetch(`${service.url}/api/v1/sandboxes/${kept}`, { method: 'DELETE', headers: await h.auth.headers(strataPrincipal('restorer')) });
    expect(deleted.status).toBe(200);
    await waitFor('the kept server to stop once deleted', async () => (running(keptServer.pid) ? undefined : true));
  }, 300_000);
});
