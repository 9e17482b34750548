import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@sigil/kit/testing';
import { startPostgres, type PostgresHandle } from '@sigil/local-stack';
import { runBackup, runRestore, runStream, startWorker, type Worker, type WorkerOptions } from '@strata/mover';
import { createS3Client, listKeys, removeObjects } from '@strata/stream';
import { s3Env, stackDocuments, startCatalogHarness, type CatalogHarness } from '@strata/backup-catalog/testing';
import { expectChangeLogRebuilt } from './rebuilt-change-log.ts';
import { countInSandbox } from './sandbox-count.ts';
import { waitFor } from './wait.ts';

/**
 * Point-in-time restore for real: a Postgres server of its own (replication allowed, as a fresh initdb makes it),
 * the catalog and a mover in this process, WAL streamed into the test S3 store while a writer commits one row at a
 * time. Restores to random moments must hold exactly the rows committed up to each.
 */
const bucket = `strata-pitr-${randomBytes(3).toString('hex')}`;
const stateDir = mkdtempSync(path.join(tmpdir(), 'strata-pitr-'));
let server: PostgresHandle;
let admin: pg.Client;
let h: CatalogHarness;
let worker: Worker;
let ticker: NodeJS.Timeout;
/** The stack's resources as applied (YAML). */
let docs: string;
const restored: string[] = [];

interface Written {
  id: number;
  startedAt: number;
  committedAt: number;
}
const written: Written[] = [];
let writing = true;
let writer: Promise<void>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));


/**
 * The mover's jobs, with restores held while `restoresHeld` is pending: what lets a test change the store between a
 * restore's plan and the mover fetching what it names.
 */
let restoresHeld: Promise<void> = Promise.resolve();
const runJobs: WorkerOptions['run'] = async (job, reporter, signal, control) => {
  if (job.type === 'stream.run') return runStream(job.payload, reporter, signal, control);
  if (job.type === 'restore.run') {
    await restoresHeld;
    return runRestore(job.payload, reporter, signal);
  }
  return runBackup(job.payload, reporter, signal);
};
const startMover = () => startWorker({ bus: h.bus, log: silentLogger(), secretsKey: h.secretsKey, concurrency: 2, consumerPrefix: h.cell, retryDelaysMs: [500, 1000], run: runJobs });

/** One row per transaction, 40 ms apart, with a WAL switch every 50 rows so several segments complete. */
async function write(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  let n = 0;
  while (writing) {
    const startedAt = Date.now();
    const { rows } = await client.query<{ id: number }>('INSERT INTO events (note) VALUES ($1) RETURNING id', [`row ${n}`]);
    written.push({ id: rows[0]!.id, startedAt, committedAt: Date.now() });
    if (++n % 50 === 0) await client.query('SELECT pg_switch_wal()');
    await sleep(40);
  }
  await client.end();
}

/** A moment between two commits: every row before it is committed, none after it has started. */
function momentBetween(index: number): { at: string; ids: number[] } {
  const before = written[index]!;
  const after = written[index + 1]!;
  const at = new Date(Math.floor((before.committedAt + after.startedAt) / 2));
  return { at: at.toISOString(), ids: written.slice(0, index + 1).map((w) => w.id) };
}

async function target() {
  return (await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main')).body.target;
}

async function restoreAt(at: string, database: string) {
  const res = await h.call('restorer', 'post', '/api/v1/restores', { target: 'default/postgres-main', mode: 'new', at, host: '127.0.0.1', port: server.port, database, credentialsSecret: 'postgres-credentials' });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  restored.push(database);
  return waitFor(`restore ${res.body.name}`, async () => {
    const row = await h.runtime.db.restore.findFirst({ where: { name: res.body.name } });
    return row && (row.phase === 'Succeeded' || row.phase === 'Failed') ? row : undefined;
  });
}

/** The finished segments in the catalog: WAL file name → checksum of the stored object. */
async function finishedSegments(): Promise<Map<string, string>> {
  const segments = (await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main/segments')).body.segments as Array<{ name: string; partial: boolean; sha256: string }>;
  return new Map(segments.filter((s) => !s.partial).map((s) => [s.name, s.sha256]));
}

/** The WAL file that holds the streamer's slot position (pg_walfile_name names the file before a boundary). */
async function slotSegment(): Promise<string> {
  const { rows } = await admin.query<{ name: string }>(`SELECT pg_walfile_name(restart_lsn + 1) AS name FROM pg_replication_slots WHERE slot_name LIKE 'strata\\_%'`);
  expect(rows).toHaveLength(1);
  return rows[0]!.name;
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
  admin.on('error', () => {}); // the server restarts in a test below
  await admin.connect();
  await admin.query('CREATE DATABASE shop');
  const shop = new pg.Client({ connectionString: server.adminUrl.replace(/\/postgres$/, '/shop') });
  await shop.connect();
  await shop.query('CREATE TABLE events (id serial PRIMARY KEY, note text NOT NULL)');
  await shop.end();

  const dir = mkdtempSync(path.join(tmpdir(), 'strata-age-'));
  execFileSync('age-keygen', ['-o', path.join(dir, 'identity.txt')], { stdio: 'ignore' });
  const identity = execFileSync('cat', [path.join(dir, 'identity.txt')]).toString();
  const recipient = execFileSync('age-keygen', ['-y', path.join(dir, 'identity.txt')]).toString().trim();
  h = await startCatalogHarness('pitr');
  worker = await startMover();
  docs = stackDocuments({
    bucket,
    recipients: [recipient],
    identity,
    postgres: { host: '127.0.0.1', port: server.port, username: 'postgres' },
    databases: { postgres: ['shop'] },
    pitr: { enabled: true, partialInterval: '2s' },
  });
  const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  await h.runtime.mirror(); // creates the bucket
  await waitFor('the replication check', async () => ((await target()).pitr ? true : undefined), 30_000);
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

describe('point-in-time restore (postgres)', () => {
  let full: { id: string };
  let fullTime = 0;

  it('takes a physical full backup with its WAL positions and the backup manifest', async () => {
    await sleep(1000);
    const res = await h.call('operator', 'post', '/api/v1/targets/default/postgres-main/backup-now', { reason: 'pitr test' });
    expect(res.status).toBe(202);
    full = await waitFor('the full backup', async () => {
      const row = await h.runtime.db.backup.findFirst({ where: { name: res.body.name } });
      return row && (row.phase === 'Succeeded' || row.phase === 'Failed') ? row : undefined;
    });
    const detail = (await h.call('viewer', 'get', `/api/v1/backups/${full.id}`)).body;
    expect(detail.manifest).toMatchObject({ mode: 'physical', position: { startLSN: expect.stringMatching(/\//), endLSN: expect.stringMatching(/\//), startWAL: expect.stringMatching(/^[0-9A-F]{24}$/), timeline: 1 } });
    const bases = detail.manifest.objects.filter((o: { format: string }) => o.format === 'pg_basebackup-tar');
    expect(bases).toHaveLength(1);
    // The raw size is the whole tar's (zstd counted it as it compressed): 512-byte blocks, more than was stored.
    expect(bases[0].rawSize % 512).toBe(0);
    expect(bases[0].rawSize).toBeGreaterThan(bases[0].size);
    fullTime = Date.parse(detail.manifest.consistentAt);
  }, 180_000);

  it('streams WAL into segments, and the window moves forward every few seconds', async () => {
    const first = await waitFor('a window', async () => ((await target()).windows?.length ? await target() : undefined), 60_000);
    const end = (t: { windows: Array<{ to: string }> }) => Date.parse(t.windows.at(-1)!.to);
    const later = await waitFor('the window to move', async () => {
      const t = await target();
      return end(t) > end(first) ? t : undefined;
    }, 60_000);
    expect(later).toMatchObject({ pitr: true, chainBroken: false, gaps: 0 });
    expect(later.segments).toBeGreaterThan(1);
    const segments = (await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main/segments')).body.segments;
    expect(segments.some((s: { partial: boolean }) => !s.partial)).toBe(true);
    expect(segments[0]).toMatchObject({ chainID: expect.stringMatching(/-1$/), timeline: 1, sha256: expect.stringMatching(/^[0-9a-f]{64}$/), commits: expect.any(Number) });
    // Segments keep arriving between two reads: since the newest upload listed, each answer is checked on its own time.
    const from = [...segments.map((s: { uploadedAt: string }) => s.uploadedAt)].sort().at(-1) as string;
    const since = (await h.call('viewer', 'get', `/api/v1/segments?since=${encodeURIComponent(from)}`)).body;
    expect(since.segments.length).toBeGreaterThan(0);
    expect(since.segments.every((s: { uploadedAt: string }) => s.uploadedAt >= from)).toBe(true);
    expect(segments.some((s: { uploadedAt: string }) => s.uploadedAt < from)).toBe(true);
  }, 120_000);

  it('loses no WAL when the mover is stopped mid-stream and another takes over', async () => {
    // With no writes the segment being written never finishes: the slot must still stand in the newest finished
    // one, which the next streamer reads again for the start of a record crossing out of it.
    writing = false;
    await writer;
    // Settled: the streamer looks every second, so the slot has stopped moving once two reads 2.5 s apart agree.
    let kept = await slotSegment();
    let settled = false;
    for (let tries = 0; !settled && tries < 10; tries++) {
      await sleep(2500);
      const again = await slotSegment();
      settled = again === kept;
      kept = again;
    }
    expect(settled).toBe(true);
    const finishedBefore = await waitFor(`segment ${kept} of the slot recorded as finished`, async () => {
      const finished = await finishedSegments();
      return finished.has(kept) ? finished : undefined;
    }, 10_000);
    await worker.stop();
    writing = true;
    writer = write(server.adminUrl.replace(/\/postgres$/, '/shop'));
    await sleep(3000); // rows committed while no streamer runs stay in the slot
    worker = await startMover();
    const resumedAt = Date.now() + 4000;
    await waitFor('the window to pass the outage', async () => {
      const t = await target();
      return t.windows?.length && Date.parse(t.windows.at(-1).to) > resumedAt ? t : undefined;
    }, 45_000); // well before the jobs' one-minute ack wait: the stream job is handed on, not waited out
    const t = await target();
    expect(t).toMatchObject({ chainBroken: false, gaps: 0 });
    const keys = (await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main/segments')).body.segments.map((s: { key: string }) => s.key);
    expect(new Set(keys).size).toBe(keys.length);
    // The segment read again was reported from the report kept beside it, not uploaded again (a new upload has a new checksum).
    const finishedAfter = await finishedSegments();
    expect(finishedAfter.get(kept)).toBeDefined();
    for (const [name, sha256] of finishedBefore) expect(finishedAfter.get(name), name).toBe(sha256);
  }, 180_000);

  it('loses no WAL when Postgres restarts under the streamer', async () => {
    writing = false;
    await writer;
    const stoppedAt = Date.now();
    await server.stop();
    server = await startPostgres({ stateDir, env: process.env, durable: false, log: () => {} });
    await admin.end().catch(() => undefined);
    admin = new pg.Client({ connectionString: server.adminUrl });
    admin.on('error', () => {});
    await admin.connect();
    writing = true;
    writer = write(server.adminUrl.replace(/\/postgres$/, '/shop'));
    const back = Date.now() + 3000;
    await waitFor('the window to pass the restart', async () => {
      const t = await target();
      return Date.parse(t.windows.at(-1).to) > back ? t : undefined;
    }, 120_000);
    const after = await target();
    expect(after, `${after.brokenReason ?? ''} ${JSON.stringify(after.windows)}`).toMatchObject({ chainBroken: false, gaps: 0 });
    // The streamer the restart broke said so, and the status keeps it after the next one streams.
    const { pitr } = (await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main')).body.status;
    expect(pitr.streamerReady).toBe(true);
    expect(pitr.streamFailure).toMatchObject({ message: expect.stringMatching(/\S/) });
    expect(Date.parse(pitr.streamFailure.at)).toBeGreaterThan(stoppedAt);
  }, 180_000);

  it('pauses the stream while the target is suspended', async () => {
    expect((await h.call('operator', 'post', '/api/v1/targets/default/postgres-main/suspend', {})).status).toBe(200);
    await waitFor('the streamer to stop', async () => {
      const detail = (await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main')).body;
      return detail.status.pitr.streamerReady === false && !detail.status.pitr.streamId ? true : undefined;
    }, 60_000);
    expect((await h.call('operator', 'post', '/api/v1/targets/default/postgres-main/resume', {})).status).toBe(200);
    const resumed = Date.now();
    await waitFor('the stream to resume', async () => {
      const t = await target();
      return Date.parse(t.windows.at(-1).to) > resumed + 2000 ? t : undefined;
    }, 120_000);
    expect(await target()).toMatchObject({ chainBroken: false, gaps: 0 });
  }, 240_000);

  it('restores exactly the rows committed up to five random moments of the window', async () => {
    const window = (await target()).windows.at(-1);
    const candidates = written.map((w, i) => i).filter((i) => i + 1 < written.length && written[i]!.committedAt > fullTime + 200 && written[i + 1]!.startedAt < Date.parse(window.to) - 200);
    expect(candidates.length).toBeGreaterThan(20);
    const picks = Array.from({ length: 5 }, (_, k) => candidates[Math.floor(((k + Math.random()) / 5) * candidates.length)]!);
    for (const [n, index] of picks.entries()) {
      const moment = momentBetween(index);
      const plan = (await h.call('viewer', 'get', `/api/v1/targets/default/postgres-main/plan?at=${encodeURIComponent(moment.at)}`)).body;
      expect(plan).toMatchObject({ restorable: true, baseBackupID: full.id, effectiveTime: moment.at });
      const database = `pitr_${n}_${randomBytes(2).toString('hex')}`;
      const row = await restoreAt(moment.at, database);
      expect(row.phase, row.message).toBe('Succeeded');
      expect(await idsIn(database), `rows at ${moment.at}`).toEqual(moment.ids);
    }
  }, 600_000);

  it('opens a sandbox at a moment of the window that holds exactly the rows committed by then', async () => {
    const window = (await target()).windows.at(-1);
    const candidates = written.map((w, i) => i).filter((i) => i + 1 < written.length && written[i]!.committedAt > fullTime + 200 && written[i + 1]!.startedAt < Date.parse(window.to) - 200);
    const moment = momentBetween(candidates[Math.floor(Math.random() * candidates.length)]!);
    const { sandbox, rows } = await countInSandbox(h, 'pitr_sandbox', 'default/postgres-main', { at: moment.at });
    expect(sandbox).toMatchObject({ time: moment.at, database: 'shop' });
    expect(rows).toEqual([[String(moment.ids.length), String(moment.ids.at(-1))]]);
  }, 600_000);

  it('a download to a moment is a README with links to the base and the segments and the commands', async () => {
    const window = (await target()).windows.at(-1);
    const at = new Date(Date.parse(window.to) - 1000).toISOString();
    const res = await h.call('restorer', 'post', '/api/v1/restores', { target: 'default/postgres-main', mode: 'download', at });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const restore = (await h.call('viewer', 'get', `/api/v1/restores/${res.body.namespace}/${res.body.name}`)).body.restore;
    expect(restore).toMatchObject({ phase: 'Succeeded', plan: { baseBackupID: full.id, targetTime: at } });
    const readme = await (await fetch(restore.downloadURL)).text();
    expect(readme).toContain('tar -x -C recovered/data');
    expect(readme).toContain(`recovery_target_time = '${at}'`);
    expect(readme.match(/> recovered\/wal\/[0-9A-F]{24}/g)?.length).toBe(restore.plan.segments);
  });

  it('refuses a time outside the window instead of restoring an earlier state', async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const plan = (await h.call('viewer', 'get', `/api/v1/targets/default/postgres-main/plan?at=${encodeURIComponent(future)}`)).body;
    expect(plan).toMatchObject({ restorable: false, reason: expect.stringMatching(/outside every change-capture window/) });
    const res = await h.call('restorer', 'post', '/api/v1/restores', { target: 'default/postgres-main', mode: 'new', at: future, host: '127.0.0.1', port: server.port, database: 'never', credentialsSecret: 'postgres-credentials' });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/outside every change-capture window/);
  });

  it('restores and opens a sandbox at latest with every row, the newest of them only in a partial segment', async () => {
    writing = false;
    await writer;
    // Rows after the last WAL switch: the end of the window is a partial cut, never a finished segment.
    const shop = new pg.Client({ connectionString: server.adminUrl.replace(/\/postgres$/, '/shop') });
    await shop.connect();
    for (let i = 0; i < 3; i++) {
      const startedAt = Date.now();
      const { rows } = await shop.query<{ id: number }>('INSERT INTO events (note) VALUES ($1) RETURNING id', [`tail ${i}`]);
      written.push({ id: rows[0]!.id, startedAt, committedAt: Date.now() });
    }
    await shop.end();
    const last = written.at(-1)!.committedAt;
    await waitFor('the window to cover the last row', async () => (Date.parse((await target()).windows.at(-1).to) > last + 500 ? true : undefined), 60_000);
    const source = await idsIn('shop');
    expect(source).toEqual(written.map((w) => w.id));
    const plan = (await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main/plan?at=latest')).body;
    expect(plan).toMatchObject({ restorable: true, baseBackupID: full.id });
    const segments = (await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main/segments')).body.segments as Array<{ partial: boolean; lastTime?: string }>;
    expect(segments.at(-1)).toMatchObject({ partial: true });

    const database = `pitr_latest_${randomBytes(2).toString('hex')}`;
    const row = await restoreAt('latest', database);
    expect(row.phase, row.message).toBe('Succeeded');
    expect(await idsIn(database)).toEqual(source);

    const { rows } = await countInSandbox(h, 'pitr_latest_sandbox', 'default/postgres-main', { at: 'latest' });
    expect(rows).toEqual([[String(source.length), String(source.at(-1))]]);
    writing = true;
    writer = write(server.adminUrl.replace(/\/postgres$/, '/shop'));
  }, 600_000);

  it('restores what the plan named when the partial segment it named is superseded before the mover fetches it', async () => {
    writing = false;
    await writer;
    const shop = new pg.Client({ connectionString: server.adminUrl.replace(/\/postgres$/, '/shop') });
    await shop.connect();
    try {
      const startedAt = Date.now();
      const { rows } = await shop.query<{ id: number }>(`INSERT INTO events (note) VALUES ('planned') RETURNING id`);
      written.push({ id: rows[0]!.id, startedAt, committedAt: Date.now() });
      const planned = await idsIn('shop');
      await waitFor('the window to cover the planned row', async () => (Date.parse((await target()).windows.at(-1).to) > written.at(-1)!.committedAt + 500 ? true : undefined), 60_000);
      const segments = (await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main/segments')).body.segments as Array<{ name: string; partial: boolean; key: string }>;
      const last = segments.at(-1)!;
      expect(last).toMatchObject({ partial: true });

      let release!: () => void;
      restoresHeld = new Promise((resolve) => (release = resolve));
      const database = `pitr_superseded_${randomBytes(2).toString('hex')}`;
      const res = await h.call('restorer', 'post', '/api/v1/restores', { target: 'default/postgres-main', mode: 'new', at: 'latest', host: '127.0.0.1', port: server.port, database, credentialsSecret: 'postgres-credentials' });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      restored.push(database);
      // After the plan: a row it must not restore, and the file completes; the streamer then removes its partial uploads.
      const afterAt = Date.now();
      const after = await shop.query<{ id: number }>(`INSERT INTO events (note) VALUES ('after the plan') RETURNING id`);
      written.push({ id: after.rows[0]!.id, startedAt: afterAt, committedAt: Date.now() });
      await shop.query('SELECT pg_switch_wal()');
      const s3 = s3Env();
      const client = createS3Client({ endpoint: s3.endpoint, region: s3.region, pathStyle: true, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey });
      const prefix = last.key.split('.partial.')[0]!;
      await waitFor(`the partial uploads of ${last.name} replaced by its complete upload`, async () => {
        const keys: string[] = [];
        for await (const key of listKeys(client, bucket, prefix)) keys.push(key);
        return keys.some((k) => k.endsWith('.age') && !k.includes('.partial.')) && !keys.some((k) => k.includes('.partial.')) ? true : undefined;
      }, 60_000);
      release();
      const row = await waitFor(`restore ${res.body.name}`, async () => {
        const r = await h.runtime.db.restore.findFirst({ where: { name: res.body.name } });
        return r && (r.phase === 'Succeeded' || r.phase === 'Failed') ? r : undefined;
      });
      expect(row.phase, row.message).toBe('Succeeded');
      expect(row.message).toContain(`${last.name}: its complete upload, cut at`);
      expect(await idsIn(database)).toEqual(planned);
    } finally {
      restoresHeld = Promise.resolve();
      await shop.end();
    }
    writing = true;
    writer = write(server.adminUrl.replace(/\/postgres$/, '/shop'));
  }, 300_000);

  it('brings the segments and the window back after the catalog database is lost', async () => {
    await expectChangeLogRebuilt(h, docs, 'default/postgres-main', 4);
  });

  it('reports a deleted segment as a broken chain, and restores before the break still work', async () => {
    writing = false;
    await writer;
    // Let the streamer catch up, so that every segment of the run is in the store before one is taken away.
    const stoppedAt = Date.now();
    await waitFor('the window to cover the last write', async () => {
      const t = await target();
      return Date.parse(t.windows.at(-1).to) > stoppedAt + 1000 ? t : undefined;
    }, 120_000);
    const segments = (await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main/segments')).body.segments.filter((s: { partial: boolean }) => !s.partial);
    expect(segments.length).toBeGreaterThan(3);
    const victim = segments[segments.length - 2];
    const s3 = s3Env();
    const client = createS3Client({ endpoint: s3.endpoint, region: s3.region, pathStyle: true, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey });
    await removeObjects(client, bucket, [victim.key]);
    const left: string[] = [];
    for await (const key of listKeys(client, bucket, 'strata/')) left.push(key);
    expect(left).not.toContain(victim.key);
    h.setNow(new Date(Date.now() + 120_000)); // past the grace given to segments still being reported
    await h.runtime.mirror();
    h.setNow(new Date(Date.now()));
    const t = (await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main')).body;
    const rows = await h.runtime.db.segment.findMany({ orderBy: { startLsn: 'asc' } });
    expect(t.target, rows.map((r) => `${r.name} ${r.partial ? 'partial' : ''} ${r.missing ? 'missing' : ''} ${r.startPos}-${r.endPos}`).join('\n')).toMatchObject({ chainBroken: true, gaps: 1 });
    expect(t.status.pitr.brokenReason).toContain('missing from the store');
    const before = written.findLastIndex((w, i) => i + 1 < written.length && written[i + 1]!.startedAt < Date.parse(victim.firstTime ?? victim.uploadedAt) - 500 && w.committedAt > fullTime + 200);
    expect(before).toBeGreaterThan(0);
    const moment = momentBetween(before);
    const row = await restoreAt(moment.at, `pitr_before_${randomBytes(2).toString('hex')}`);
    expect(row.phase, row.message).toBe('Succeeded');
    expect(await idsIn(restored.at(-1)!)).toEqual(moment.ids);
  }, 300_000);

  it('reports a slot that lost WAL (max_slot_wal_keep_size) as a broken chain, never hidden', async () => {
    await worker.stop();
    await admin.query(`ALTER SYSTEM SET max_slot_wal_keep_size = '64MB'`);
    await admin.query('SELECT pg_reload_conf()');
    const shop = new pg.Client({ connectionString: server.adminUrl.replace(/\/postgres$/, '/shop') });
    shop.on('error', () => {});
    await shop.connect();
    await shop.query('CREATE TABLE filler AS SELECT g, md5(g::text) AS h FROM generate_series(1, 2000000) g');
    await shop.end();
    const lost = await waitFor('the slot to lose WAL', async () => {
      await admin.query('SELECT pg_switch_wal()');
      await admin.query('CHECKPOINT');
      const { rows } = await admin.query<{ status: string }>(`SELECT wal_status AS status FROM pg_replication_slots WHERE slot_name LIKE 'strata_%'`);
      return rows[0]?.status === 'lost' ? true : undefined;
    }, 60_000);
    expect(lost).toBe(true);
    worker = await startMover();
    const detail = await waitFor('the broken chain', async () => {
      const d = (await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main')).body;
      return d.target.chainBroken && /lost WAL/.test(d.status.pitr.brokenReason ?? '') ? d : undefined;
    }, 120_000);
    expect(detail.status.pitr.brokenReason).toMatch(/max_slot_wal_keep_size/);
  }, 240_000);
});
