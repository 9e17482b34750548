/**
 * Strata point-in-time recovery, on demand:
 *
 *   node_modules/.bin/node test/bench/strata-pitr.ts [--size-mb 512] [--rounds 2] [--write-seconds 60] [--backup-only]
 *
 * On a Postgres server of its own (initdb'd here, replication allowed) and the embedded S3 server:
 * 1. Physical backup throughput: the mover's `runBackup` in `physical` mode against the CLI pipeline
 *    `pg_basebackup -D - -Ft -X fetch | zstd -3 | age -r <recipient> | rclone rcat` into the same store;
 *    best of `--rounds`, MB/s of the raw tar and the ratio (target: at least 0.95x).
 * 2. WAL streaming lag under a steady 5 MB/s write load (`runStream`, partial interval 1 s): for every
 *    commit, the time until a report says it is covered in the store; p50, p99 and max.
 * 3. Restore-to-time speed: the mover's `runRestore` of the base plus every streamed segment up to a
 *    moment near the end of the load, in base GB and WAL MB replayed per minute.
 * Needs pg_basebackup, zstd, age, age-keygen and rclone (Debian: apt-get install rclone).
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { BackupJob, RestoreJob, SegmentObject, StreamJob, StrataReports } from '@sigil/proto/strata-jobs';
import { startPostgres, startS3 } from '@sigil/local-stack';
import { fileURLToPath } from 'node:url';
import { runRestore, runStream, type Reporter } from '@strata/mover';
import type { ChildConfig, ChildResult } from './strata-backup-child.ts';
import { createS3Client, ensureBucket } from '@strata/stream/s3';

const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const sizeMb = option('--size-mb', 512);
const rounds = option('--rounds', 2);
const writeSeconds = option('--write-seconds', 60);
/** Only part 1 (while working on the backup's speed). */
const backupOnly = args.includes('--backup-only');
const MB = 1e6;

const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-pitr-bench-'));
const log = (line: string) => process.stderr.write(`${line}\n`);
const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? 0;

function recorder(): Reporter & { reports: Array<{ type: string; data: unknown; at: number }> } {
  const reports: Array<{ type: string; data: unknown; at: number }> = [];
  return {
    reports,
    async report(type, data) {
      reports.push({ type, data, at: Date.now() });
    },
    progress() {},
  };
}

async function backupInChild(job: BackupJob): Promise<ChildResult> {
  const configFile = path.join(stateDir, 'child.json');
  const resultFile = path.join(stateDir, 'child-result.json');
  fs.rmSync(resultFile, { force: true });
  const config: ChildConfig = { mode: 'backup', job, resultFile, timeoutMs: 10 * 60_000 };
  fs.writeFileSync(configFile, JSON.stringify(config), { mode: 0o600 });
  const here = path.dirname(fileURLToPath(import.meta.url));
  const child = spawn(process.execPath, [path.join(here, 'strata-backup-child.ts'), configFile], { stdio: ['ignore', 'inherit', 'inherit'] });
  await new Promise((resolve) => child.once('close', resolve));
  const result = JSON.parse(fs.readFileSync(resultFile, 'utf8')) as ChildResult;
  if (!result.ok) throw new Error(`the backup failed: ${result.failure}`);
  return result;
}

async function main(): Promise<void> {
  const server = await startPostgres({ stateDir, env: process.env, log });
  const s3 = await startS3({ stateDir, log });
  const bucket = 'pitr-bench';
  const client = createS3Client({ endpoint: s3.endpoint, region: s3.region, pathStyle: true, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey });
  await ensureBucket(client, bucket, s3.region);
  const keyFile = path.join(stateDir, 'identity.txt');
  execFileSync('age-keygen', ['-o', keyFile], { stdio: 'ignore' });
  const identity = fs.readFileSync(keyFile, 'utf8');
  const recipient = execFileSync('age-keygen', ['-y', keyFile]).toString().trim();
  const admin = new pg.Client({ connectionString: server.adminUrl });
  admin.on('error', () => {});
  await admin.connect();
  try {
    log(`generating about ${sizeMb} MB`);
    await admin.query('CREATE DATABASE bench');
    const bench = new pg.Client({ connectionString: server.adminUrl.replace(/\/postgres$/, '/bench') });
    bench.on('error', () => {});
    await bench.connect();
    await bench.query(`CREATE TABLE items (id bigserial PRIMARY KEY, sku text, price numeric(10,2), at timestamptz, note text, blob bytea)`);
    const rows = Math.round((sizeMb * MB) / 700);
    await bench.query(`INSERT INTO items (sku, price, at, note, blob) SELECT 'sku-' || (g % 5000), (g % 997) / 7.0, now() - g * interval '1 second', repeat(md5(g::text), 8), CASE WHEN g % 10 = 0 THEN decode(repeat(md5((g * 7)::text), 100), 'hex') END FROM generate_series(1, ${rows}) g`);
    await bench.query('CHECKPOINT');
    const { rows: size } = await bench.query<{ bytes: string }>(`SELECT pg_database_size('bench')::text AS bytes`);
    log(`database bench: ${(Number(size[0]!.bytes) / MB).toFixed(0)} MB`);
    const store = { endpoint: s3.endpoint, region: s3.region, bucket, prefix: 'bench', pathStyle: true, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey, disableConditionalPut: true, partSizeBytes: 5 * 1024 * 1024, concurrency: 4 }; // rclone's chunk size
    const database = { engine: 'postgres' as const, host: '127.0.0.1', port: server.port, username: 'postgres', password: '' };
    const compression = { algorithm: 'zstd' as const, level: 'default' as const, threads: 0 };

    // 1. Physical backup throughput.
    const ours: number[] = [];
    /** The streaming phase alone (pg_basebackup through zstd, age and the upload), without the inventory and the manifest. */
    const streamed: number[] = [];
    const cli: number[] = [];
    let rawBytes = 0;
    let lastBackup: { id: string; key: string } | undefined;
    for (let round = 0; round < rounds; round++) {
      const { AWS_CA_BUNDLE: _bundle, ...inherited } = process.env; // a CA bundle for real AWS breaks rclone's plain-http client
      const env = { ...inherited, RCLONE_CONFIG_B_TYPE: 's3', RCLONE_CONFIG_B_PROVIDER: 'Other', RCLONE_CONFIG_B_ENDPOINT: s3.endpoint, RCLONE_CONFIG_B_ACCESS_KEY_ID: s3.accessKey, RCLONE_CONFIG_B_SECRET_ACCESS_KEY: s3.secretKey, RCLONE_CONFIG_B_FORCE_PATH_STYLE: 'true' };
      const started = Date.now();
      await new Promise<void>((resolve, reject) => {
        const sh = spawn('bash', ['-o', 'pipefail', '-c', `pg_basebackup -h 127.0.0.1 -p ${server.port} -U postgres -D - -Ft -X fetch --checkpoint=fast | zstd -3 -q | age -r ${recipient} | rclone rcat b:${bucket}/cli/base-${round}.tar.zst.age`], { env, stdio: ['ignore', 'ignore', 'inherit'] });
        sh.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`the CLI pipeline exited ${code}`))));
      });
      cli.push((Date.now() - started) / 1000);
      const backupId = `bench${round}-${Date.now()}`;
      const job: BackupJob = {
        backupId, namespace: 'bench', name: backupId, target: { namespace: 'bench', name: 'pg', uid: 'bench', org: '', project: '', env: '' }, policy: 'bench', reason: 'bench', requestedBy: 'bench',
        database, databases: ['bench'], excludeData: [], excludeTables: [], store: { ...store, storeName: 'bench', ageRecipients: [recipient], catalogRecipients: [] },
        compression, bandwidthBytesPerSecond: 0, stallTimeoutMs: 60_000, activeDeadlineMs: 0, mode: 'physical',
      };
      // In a process of its own, as the mover runs: the embedded S3 server must not share its event loop.
      const result = await backupInChild(job);
      ours.push(result.seconds);
      streamed.push(result.streamSeconds ?? Number.NaN);
      rawBytes = result.rawBytes;
      lastBackup = { id: backupId, key: result.manifestKey! };
    }
    const best = (xs: number[]) => Math.min(...xs);
    console.log(`\nphysical backup of ${(rawBytes / MB).toFixed(0)} MB raw (best of ${rounds}):`);
    console.log(`  CLI  pg_basebackup | zstd -3 | age | rclone rcat   ${best(cli).toFixed(2)} s   ${(rawBytes / MB / best(cli)).toFixed(1)} MB/s`);
    console.log(`  ours runBackup(mode physical)                     ${best(ours).toFixed(2)} s   ${(rawBytes / MB / best(ours)).toFixed(1)} MB/s   ratio ${(best(cli) / best(ours)).toFixed(2)}x`);
    console.log(`  ours, the streaming phase alone                   ${best(streamed).toFixed(2)} s   ${(rawBytes / MB / best(streamed)).toFixed(1)} MB/s   ratio ${(best(cli) / best(streamed)).toFixed(2)}x (the rest: server info, inventory, tool versions, manifest)`);

    if (backupOnly) return;

    // 2. WAL streaming lag under 5 MB/s.
    const reporter = recorder();
    const stop = { resolve: (_: { release: boolean }) => {} };
    const stopped = new Promise<{ release: boolean }>((resolve) => (stop.resolve = resolve));
    const streamJob: StreamJob = { streamId: 'bench', namespace: 'bench', name: 'pg', targetUid: 'bench', database, slot: 'strata_bench', store: { ...store, ageRecipients: [recipient] }, compression, partialIntervalMs: 1000 };
    const streaming = runStream(streamJob, reporter, new AbortController().signal, { stopped });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const writer = new pg.Client({ connectionString: server.adminUrl.replace(/\/postgres$/, '/bench') });
    writer.on('error', () => {});
    await writer.connect();
    await writer.query('CREATE TABLE load (id bigserial PRIMARY KEY, payload bytea)');
    const commits: number[] = [];
    const loadEnd = Date.now() + writeSeconds * 1000;
    const payload = 100 * 1024;
    while (Date.now() < loadEnd) {
      const tick = Date.now();
      // 5 MB/s: 5 rows of 100 kB every 100 ms, one commit each.
      for (let i = 0; i < 5; i++) {
        await writer.query(`INSERT INTO load (payload) SELECT decode(string_agg(md5(random()::text), ''), 'hex') FROM generate_series(1, ${payload / 16})`);
        commits.push(Date.now());
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 100 - (Date.now() - tick))));
    }
    const lastCommit = commits.at(-1)!;
    const target = new Date(lastCommit - 5000);
    await new Promise((resolve) => setTimeout(resolve, 8000));
    stop.resolve({ release: true });
    await streaming.catch((error: unknown) => log(`stream: ${(error as Error).message}`));
    await writer.end();
    const covered = reporter.reports
      .map((r) => ({ at: r.at, until: Date.parse(((r.data as { segment?: { coveredUntil?: string } }).segment?.coveredUntil ?? (r.data as { coveredUntil?: string }).coveredUntil) ?? '') }))
      .filter((c) => !Number.isNaN(c.until))
      .sort((a, b) => a.at - b.at);
    const lags = commits.map((c) => (covered.find((r) => r.until >= c)?.at ?? Number.NaN) - c).filter((l) => !Number.isNaN(l));
    const segments = reporter.reports.filter((r) => r.type === 'segment.uploaded').map((r) => (r.data as StrataReports['segment.uploaded']).segment);
    console.log(`\nWAL streaming under 5 MB/s for ${writeSeconds} s (partial interval 1 s): ${commits.length} commits, ${segments.filter((s) => !s.partial).length} segments, ${segments.filter((s) => s.partial).length} partial uploads`);
    console.log(`  lag until covered in the store: p50 ${(quantile(lags, 0.5) / 1000).toFixed(2)} s, p99 ${(quantile(lags, 0.99) / 1000).toFixed(2)} s, max ${(Math.max(...lags) / 1000).toFixed(2)} s (${lags.length} of ${commits.length} commits covered)`);

    // 3. Restore to a time near the end of the load: the base plus every segment up to it.
    const best_ = new Map<string, (typeof segments)[number]>();
    for (const s of segments) if (!best_.get(s.name) || best_.get(s.name)!.partial) best_.set(s.name, s);
    const chosen: SegmentObject[] = [...best_.values()].sort((a, b) => a.name.localeCompare(b.name)).map((s) => ({ name: s.name, key: s.key, sha256: s.sha256, partial: s.partial, compression: s.compression, size: s.size }));
    const walBytes = [...best_.values()].reduce((sum, s) => sum + s.rawSize, 0);
    const restore: RestoreJob = {
      restoreId: 'bench', namespace: 'bench', name: 'bench', mode: 'new', backupId: lastBackup!.id, manifestKey: lastBackup!.key,
      store: { ...store, identity }, destination: { ...database, database: 'bench_restored' }, databases: ['bench'], bandwidthBytesPerSecond: 0, stallTimeoutMs: 60_000,
      at: target.toISOString(), segments: chosen,
    };
    const restoreReports = recorder();
    const started = Date.now();
    await runRestore(restore, restoreReports, new AbortController().signal);
    const seconds = (Date.now() - started) / 1000;
    const outcome = restoreReports.reports.at(-1)!;
    if (outcome.type !== 'restore.succeeded') throw new Error(`the restore failed: ${JSON.stringify(outcome.data)}`);
    console.log(`\nrestore to ${target.toISOString()}: base ${(rawBytes / 1e9).toFixed(2)} GB + ${chosen.length} segments (${(walBytes / MB).toFixed(0)} MB of WAL) in ${seconds.toFixed(1)} s:`);
    console.log(`  ${((rawBytes / 1e9) / (seconds / 60)).toFixed(2)} GB of base and ${((walBytes / MB) / (seconds / 60)).toFixed(0)} MB of WAL per minute (recovery, then the database copied into the destination)`);
  } finally {
    await admin.end().catch(() => undefined);
    await server.stop();
    await s3.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

await main();
