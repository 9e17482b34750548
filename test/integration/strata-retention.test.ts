import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@sigil/kit/testing';
import { startPostgres, type PostgresHandle } from '@sigil/local-stack';
import { startWorker, type Worker } from '@strata/mover';
import { createS3Client, listKeys } from '@strata/stream';
import { s3Env, stackDocuments, startCatalogHarness, type CatalogHarness } from '@strata/backup-catalog/testing';
import { waitFor } from './wait.ts';

/**
 * Retention and garbage collection for real (issue 25): a Postgres server of its own streaming WAL into the test S3
 * store, three physical fulls under `retain: { daily: 1 }`, one of them pinned. The rules keep the newest full of the
 * day, the pin keeps another; the rest and the change log only it needed expire, garbage collection deletes exactly
 * their objects, the store then holds only what the catalog lists, and a restore inside the kept window is exact.
 */
const bucket = `strata-retention-${randomBytes(3).toString('hex')}`;
const stateDir = mkdtempSync(path.join(tmpdir(), 'strata-retention-'));
const TARGET = 'default/postgres-main';
let server: PostgresHandle;
let admin: pg.Client;
let h: CatalogHarness;
let worker: Worker;
let ticker: NodeJS.Timeout;
let docs: string;
const restored: string[] = [];
const written: Array<{ id: number; startedAt: number; committedAt: number }> = [];
let writing = true;
let writer: Promise<void>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const s3 = () => createS3Client({ ...s3Env(), accessKeyId: s3Env().accessKey, secretAccessKey: s3Env().secretKey, pathStyle: true });

async function write(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  let n = 0;
  while (writing) {
    const startedAt = Date.now();
    const { rows } = await client.query<{ id: number }>('INSERT INTO events (note) VALUES ($1) RETURNING id', [`row ${n}`]);
    written.push({ id: rows[0]!.id, startedAt, committedAt: Date.now() });
    if (++n % 25 === 0) await client.query('SELECT pg_switch_wal()');
    await sleep(50);
  }
  await client.end();
}

async function fullBackup(reason: string) {
  const res = await h.call('operator', 'post', `/api/v1/targets/${TARGET}/backup-now`, { reason });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const row = await waitFor(`backup ${reason}`, async () => {
    const found = await h.runtime.db.backup.findFirst({ where: { name: res.body.name } });
    return found && (found.phase === 'Succeeded' || found.phase === 'Failed') ? found : undefined;
  });
  expect(row.phase, row.message).toBe('Succeeded');
  return row;
}

async function backupView(id: string) {
  return (await h.call('viewer', 'get', `/api/v1/backups/${id}`)).body.backup;
}

async function targetView() {
  return (await h.call('viewer', 'get', `/api/v1/targets/${TARGET}`)).body.target;
}

async function bucketKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of listKeys(s3(), bucket, 'strata/')) keys.push(key);
  return keys.sort();
}

/** Every object the catalog knows a kept backup or a segment by (manifests, data, inventories, segments, reports). */
async function catalogKeys(): Promise<Set<string>> {
  const keys = new Set<string>();
  for (const backup of await h.runtime.db.backup.findMany({ where: { phase: 'Succeeded' } })) {
    const manifest = backup.manifest as { objects?: Array<{ key: string }> };
    keys.add(backup.manifestKey!);
    for (const object of manifest.objects ?? []) keys.add(object.key);
  }
  for (const segment of await h.runtime.db.segment.findMany()) {
    keys.add(segment.key);
    keys.add(`${segment.key}.json`);
  }
  return keys;
}

async function idsIn(database: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: server.adminUrl.replace(/\/postgres$/, `/${database}`) });
  await client.connect();
  try {
    return (await client.query<{ id: number }>('SELECT id FROM events ORDER BY id')).rows.map((r) => r.id);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  server = await startPostgres({ stateDir, env: process.env, durable: false, log: () => {} });
  admin = new pg.Client({ connectionString: server.adminUrl });
  admin.on('error', () => {});
  await admin.connect();
  await admin.query('CREATE DATABASE shop');
  const shop = new pg.Client({ connectionString: server.adminUrl.replace(/\/postgres$/, '/shop') });
  await shop.connect();
  await shop.query('CREATE TABLE events (id serial PRIMARY KEY, note text NOT NULL)');
  await shop.end();
  const dir = mkdtempSync(path.join(tmpdir(), 'strata-age-'));
  execFileSync('age-keygen', ['-o', path.join(dir, 'identity.txt')], { stdio: 'ignore' });
  const identity = readFileSync(path.join(dir, 'identity.txt'), 'utf8');
  const recipient = execFileSync('age-keygen', ['-y', path.join(dir, 'identity.txt')]).toString().trim();
  rmSync(dir, { recursive: true, force: true });
  // Garbage is collected as soon as it expires: the test's objects are seconds old (the store runs on this machine's clock).
  h = await startCatalogHarness('retention', { config: { GC_SKEW_MARGIN_MS: 0 } });
  worker = await startWorker({ bus: h.bus, log: silentLogger(), secretsKey: h.secretsKey, concurrency: 2, consumerPrefix: h.cell, retryDelaysMs: [500, 1000] });
  docs = stackDocuments({
    bucket,
    recipients: [recipient],
    identity,
    postgres: { host: '127.0.0.1', port: server.port, username: 'postgres' },
    databases: { postgres: ['shop'] },
    pitr: { enabled: true, partialInterval: '2s' },
    retain: { daily: 1 },
  });
  const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  await h.runtime.mirror();
  await waitFor('the replication check', async () => ((await targetView()).pitr ? true : undefined), 30_000);
  ticker = setInterval(() => void h.runtime.tick(), 500);
  writer = write(server.adminUrl.replace(/\/postgres$/, '/shop'));
}, 300_000);

afterAll(async () => {
  writing = false;
  await writer?.catch(() => undefined);
  clearInterval(ticker);
  await worker?.stop();
  await h?.close();
  for (const database of restored) await admin?.query(`DROP DATABASE IF EXISTS "${database}"`).catch(() => undefined);
  await admin?.end().catch(() => undefined);
  await server?.stop();
  rmSync(stateDir, { recursive: true, force: true });
}, 120_000);

describe('retention and garbage collection (postgres, daily: 1)', () => {
  const fulls: Array<{ id: string; time: number; endLsn: bigint }> = [];

  it('keeps the newest full of the day and a pinned one, expires the other with the change log only it needed', async () => {
    for (const reason of ['first', 'second', 'third']) {
      await sleep(3000);
      const row = await fullBackup(reason);
      const manifest = row.manifest as { consistentAt: string; position: { endLSN: string } };
      const [high = '0', low = '0'] = manifest.position.endLSN.split('/');
      fulls.push({ id: row.id, time: Date.parse(manifest.consistentAt), endLsn: (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`) });
      if (reason === 'second') {
        const pinned = await h.call('operator', 'post', `/api/v1/backups/${row.id}/pin`, { reason: 'kept past its rules' });
        expect(pinned.status, JSON.stringify(pinned.body)).toBe(200);
      }
    }
    // The scheduler's passes apply retention: no call here, the catalog does it by itself after the third full.
    const first = await waitFor('the first full to expire', async () => {
      const view = await backupView(fulls[0]!.id);
      return view.phase === 'Expired' ? view : undefined;
    }, 30_000);
    expect(first).toMatchObject({ restorable: false, retainedBy: [], expiresAt: null, expiredAt: expect.any(String), expiredReason: expect.stringMatching(/daily/) });
    const [second, third] = await Promise.all([backupView(fulls[1]!.id), backupView(fulls[2]!.id)]);
    expect(second).toMatchObject({ phase: 'Succeeded', restorable: true, retainedBy: ['pinned'], expiresAt: null });
    expect(third).toMatchObject({ phase: 'Succeeded', retainedBy: expect.arrayContaining(['newest', 'daily']) });
    expect(Date.parse(third.expiresAt)).toBeGreaterThan(fulls[2]!.time);
    // The first full's window went with it: the kept windows start at the pinned full, unbroken.
    const target = await targetView();
    expect(Date.parse(target.windows[0].from)).toBe(fulls[1]!.time);
    expect(target.chainBroken).toBe(false);
    // Every live segment is one the pinned full's chain may need: none ends before the segment holding its end.
    const live = await h.runtime.db.segment.findMany({ where: { expired: false } });
    expect(live.length).toBeGreaterThan(0);
    expect(live.filter((s) => s.endLsn <= fulls[1]!.endLsn && s.startLsn < fulls[1]!.endLsn - 16n * 1024n * 1024n)).toEqual([]);
    const list = (await h.call('viewer', 'get', `/api/v1/targets/${TARGET}/backups`)).body.backups as Array<{ id: string; phase: string }>;
    expect(list.find((b) => b.id === fulls[0]!.id)?.phase).toBe('Expired');
  }, 300_000);

  it('collects the expired objects by itself after the expiry, and records the pass', async () => {
    const gone = await waitFor("the first full's objects to be collected", async () => {
      await h.runtime.lifecycle.idle();
      const keys = await bucketKeys();
      return keys.some((k) => k.includes(`/${fulls[0]!.id}/`)) ? undefined : keys;
    }, 60_000);
    expect(gone.some((k) => k.includes(`/${fulls[1]!.id}/`))).toBe(true);
    // Rows go with their objects: an expired segment still recorded is one a later pass will take (written too late for this one).
    const stillExpired = await h.runtime.db.segment.findMany({ where: { expired: true }, select: { key: true } });
    for (const { key } of stillExpired) expect(gone).toContain(key);
    const store = (await h.call('viewer', 'get', '/api/v1/settings')).body.stores.find((s: { name: string }) => s.name === 'local');
    expect(store.lastGC).toMatchObject({ at: expect.any(String), dryRun: false });
    const audit = (await h.call('operator', 'get', '/api/v1/audit?action=collectStoreGarbage')).body.events as Array<{ user: string; object: string; detail: { objects: number } }>;
    expect(audit.some((e) => e.user === 'scheduler' && e.object === 'BackupStore/default/local' && e.detail.objects > 0)).toBe(true);
  }, 120_000);

  it('restores a moment of the kept window between the pinned full and the newest exactly', async () => {
    // A moment between two commits, a little after the pinned full: every row before it is in, none after it.
    const index = written.findIndex((w) => w.committedAt > fulls[1]!.time + 1500);
    const at = new Date(Math.floor((written[index]!.committedAt + written[index + 1]!.startedAt) / 2)).toISOString();
    const expected = written.slice(0, index + 1).map((w) => w.id);
    await waitFor('the window to reach the moment', async () => ((await targetView()).windows.some((w: { from: string; to: string }) => w.from <= at && w.to >= at) ? true : undefined), 60_000);
    const database = `retention_${randomBytes(3).toString('hex')}`;
    const res = await h.call('restorer', 'post', '/api/v1/restores', { target: TARGET, mode: 'new', at, host: '127.0.0.1', port: server.port, database, credentialsSecret: 'postgres-credentials' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    restored.push(database);
    const restore = await waitFor('the restore', async () => {
      const row = await h.runtime.db.restore.findFirst({ where: { name: res.body.name } });
      return row && (row.phase === 'Succeeded' || row.phase === 'Failed') ? row : undefined;
    });
    expect(restore.phase, restore.message).toBe('Succeeded');
    expect(restore.backupId).toBe(fulls[1]!.id);
    expect(await idsIn(database)).toEqual(expected);
  }, 240_000);

  it('the store then holds only what the catalog lists, and the catalog nothing the store lacks', async () => {
    // Quiet: no write, no scheduler pass, so nothing lands or goes between the two listings.
    writing = false;
    await writer;
    clearInterval(ticker);
    await sleep(3000);
    await h.runtime.lifecycle.idle();
    const listed = await catalogKeys();
    const stored = await bucketKeys();
    expect(stored.filter((key) => !listed.has(key))).toEqual([]);
    expect([...listed].filter((key) => !stored.includes(key))).toEqual([]);
  }, 60_000);

  it('refuses to pin an expired backup, and to collect a read-only store', async () => {
    const pin = await h.call('operator', 'post', `/api/v1/backups/${fulls[0]!.id}/pin`, {});
    expect(pin.status).toBe(409);
    expect(pin.body.error).toMatch(/expired/);
    const readOnly = docs.split('\n---\n').find((d) => d.includes('kind: BackupStore'))!.replace('name: local,', 'name: mirror-only,').replace('prefix: strata', 'prefix: strata\n  readOnly: true');
    const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', readOnly, 'application/yaml');
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    const keysBefore = await bucketKeys();
    const gc = await h.call('restorer-admin', 'post', '/api/v1/stores/default/mirror-only/gc');
    expect(gc.status).toBe(422);
    expect(gc.body.error).toMatch(/read-only/);
    expect(await bucketKeys()).toEqual(keysBefore);
  }, 60_000);

  it('unpinned, the pinned full expires; a dry run lists its objects, the pass deletes exactly them, and a catalog rebuilt from the store agrees', async () => {
    const unpin = await h.call('operator', 'post', `/api/v1/backups/${fulls[1]!.id}/unpin`, {});
    expect(unpin.status).toBe(200);
    const before = await bucketKeys();
    // The API's pass applies retention first, so the unpinned full expires in it.
    const dry = await h.call('restorer-admin', 'post', '/api/v1/stores/default/local/gc?dryRun=true');
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(await backupView(fulls[1]!.id)).toMatchObject({ phase: 'Expired' });
    expect(dry.body).toMatchObject({ store: 'local', dryRun: true });
    expect(dry.body.keys.length, JSON.stringify(dry.body)).toBeGreaterThan(0);
    expect(dry.body.keys.every((k: string) => before.includes(k))).toBe(true);
    expect(dry.body.keys.some((k: string) => k.endsWith(`/${fulls[1]!.id}/manifest.json`))).toBe(true);
    expect(dry.body.keys.every((k: string) => !k.includes(`/${fulls[2]!.id}/`))).toBe(true);
    expect(await bucketKeys()).toEqual(before);

    const pass = await h.call('restorer-admin', 'post', '/api/v1/stores/default/local/gc');
    expect(pass.status, JSON.stringify(pass.body)).toBe(200);
    expect(pass.body).toMatchObject({ dryRun: false, objects: dry.body.objects, bytes: dry.body.bytes, keys: dry.body.keys });
    expect(pass.body.error).toBeUndefined();
    expect(await bucketKeys()).toEqual(before.filter((k) => !dry.body.keys.includes(k)));
    expect(Date.parse((await targetView()).windows[0].from)).toBe(fulls[2]!.time);
    const store = (await h.call('viewer', 'get', '/api/v1/settings')).body.stores.find((s: { name: string }) => s.name === 'local');
    expect(store.lastGC).toMatchObject({ objects: pass.body.objects, bytes: pass.body.bytes, dryRun: false });

    const fresh = await startCatalogHarness('retention_rebuilt', { secretsKey: h.secretsKey });
    try {
      const applied = await fresh.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
      expect(applied.status).toBe(200);
      await fresh.runtime.mirror();
      const ids = (await fresh.runtime.db.backup.findMany({ where: { phase: 'Succeeded' } })).map((b) => b.id);
      expect(ids).toEqual([fulls[2]!.id]);
      const kept = (await h.runtime.db.segment.findMany({ where: { expired: false }, select: { key: true } })).map((s) => s.key).sort();
      const rebuilt = (await fresh.runtime.db.segment.findMany({ select: { key: true } })).map((s) => s.key).sort();
      expect(rebuilt).toEqual(kept);
    } finally {
      await fresh.close();
    }
  }, 180_000);
});
