import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger, strataPrincipal } from '@sigil/kit/testing';
import { startWorker, type Worker } from '@strata/mover';
import { measureLoad } from '@strata/mover/engines';
import { uniqueDatabaseName } from '@strata/mover/testing';
import { startCatalogHarness, type CatalogHarness } from '@strata/backup-catalog/testing';
import { createSources, dropSources, logicalTargetDocs, myAccess, newAgeIdentity, pgAccess } from './logical-targets.ts';
import { waitFor } from './wait.ts';

/**
 * The load guard for real, on both engines: a source with a transaction held open past `maxLongTransactionSeconds`
 * and idle connections over `maxActiveConnections` postpones a backup (phase Postponed, the limit and the measured
 * value in its message) by `postponeFor` on the catalog's clock; it is tried again once that passed, runs anyway after
 * `maxPostpones`, and `skipLoadGuard` (a Backup document, backup-now) bypasses it.
 */
const bucket = `strata-lg-${randomBytes(3).toString('hex')}`;
const pgDb = uniqueDatabaseName('lgp');
const myDb = uniqueDatabaseName('lgm');
const POSTPONE_MS = 10 * 60_000;
const GUARD = '  loadGuard: { maxActiveConnections: 3, maxLongTransactionSeconds: 1, maxPostpones: 2, postponeFor: 10m }\n';

let h: CatalogHarness;
let worker: Worker;
let now = new Date();

type Row = NonNullable<Awaited<ReturnType<CatalogHarness['runtime']['db']['backup']['findUnique']>>>;

/** Moves the catalog's clock and runs a scheduler pass (which queues postponed runs that are due). */
async function advance(ms: number): Promise<void> {
  now = new Date(now.getTime() + ms);
  h.setNow(now);
  await h.runtime.tick();
}

async function settled(name: string): Promise<Row> {
  return waitFor(`backup ${name}`, async () => {
    const row = await h.runtime.db.backup.findFirst({ where: { name } });
    return row && ['Postponed', 'Succeeded', 'Failed'].includes(row.phase) ? row : undefined;
  });
}

async function backupNow(target: string, query = ''): Promise<Row> {
  const res = await h.call('operator', 'post', `/api/v1/targets/default/${target}/backup-now${query}`, { reason: 'test' });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return settled(res.body.name);
}

/** A transaction held open and idle connections, on the target's database. */
interface Load {
  release(): Promise<void>;
}

/** Closes once, however often it is asked. */
function releaser(close: () => Promise<unknown>): Load {
  let closed: Promise<unknown> | undefined;
  return { release: async () => void (await (closed ??= close())) };
}

async function loadPostgres(): Promise<Load> {
  const connect = { host: pgAccess.host, port: pgAccess.port, user: pgAccess.username, password: pgAccess.password, database: pgDb };
  const clients = Array.from({ length: 5 }, () => new pg.Client(connect));
  await Promise.all(clients.map((c) => c.connect()));
  await clients[0]!.query('BEGIN');
  await clients[0]!.query('SELECT count(*) FROM customers');
  return releaser(() => Promise.all(clients.map((c) => c.end())));
}

async function loadMysql(): Promise<Load> {
  const connect = { host: myAccess.host, port: myAccess.port, user: myAccess.username, password: myAccess.password, database: myDb };
  const connections = await Promise.all(Array.from({ length: 5 }, () => mysql.createConnection(connect)));
  await connections[0]!.query('START TRANSACTION');
  await connections[0]!.query('SELECT COUNT(*) FROM customers FOR UPDATE');
  return releaser(() => Promise.all(connections.map((c) => c.end())));
}

/** Until the server no longer shows the closed sessions (a backend can outlive its client's goodbye by a moment). */
async function quiet(engine: 'postgres' | 'mysql'): Promise<void> {
  const [access, database] = engine === 'postgres' ? [pgAccess, pgDb] : [myAccess, myDb];
  await waitFor('the load to go', async () => {
    const load = await measureLoad({ ...access, engine }, [database]);
    return load.activeConnections === 0 && load.longestTransactionSeconds === 0 ? true : undefined;
  });
}

/** Until the held transaction is older than maxLongTransactionSeconds (1 s) on the server's clock. */
const olderThanTheLimit = () => new Promise((resolve) => setTimeout(resolve, 2500));

function warnings(row: Row): string[] {
  return ((row.manifest as { stats?: { warnings?: string[] } } | null)?.stats?.warnings ?? []).filter((w) => w.startsWith('load guard'));
}

function statsPostpones(row: Row): number | undefined {
  return (row.manifest as { stats?: { postpones?: number } } | null)?.stats?.postpones;
}

beforeAll(async () => {
  await createSources(pgDb, myDb);
  h = await startCatalogHarness('load_guard');
  h.setNow(now);
  worker = await startWorker({ bus: h.bus, log: silentLogger(), secretsKey: h.secretsKey, concurrency: 2, consumerPrefix: h.cell });
  const docs = logicalTargetDocs(bucket, newAgeIdentity('lg'), pgDb, myDb).replace('  jobs: { stallTimeout: 60s }\n', `  jobs: { stallTimeout: 60s }\n${GUARD}`);
  expect(docs).toContain('loadGuard');
  const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  await h.runtime.mirror(); // creates the bucket
}, 300_000);

afterAll(async () => {
  await worker?.stop();
  await h?.close();
  await dropSources(pgDb, myDb);
});

describe.each([
  { engine: 'postgres' as const, target: 'postgres-main', hold: loadPostgres },
  { engine: 'mysql' as const, target: 'mysql-main', hold: loadMysql },
])('$engine', ({ engine, target, hold }) => {
  let load: Load;

  beforeAll(async () => {
    load = await hold();
    await olderThanTheLimit();
  });

  afterAll(async () => {
    await load?.release();
  });

  it('postpones a busy source by postponeFor, naming each limit and the measured value', async () => {
    const asked = now;
    const row = await backupNow(target);
    expect(row.phase, row.message).toBe('Postponed');
    expect(row.message).toMatch(/a transaction open for \d+ s \(maxLongTransactionSeconds 1\)/);
    expect(row.message).toMatch(/[4-9] connections open to the target's databases \(maxActiveConnections 3\)/);
    expect(row.postpones).toBe(1);
    expect(row.postponedUntil?.getTime()).toBe(asked.getTime() + POSTPONE_MS);
    const targetDoc = await h.call('viewer', 'get', `/api/v1/targets/default/${target}`);
    const scheduled = (targetDoc.body.status.conditions as Array<{ type: string; status: string; reason: string; message: string }>).find((c) => c.type === 'Scheduled');
    expect(scheduled).toMatchObject({ status: 'False', reason: 'Postponed' });
    expect(scheduled?.message).toContain('maxLongTransactionSeconds 1');
    const docs = await h.call('viewer', 'get', '/api/v1/resources?kind=Backup');
    const doc = (docs.body.resources as Array<{ metadata: { name: string }; status: Record<string, unknown> }>).find((d) => d.metadata.name === row.name);
    expect(doc?.status).toMatchObject({ phase: 'Postponed', postpones: 1, postponedUntil: row.postponedUntil?.toISOString() });
  });

  it('tries again only once postponeFor passed, and runs anyway after maxPostpones, saying so', async () => {
    const first = await h.runtime.db.backup.findFirstOrThrow({ where: { targetName: target, phase: 'Postponed' } });
    await advance(POSTPONE_MS / 2);
    expect((await h.runtime.db.backup.findUniqueOrThrow({ where: { id: first.id } })).phase).toBe('Postponed');
    await advance(POSTPONE_MS / 2);
    const second = await settled(first.name);
    expect(second.phase, second.message).toBe('Postponed');
    expect(second.postpones).toBe(2);
    await advance(POSTPONE_MS);
    const ran = await waitFor('the run after maxPostpones', async () => {
      const row = await h.runtime.db.backup.findUniqueOrThrow({ where: { id: first.id } });
      return ['Succeeded', 'Failed'].includes(row.phase) ? row : undefined;
    });
    expect(ran.phase, ran.message).toBe('Succeeded');
    expect(statsPostpones(ran)).toBe(2);
    expect(warnings(ran)).toEqual([expect.stringMatching(/^load guard: ran anyway after 2 postponements \(maxPostpones 2\): .*maxLongTransactionSeconds 1/)]);
  });

  it('skipLoadGuard on a Backup document runs at once, without measuring', async () => {
    const name = `${target}-skip-${randomBytes(2).toString('hex')}`;
    const doc = `apiVersion: backups.strata.dev/v1alpha1\nkind: Backup\nmetadata: { name: ${name}, namespace: default }\nspec: { target: ${target}, skipLoadGuard: true }`;
    const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', doc, 'application/yaml');
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    await h.runtime.tick();
    const row = await settled(name);
    expect(row.phase, row.message).toBe('Succeeded');
    expect(row.postpones).toBe(0);
    expect(row.skipLoadGuard).toBe(true);
    expect(warnings(row)).toEqual([]);
  });

  it('backup-now with skipLoadGuard runs a postponed run now', async () => {
    const postponed = await backupNow(target);
    expect(postponed.phase, postponed.message).toBe('Postponed');
    const action = await h.runtime.deps.targets.backupNow(strataPrincipal('operator'), 'default', target, 'now, whatever the load', { skipLoadGuard: true });
    expect(action.name).toBe(postponed.name);
    const ran = await waitFor('the skipped run', async () => {
      const row = await h.runtime.db.backup.findUniqueOrThrow({ where: { id: postponed.id } });
      return ['Succeeded', 'Failed'].includes(row.phase) ? row : undefined;
    });
    expect(ran.phase, ran.message).toBe('Succeeded');
    expect(statsPostpones(ran)).toBe(1);
    expect(warnings(ran)).toEqual([]);
  });

  it('a postponed run goes ahead once the load is gone', async () => {
    const postponed = await backupNow(target);
    expect(postponed.phase, postponed.message).toBe('Postponed');
    await load.release();
    await quiet(engine);
    await advance(POSTPONE_MS);
    const ran = await waitFor('the run after the load went', async () => {
      const row = await h.runtime.db.backup.findUniqueOrThrow({ where: { id: postponed.id } });
      return ['Succeeded', 'Failed'].includes(row.phase) ? row : undefined;
    });
    expect(ran.phase, ran.message).toBe('Succeeded');
    expect(statsPostpones(ran)).toBe(1);
    expect(warnings(ran)).toEqual([]);
    const targetDoc = await h.call('viewer', 'get', `/api/v1/targets/default/${target}`);
    const scheduled = (targetDoc.body.status.conditions as Array<{ type: string; status: string; reason: string }>).find((c) => c.type === 'Scheduled');
    expect(scheduled).toMatchObject({ status: 'True', reason: 'RunStarted' });
  });
});
