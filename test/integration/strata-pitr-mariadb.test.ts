import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@sigil/kit/testing';
import { startMariadb } from '@sigil/local-stack';
import { startWorker, type Worker } from '@strata/mover';
import { s3Env, stackDocuments, startCatalogHarness, type CatalogHarness } from '@strata/backup-catalog/testing';
import { createS3Client, removeObjects } from '@strata/stream';
import { expectChangeLogRebuilt } from './rebuilt-change-log.ts';
import { countInSandbox } from './sandbox-count.ts';
import { waitFor } from './wait.ts';

/**
 * Point-in-time restore of MariaDB: a server of its own (binlog on, ROW, as the local stack runs it), a logical
 * full that records its binlog position, binlogs streamed into the store, restores rolled forward to a moment.
 * Binlogs keep whole seconds, so the writer leaves quiet seconds and the restores aim inside them.
 */
const bucket = `strata-pitr-my-${randomBytes(3).toString('hex')}`;
const stateDir = mkdtempSync(path.join(tmpdir(), 'strata-pitr-my-'));
let server: { adminUrl: string; port: number; stop(): Promise<void> };
let admin: mysql.Connection;
let h: CatalogHarness;
let worker: Worker;
let ticker: NodeJS.Timeout;
/** The stack's resources as applied (YAML). */
let docs: string;
const written: Array<{ id: number; at: number }> = [];
/** Seconds of the window in which nothing was committed (found by the restore test, used by the sandbox test). */
let quietSeconds: number[] = [];
let writing = true;
let writer: Promise<void>;
const restored: string[] = [];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));


/** Three rows early in each second, every third second left quiet (and every sixth rotates the binlog). */
async function write(): Promise<void> {
  const c = await mysql.createConnection({ host: '127.0.0.1', port: server.port, user: 'root', database: 'shop' });
  let second = 0;
  while (writing) {
    await sleep(1000 - (Date.now() % 1000) + 150);
    if (++second % 3 === 0) {
      if (second % 2 === 0) await c.query('FLUSH BINARY LOGS'); // a new file now and then: finished segments
      continue;
    }
    for (let i = 0; i < 3; i++) {
      const [result] = await c.query<mysql.ResultSetHeader>('INSERT INTO events (note) VALUES (?)', [`row ${second}.${i}`]);
      written.push({ id: result.insertId, at: Date.now() });
    }
  }
  await c.end();
}

async function target() {
  return (await h.call('viewer', 'get', '/api/v1/targets/default/mysql-main')).body.target;
}

/** A restore into a new database on the source server, waited for: it must succeed. */
async function restoreNew(database: string, at: string) {
  restored.push(database);
  const res = await h.call('restorer', 'post', '/api/v1/restores', { target: 'default/mysql-main', mode: 'new', at, host: '127.0.0.1', port: server.port, database, credentialsSecret: 'mysql-credentials' });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const row = await waitFor(`restore ${res.body.name}`, async () => {
    const r = await h.runtime.db.restore.findFirst({ where: { name: res.body.name } });
    return r && (r.phase === 'Succeeded' || r.phase === 'Failed') ? r : undefined;
  });
  expect(row.phase, row.message).toBe('Succeeded');
  return row;
}

beforeAll(async () => {
  server = await startMariadb({ stateDir, env: process.env, log: () => {} });
  admin = await mysql.createConnection({ host: '127.0.0.1', port: server.port, user: 'root' });
  await admin.query('CREATE DATABASE shop');
  await admin.query('CREATE TABLE shop.events (id INT AUTO_INCREMENT PRIMARY KEY, note TEXT NOT NULL) ENGINE=InnoDB');
  const dir = mkdtempSync(path.join(tmpdir(), 'strata-age-'));
  execFileSync('age-keygen', ['-o', path.join(dir, 'identity.txt')], { stdio: 'ignore' });
  const identity = execFileSync('cat', [path.join(dir, 'identity.txt')]).toString();
  const recipient = execFileSync('age-keygen', ['-y', path.join(dir, 'identity.txt')]).toString().trim();
  h = await startCatalogHarness('pitr_mariadb');
  worker = await startWorker({ bus: h.bus, log: silentLogger(), secretsKey: h.secretsKey, concurrency: 2, consumerPrefix: h.cell, retryDelaysMs: [500, 1000] });
  docs = stackDocuments({ bucket, recipients: [recipient], identity, mysql: { host: '127.0.0.1', port: server.port, username: 'root' }, databases: { mysql: ['shop'] }, pitr: { enabled: true, partialInterval: '2s' } });
  const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  await h.runtime.mirror();
  await waitFor('the replication check', async () => ((await target()).pitr ? true : undefined), 30_000);
  ticker = setInterval(() => void h.runtime.tick(), 500);
  writer = write();
}, 300_000);

afterAll(async () => {
  writing = false;
  await writer?.catch(() => undefined);
  clearInterval(ticker);
  await worker?.stop();
  await h?.close();
  for (const database of restored) await admin?.query(`DROP DATABASE IF EXISTS \`${database}\``).catch(() => undefined);
  await admin?.end().catch(() => undefined);
  await server?.stop();
  rmSync(stateDir, { recursive: true, force: true });
}, 120_000);

describe('point-in-time restore (mariadb)', () => {
  let fullDone = 0;

  it('streams binlogs and opens a window at a full that recorded its position', async () => {
    await sleep(2000);
    const res = await h.call('operator', 'post', '/api/v1/targets/default/mysql-main/backup-now', { reason: 'pitr test' });
    expect(res.status).toBe(202);
    const full = await waitFor('the full backup', async () => {
      const row = await h.runtime.db.backup.findFirst({ where: { name: res.body.name } });
      return row && (row.phase === 'Succeeded' || row.phase === 'Failed') ? row : undefined;
    });
    expect(full.phase, full.message).toBe('Succeeded');
    const manifest = full.manifest as { position?: { binlogFile?: string; binlogPos?: number }; objects?: Array<{ role: string; database?: string; position?: object }> };
    expect(manifest.position?.binlogFile).toMatch(/\.\d+$/);
    // Rows keep being written: the backup replays from where the dump's own snapshot stood (recorded in the dump),
    // never from a position read before it (a restore would apply those rows twice: a duplicate key).
    const data = manifest.objects?.find((o) => o.role === 'data' && o.database === 'shop');
    expect(data?.position).toEqual(manifest.position);
    fullDone = full.completedAt!.getTime();
    const t = await waitFor('a window past the full', async () => {
      const t = await target();
      return t.windows?.length && Date.parse(t.windows.at(-1).to) > fullDone + 20_000 ? t : undefined;
    }, 120_000);
    expect(t).toMatchObject({ pitr: true, chainBroken: false, gaps: 0 });
  }, 180_000);

  it('loses no binlog when the mover is stopped mid-stream and another takes over', async () => {
    await worker.stop();
    await sleep(3000);
    worker = await startWorker({ bus: h.bus, log: silentLogger(), secretsKey: h.secretsKey, concurrency: 2, consumerPrefix: h.cell, retryDelaysMs: [500, 1000] });
    const back = Date.now() + 3000;
    const t = await waitFor('the window to pass the outage', async () => {
      const t = await target();
      return Date.parse(t.windows.at(-1).to) > back ? t : undefined;
    }, 45_000); // well before the jobs' one-minute ack wait: the stream job is handed on, not waited out
    expect(t).toMatchObject({ chainBroken: false, gaps: 0 });
  }, 180_000);

  it('restores exactly the rows committed before quiet seconds of the window', async () => {
    writing = false;
    await writer;
    const end = Date.parse((await target()).windows.at(-1).to);
    const all: number[] = [];
    // Quiet seconds followed, still inside the window, by a commit: the replay has to stop inside them. (After the
    // window's last commit the catalog rightly replays every segment instead, and says so.)
    for (let s = Math.ceil(fullDone / 1000) + 1; s * 1000 + 1000 < end; s++) {
      if (!written.some((w) => Math.floor(w.at / 1000) === s) && written.some((w) => w.at > s * 1000 + 1000 && w.at < end)) all.push(s);
    }
    expect(all.length).toBeGreaterThanOrEqual(5);
    // Five of them at random, in order.
    const quiet = all.map((s) => ({ s, r: Math.random() })).sort((a, b) => a.r - b.r).slice(0, 5).map((x) => x.s).sort((a, b) => a - b);
    for (const [n, second] of quiet.entries()) {
      const at = new Date(second * 1000 + 500).toISOString();
      const plan = (await h.call('viewer', 'get', `/api/v1/targets/default/mysql-main/plan?at=${encodeURIComponent(at)}`)).body;
      expect(plan, JSON.stringify(plan)).toMatchObject({ restorable: true });
      const database = `pitr_my_${n}_${randomBytes(2).toString('hex')}`;
      const row = await restoreNew(database, at);
      expect(row.message).toMatch(/binlogs replayed from .*:\d+ to the end of the second of/);
      const [rows] = await admin.query<mysql.RowDataPacket[]>(`SELECT id FROM \`${database}\`.events ORDER BY id`);
      expect(rows.map((r) => r.id as number), `rows at ${at}`).toEqual(written.filter((w) => w.at < second * 1000).map((w) => w.id));
    }
    quietSeconds = all;
  }, 300_000);

  it('restores the latest moment after those restores into the same server: their replays were logged as new transactions', async () => {
    // Each replay above ran on this server with binary logging on. With the original GTIDs forced, its binlog would
    // now hold old GTIDs after new ones, and replaying it to the end fail ("out of order GTID").
    // Rows after the last rotation: the end of the window is a partial binlog, never a finished one.
    for (let i = 0; i < 3; i++) {
      const [result] = await admin.query<mysql.ResultSetHeader>('INSERT INTO shop.events (note) VALUES (?)', [`tail ${i}`]);
      written.push({ id: result.insertId, at: Date.now() });
    }
    const last = Math.max(...written.map((w) => w.at));
    await waitFor('the window past the last row', async () => (Date.parse((await target()).windows.at(-1).to) > last + 1000 ? true : undefined), 60_000);
    const segments = (await h.call('viewer', 'get', '/api/v1/targets/default/mysql-main/segments')).body.segments as Array<{ partial: boolean }>;
    expect(segments.at(-1)).toMatchObject({ partial: true });
    const database = `pitr_my_latest_${randomBytes(2).toString('hex')}`;
    await restoreNew(database, 'latest');
    const [rows] = await admin.query<mysql.RowDataPacket[]>(`SELECT id FROM \`${database}\`.events ORDER BY id`);
    expect(rows.map((r) => r.id as number)).toEqual(written.map((w) => w.id));
  }, 180_000);

  it('opens a sandbox at latest that holds every row, the newest of them only in a partial binlog', async () => {
    const [source] = await admin.query<mysql.RowDataPacket[]>('SELECT id FROM shop.events ORDER BY id');
    const ids = source.map((r) => r.id as number);
    expect(ids).toEqual(written.map((w) => w.id));
    const { rows } = await countInSandbox(h, 'pitr_my_latest_sandbox', 'default/mysql-main', { at: 'latest' });
    expect(rows).toEqual([[String(ids.length), String(ids.at(-1))]]);
  }, 600_000);

  it('opens a sandbox at a quiet second of the window that holds exactly the rows committed before it', async () => {
    const second = quietSeconds[Math.floor(Math.random() * quietSeconds.length)]!;
    const at = new Date(second * 1000 + 500).toISOString();
    const expected = written.filter((w) => w.at < second * 1000).map((w) => w.id);
    const { rows } = await countInSandbox(h, 'pitr_my_sandbox', 'default/mysql-main', { at });
    expect(rows).toEqual([[String(expected.length), String(expected.at(-1))]]);
  }, 600_000);
});

describe('a download to a moment (mariadb)', () => {
  it('is a README with the dump, the binlogs and the replay command', async () => {
    const at = new Date(Date.parse((await target()).windows.at(-1).to) - 1500).toISOString();
    const res = await h.call('restorer', 'post', '/api/v1/restores', { target: 'default/mysql-main', mode: 'download', at });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const restore = (await h.call('viewer', 'get', `/api/v1/restores/${res.body.namespace}/${res.body.name}`)).body.restore;
    expect(restore.phase).toBe('Succeeded');
    const readme = await (await fetch(restore.downloadURL)).text();
    expect(readme).toMatch(/mariadb-binlog --start-position=\d+ --database=shop --rewrite-db='shop->restored' (--stop-datetime='[^']+' )?binlogs\//);
    expect(readme).toContain('| mariadb restored');
  });
});

describe('the catalog database lost (mariadb)', () => {
  it('brings the binlog segments and the window back from the store', async () => {
    await expectChangeLogRebuilt(h, docs, 'default/mysql-main', 3);
  });
});

describe('a binlog missing from the store (mariadb)', () => {
  it('breaks the chain with the reason', async () => {
    const segments = (await h.call('viewer', 'get', '/api/v1/targets/default/mysql-main/segments')).body.segments.filter((s: { partial: boolean }) => !s.partial);
    expect(segments.length).toBeGreaterThan(2);
    expect(segments[0]).toMatchObject({ engine: 'mysql', startPos: expect.stringMatching(/\.\d+:0$/) });
    const victim = segments[segments.length - 2];
    const s3 = s3Env();
    const client = createS3Client({ endpoint: s3.endpoint, region: s3.region, pathStyle: true, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey });
    await removeObjects(client, bucket, [victim.key]);
    h.setNow(new Date(Date.now() + 120_000));
    await h.runtime.mirror();
    const detail = (await h.call('viewer', 'get', '/api/v1/targets/default/mysql-main')).body;
    expect(detail.target).toMatchObject({ chainBroken: true, gaps: 1 });
    expect(detail.status.pitr.brokenReason).toContain('missing from the store');
  });
});
