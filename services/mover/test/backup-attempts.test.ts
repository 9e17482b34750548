// Two attempts of one backup (a job delivered again while its first attempt still ran): on a real Postgres database
// and the embedded S3, with the lease's timing shortened. Each test gates the reports of an attempt to decide where it
// stands when the other arrives, so the interleaving is the same on every run.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testPostgresAdminUrl } from '@sigil/kit/testing';
import { backupPrefix, dataKey, manifestKey, type BackupJob, type StrataReports } from '@sigil/proto/strata-jobs';
import { createS3Client, ensureBucket, listKeys, readSmallObject, type S3Client } from '@strata/stream';
import { runBackup } from '../src/jobs/backup.ts';
import { leasePrefix, readClaims, type Claim, type LeaseTiming } from '../src/jobs/backup-lease.ts';
import type { Reporter } from '../src/reports.ts';
import { accessFromUrl, uniqueDatabaseName } from './fixtures.ts';

const adminUrl = testPostgresAdminUrl();
const database = uniqueDatabaseName('attempts');
const bucket = `mover-attempts-${randomBytes(4).toString('hex')}`;
/** Renewals and polls in milliseconds; claims live long enough never to expire during a test unless told to. */
const FAST: LeaseTiming = { ttlMs: 30_000, renewMs: 100, pollMs: 50 };
let client: S3Client;
let store: BackupJob['store'];

async function onPostgres(db: string, sql: string): Promise<void> {
  const url = new URL(adminUrl);
  url.pathname = `/${db}`;
  const connection = new pg.Client({ connectionString: url.toString() });
  await connection.connect();
  await connection.query(sql).finally(() => connection.end());
}

beforeAll(async () => {
  const endpoint = process.env.S3_ENDPOINT;
  if (!endpoint) throw new Error('S3_ENDPOINT is not set: run through vitest (the global setup provides S3)');
  const identity = execFileSync('age-keygen', { stdio: ['ignore', 'pipe', 'ignore'] }).toString();
  const recipient = execFileSync('age-keygen', ['-y'], { input: identity }).toString().trim();
  // The embedded store ignores If-None-Match: like a store with disableConditionalPut, the manifest's put is checked by reading back.
  store = {
    endpoint, region: process.env.S3_REGION || 'us-east-1', bucket, prefix: 'strata', pathStyle: true, accessKeyId: process.env.S3_ACCESS_KEY ?? '', secretAccessKey: process.env.S3_SECRET_KEY ?? '',
    disableConditionalPut: true, partSizeBytes: 5 * 1024 * 1024, concurrency: 1, storeName: 'local', ageRecipients: [recipient], catalogRecipients: [],
  };
  client = createS3Client(store);
  await ensureBucket(client, bucket, store.region);
  await onPostgres('postgres', `CREATE DATABASE ${database}`);
  await onPostgres(database, `CREATE TABLE notes (id int PRIMARY KEY, body text); INSERT INTO notes SELECT g, 'note ' || g FROM generate_series(1, 200) g`);
});

afterAll(async () => {
  await onPostgres('postgres', `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
});

function backupJob(label: string, extra: Partial<BackupJob> = {}): BackupJob {
  const backupId = `${label}-${randomBytes(4).toString('hex')}`;
  return {
    backupId, namespace: 'default', name: backupId,
    target: { namespace: 'default', name: 'main', uid: 'uid-1', org: '', project: '', env: '' },
    policy: 'nightly', reason: 'test', requestedBy: 'test',
    database: accessFromUrl(adminUrl), databases: [database], excludeData: [], excludeTables: [],
    store, compression: { algorithm: 'zstd', level: 'fastest', threads: 1 },
    bandwidthBytesPerSecond: 0, stallTimeoutMs: 60_000, activeDeadlineMs: 0,
    ...extra,
  };
}

const baseOf = (job: BackupJob) => backupPrefix(store.prefix, job.target.namespace, job.target.name, job.backupId);

interface Sent {
  type: keyof StrataReports;
  data: StrataReports[keyof StrataReports];
}

/** A reporter that records; `pauseAt` holds the attempt at that report until `resume()`; `failAt` throws there once (NATS down). */
function recorder(options: { pauseAt?: keyof StrataReports; failAt?: keyof StrataReports } = {}): Reporter & { sent: Sent[]; paused: Promise<void>; resume(): void } {
  const sent: Sent[] = [];
  let reached!: () => void;
  let resume!: () => void;
  const paused = new Promise<void>((resolve) => (reached = resolve));
  const resumed = new Promise<void>((resolve) => (resume = resolve));
  let failAt = options.failAt;
  return {
    sent, paused, resume,
    async report(type, data) {
      if (type === failAt) {
        failAt = undefined;
        throw new Error('NATS is down');
      }
      if (type === options.pauseAt) {
        reached();
        await resumed;
      }
      sent.push({ type, data });
    },
    progress() {},
  };
}

function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

async function keysUnder(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of listKeys(client, bucket, prefix)) keys.push(key);
  return keys.sort();
}

interface StoredManifest {
  objects: Array<{ key: string; size: number }>;
}

async function storedManifest(job: BackupJob): Promise<StoredManifest> {
  const bytes = await readSmallObject(client, bucket, manifestKey(baseOf(job)));
  expect(bytes, 'the manifest is in the store').toBeDefined();
  return JSON.parse(bytes!.toString('utf8')) as StoredManifest;
}

/** The manifest, and every object it lists with the size it lists, and nothing else: no claim, no other attempt's leftovers. */
async function expectWholeBackup(job: BackupJob): Promise<StoredManifest> {
  const manifest = await storedManifest(job);
  for (const object of manifest.objects) expect((await client.statObject(bucket, object.key)).size, object.key).toBe(object.size);
  expect(await keysUnder(baseOf(job))).toEqual([...manifest.objects.map((o) => o.key), manifestKey(baseOf(job))].sort());
  return manifest;
}

const types = (sent: Sent[]) => sent.map((s) => s.type);

/** Under the test's timeout: a scenario still running then fails saying where each attempt was, never just "timed out". */
const SCENARIO_MS = 20_000;

/**
 * Waits for `work`; after SCENARIO_MS fails with what the attempts reported and what the store holds (the claims with
 * their states and expiries, the backup's keys): a claim left behind, an attempt stuck in its backup or one that never
 * saw the holder each read differently.
 */
async function within<T>(job: BackupJob, attempts: Record<string, { sent: Sent[] }>, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void describeState(job, attempts).then((state) => reject(new Error(`the attempts had not ended after ${SCENARIO_MS} ms: ${state}`)));
    }, SCENARIO_MS);
  });
  late.catch(() => undefined); // a description finished after the work ended
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function describeState(job: BackupJob, attempts: Record<string, { sent: Sent[] }>): Promise<string> {
  const reported = Object.entries(attempts).map(([name, a]) => `${name} reported [${types(a.sent).join(', ')}]`);
  const place = { client, bucket, base: baseOf(job) };
  const claims = await readClaims(place).then((all) => JSON.stringify(all), (error: Error) => `unreadable (${error.message})`);
  const keys = await keysUnder(baseOf(job)).then((all) => all.map((k) => k.slice(baseOf(job).length)).join(', '), (error: Error) => `unlistable (${error.message})`);
  return `${reported.join('; ')}; claims ${claims}; keys [${keys}]; at ${new Date().toISOString()}`;
}

/** Until the attempt reaches its pause; an attempt that ends first (it failed before it started) fails the test at once. */
async function reachesPause(attempt: { sent: Sent[]; paused: Promise<void> }, run: Promise<void>): Promise<void> {
  const endedFirst = run.then(
    () => Promise.reject(new Error(`the attempt ended before it paused, reporting [${types(attempt.sent).join(', ')}]: ${JSON.stringify(attempt.sent)}`)),
    (error: Error) => Promise.reject(new Error(`the attempt threw before it paused: ${error.message}`)),
  );
  endedFirst.catch(() => undefined); // once paused, the run's later end is not this wait's business
  await Promise.race([attempt.paused, endedFirst]);
}

describe('two attempts of one backup', () => {
  it('runs it once: the attempt that arrives while the first holds the backup waits, then ends reporting nothing', async () => {
    const job = backupJob('race');
    const signal = new AbortController().signal;
    const first = recorder({ pauseAt: 'backup.started' });
    const second = recorder();
    const firstRun = runBackup(job, first, signal, { attempt: 'first', lease: FAST });
    await within(job, { first }, reachesPause(first, firstRun)); // the first attempt holds the backup and is about to dump
    const waiting = deferred<Claim>();
    const secondRun = runBackup(job, second, signal, { attempt: 'second', lease: FAST, onWaiting: waiting.resolve });
    const waitedFor = await within(job, { first, second }, Promise.race([waiting.promise, secondRun.then(() => undefined)]));
    first.resume();
    await within(job, { first, second }, Promise.all([firstRun, secondRun]));

    const all = [...first.sent, ...second.sent];
    expect(types(all).filter((t) => t === 'backup.succeeded')).toHaveLength(1);
    expect(types(all)).not.toContain('backup.failed');
    expect(waitedFor).toMatchObject({ attempt: 'first', state: 'held' });
    expect(types(first.sent)).toEqual(['backup.started', 'backup.succeeded']);
    expect(second.sent).toEqual([]);
    const manifest = await expectWholeBackup(job);
    expect(manifest.objects.map((o) => o.key)).toContain(dataKey(baseOf(job), database, 'postgres', true));
    expect(first.sent[1]!.data).toMatchObject({ manifest });
  });

  it('leaves a failed run to its own attempt: the one that waited reports nothing and starts nothing', async () => {
    const job = backupJob('fails');
    const first = recorder({ pauseAt: 'backup.started' });
    const second = recorder();
    const stopFirst = new AbortController();
    const firstRun = runBackup(job, first, stopFirst.signal, { attempt: 'first', lease: FAST });
    await within(job, { first }, reachesPause(first, firstRun));
    const waiting = deferred<Claim>();
    const secondRun = runBackup(job, second, new AbortController().signal, { attempt: 'second', lease: FAST, onWaiting: waiting.resolve });
    await within(job, { first, second }, Promise.race([waiting.promise, secondRun]));
    stopFirst.abort(new Error('the mover is shutting down'));
    first.resume();
    await within(job, { first, second }, Promise.all([firstRun, secondRun]));

    expect(types(first.sent)).toEqual(['backup.started', 'backup.failed']);
    expect(first.sent[1]!.data).toMatchObject({ message: expect.stringMatching(/shutting down/) });
    expect(second.sent).toEqual([]);
    expect(await keysUnder(baseOf(job))).toEqual([]);
  });

  it('takes over from a dead attempt whose claim expired, and removes what that attempt left', async () => {
    const job = backupJob('takeover');
    const base = baseOf(job);
    const past = new Date(Date.now() - 60_000).toISOString();
    const dead: Claim = { attempt: 'dead', holder: 'mover@gone', state: 'held', since: past, expiresAt: past };
    await client.putObject(bucket, `${leasePrefix(base)}dead.json`, JSON.stringify(dead));
    await client.putObject(bucket, `${base}data/half-written.sql.zst.age`, 'partial');
    const reporter = recorder();
    await within(job, { next: reporter }, runBackup(job, reporter, new AbortController().signal, { attempt: 'next', lease: FAST }));

    expect(types(reporter.sent), JSON.stringify(reporter.sent)).toEqual(['backup.started', 'backup.succeeded']);
    await expectWholeBackup(job);
  });
});

describe('the end of a failed attempt', () => {
  it('keeps a backup whose success could not be reported: nothing removed, no failure reported, the redelivery reports it', async () => {
    const job = backupJob('unreported');
    const first = recorder({ failAt: 'backup.succeeded' });
    await expect(runBackup(job, first, new AbortController().signal, { lease: FAST })).rejects.toThrow('NATS is down');
    expect(types(first.sent)).toEqual(['backup.started']);
    const manifest = await expectWholeBackup(job);

    const again = recorder();
    await within(job, { again }, runBackup(job, again, new AbortController().signal, { lease: FAST }));
    expect(again.sent).toEqual([{ type: 'backup.succeeded', data: { backupId: job.backupId, manifestKey: manifestKey(baseOf(job)), manifest } }]);
  });

  it('removes only what the attempt wrote', async () => {
    const job = backupJob('broken', { queries: [{ name: 'broken', sql: 'SELECT * FROM no_such_table' }] });
    const base = baseOf(job);
    const reporter = recorder({ pauseAt: 'backup.started' });
    const run = runBackup(job, reporter, new AbortController().signal, { lease: FAST });
    await within(job, { attempt: reporter }, reachesPause(reporter, run));
    // Not this attempt's: written under the prefix while it runs (what an attempt that lost its lease could leave).
    const foreign = `${base}data/other.sql.zst.age`;
    await client.putObject(bucket, foreign, 'not ours');
    reporter.resume();
    await run;

    expect(types(reporter.sent)).toEqual(['backup.started', 'backup.failed']);
    expect(reporter.sent[1]!.data).toMatchObject({ message: expect.stringMatching(/^export broken: .*no_such_table/) });
    expect(await keysUnder(base)).toEqual([foreign]);
  });
});
