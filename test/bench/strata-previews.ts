/**
 * WAL streaming throughput with Postgres masked row previews on and off, on demand (issue 31's target: with previews
 * on, at least 0.9x of the same workload with them off, in one run):
 *
 *   node_modules/.bin/node test/bench/strata-previews.ts [--wal-mb 160] [--rounds 3]
 *
 * On a Postgres server of its own (wal_level=logical, as the local stack runs it) and the embedded S3 server. Each
 * round, for each mode in turn (off, then on): a streamer (`runStream`) is started and stopped once so that its slots
 * exist (the physical one; with previews, the pgoutput slot and its publication), then a fixed workload writes a
 * backlog of about `--wal-mb` MB of WAL (inserts of customers with an e-mail, updates, deletes, in transactions of
 * 1,000 rows), the segment is switched, and the time is taken from the streamer's start until the last finished
 * segment is in the store. Throughput is MB of WAL per second; the ratio is on/off of the same round, and the best
 * of each mode over the rounds. Every streamed segment is checked to carry previews (on) or none (off).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { StreamJob } from '@sigil/proto/strata-jobs';
import { startPostgres, startS3 } from '@sigil/local-stack';
import { runStream, type Reporter } from '@strata/mover';
import { createS3Client, ensureBucket } from '@strata/stream/s3';

const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const walMb = option('--wal-mb', 160);
const rounds = option('--rounds', 3);
const MB = 1e6;
const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-previews-bench-'));
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Uploaded { name: string; previewsKey?: string; previewRows?: number; previewsError?: string; partial: boolean }

function recorder(): Reporter & { segments: Uploaded[]; streaming: () => boolean; finished: (name: string) => Promise<number> } {
  const segments: Uploaded[] = [];
  let streaming = false;
  const waiting = new Map<string, (at: number) => void>();
  return {
    segments,
    async report(type, data) {
      if (type === 'stream.status' && (data as { state: string }).state === 'streaming') streaming = true;
      if (type !== 'segment.uploaded') return;
      const segment = (data as { segment: Uploaded }).segment;
      segments.push(segment);
      if (!segment.partial) waiting.get(segment.name)?.(Date.now());
    },
    progress() {},
    streaming: () => streaming,
    finished: (name) => new Promise((resolve) => waiting.set(name, resolve)),
  };
}

async function main(): Promise<void> {
  const server = await startPostgres({ stateDir, env: {}, log, durable: false });
  const s3 = await startS3({ stateDir, log });
  const bucket = 'previews-bench';
  const client = createS3Client({ endpoint: s3.endpoint, region: s3.region, pathStyle: true, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey });
  await ensureBucket(client, bucket, s3.region);
  const keyFile = path.join(stateDir, 'identity.txt');
  execFileSync('age-keygen', ['-o', keyFile], { stdio: 'ignore' });
  const recipient = execFileSync('age-keygen', ['-y', keyFile]).toString().trim();
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  await admin.query('CREATE DATABASE shop');
  const shop = new pg.Client({ connectionString: server.adminUrl.replace(/\/postgres$/, '/shop') });
  await shop.connect();
  await shop.query('CREATE TABLE customers (id bigint PRIMARY KEY, email text, name text, tier text, note text)');
  const store = { endpoint: s3.endpoint, region: s3.region, bucket, prefix: 'bench', pathStyle: true, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey, disableConditionalPut: true, partSizeBytes: 5 * 1024 * 1024, concurrency: 4, ageRecipients: [recipient] as [string], catalogRecipients: [] };
  const database = { engine: 'postgres' as const, host: '127.0.0.1', port: server.port, username: 'postgres', password: '' };
  const previews = { rows: 5, maxValueLength: 64, mask: ['^email$'] };

  // Each run its own prefix: a segment an earlier run stored would be reported again, not streamed.
  const jobOf = (mode: 'off' | 'on', id: string): StreamJob => ({
    streamId: id, namespace: 'bench', name: `pg-${id}`, targetUid: 'bench', database, databases: ['shop'], slot: 'strata_bench', store,
    compression: { algorithm: 'zstd', level: 'default', threads: 0 }, partialIntervalMs: 3_600_000, ...(mode === 'on' ? { previews } : {}),
  });
  /** Runs a streamer until `until` resolves; answers what it reported. */
  async function stream(job: StreamJob, until: (reporter: ReturnType<typeof recorder>) => Promise<void>, release = false) {
    const reporter = recorder();
    let stop!: (asked: { release: boolean; releasePreviews?: boolean }) => void;
    const stopped = new Promise<{ release: boolean; releasePreviews?: boolean }>((resolve) => (stop = resolve));
    const running = runStream(job, reporter, new AbortController().signal, { stopped });
    await Promise.race([until(reporter), running.then(() => Promise.reject(new Error(`the streamer ${job.streamId} ended before it was stopped`)))]);
    stop({ release, releasePreviews: release });
    await running;
    return reporter;
  }

  /** About `walMb` MB of WAL from customers inserted, updated and deleted, 1,000 rows per transaction; the segment then switched. */
  let next = 0;
  async function workload(): Promise<{ lastSegment: string; walBytes: number }> {
    const from = (await shop.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
    for (;;) {
      const start = next;
      next += 1000;
      await shop.query(`INSERT INTO customers SELECT g, 'customer' || g || '@example.com', 'Customer ' || g, 'basic', repeat(md5(g::text), 4) FROM generate_series(${start}, ${next - 1}) g`);
      await shop.query(`UPDATE customers SET tier = 'gold' WHERE id BETWEEN ${start} AND ${start + 499}`);
      await shop.query(`DELETE FROM customers WHERE id BETWEEN ${start + 500} AND ${start + 599}`);
      const { rows } = await shop.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::text AS bytes', [from]);
      if (Number(rows[0]!.bytes) >= walMb * MB) break;
    }
    const { rows } = await shop.query<{ wal: string; bytes: string }>('SELECT pg_walfile_name(pg_current_wal_lsn()) AS wal, pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::text AS bytes', [from]);
    await shop.query('SELECT pg_switch_wal()');
    return { lastSegment: rows[0]!.wal, walBytes: Number(rows[0]!.bytes) };
  }

  const results: Record<'off' | 'on', number[]> = { off: [], on: [] };
  for (let round = 1; round <= rounds; round++) {
    for (const mode of ['off', 'on'] as const) {
      const id = `${mode}-${round}`;
      log(`round ${round}, previews ${mode}: making the slots`);
      // The slots (and, on, the publication) made, at the current position: the backlog then waits in them.
      await stream(jobOf(mode, `${id}-setup`), async (reporter) => {
        while (!reporter.streaming()) await new Promise((r) => setTimeout(r, 100));
        await new Promise((r) => setTimeout(r, 1000));
      });
      log(`round ${round}, previews ${mode}: writing the backlog`);
      const { lastSegment, walBytes } = await workload();
      log(`round ${round}, previews ${mode}: streaming ${(walBytes / MB).toFixed(0)} MB of WAL up to ${lastSegment}`);
      const began = Date.now();
      let ended = 0;
      const reporter = await stream(jobOf(mode, id), async (r) => {
        ended = await r.finished(lastSegment);
      }, true);
      const seconds = (ended - began) / 1000;
      const finished = reporter.segments.filter((s) => !s.partial);
      const withPreviews = finished.filter((s) => s.previewsKey).length;
      if (mode === 'on' && withPreviews !== finished.length) throw new Error(`${finished.length - withPreviews} of ${finished.length} segments have no previews: ${JSON.stringify(finished.filter((s) => !s.previewsKey))}`);
      if (mode === 'off' && withPreviews) throw new Error('previews were made with them off');
      const mbps = walBytes / MB / seconds;
      results[mode].push(mbps);
      log(`round ${round}, previews ${mode}: ${(walBytes / MB).toFixed(0)} MB of WAL in ${finished.length} segments streamed in ${seconds.toFixed(2)} s: ${mbps.toFixed(1)} MB/s${mode === 'on' ? `, ${finished.reduce((n, s) => n + (s.previewRows ?? 0), 0)} preview rows` : ''}`);
      await shop.query('TRUNCATE customers');
    }
    log(`round ${round}: on/off ${(results.on[round - 1]! / results.off[round - 1]!).toFixed(2)}x`);
  }
  const best = (values: number[]) => Math.max(...values);
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(`WAL streaming, previews off: best ${best(results.off).toFixed(1)} MB/s, median ${median(results.off).toFixed(1)} MB/s`);
  console.log(`WAL streaming, previews on:  best ${best(results.on).toFixed(1)} MB/s, median ${median(results.on).toFixed(1)} MB/s`);
  console.log(`ratio on/off: best ${(best(results.on) / best(results.off)).toFixed(2)}x, median ${(median(results.on) / median(results.off)).toFixed(2)}x, per round ${results.on.map((v, i) => (v / results.off[i]!).toFixed(2)).join(', ')} (target: at least 0.9x)`);
  await shop.end();
  await admin.end();
  await server.stop();
  await s3.stop();
}

try {
  await main();
} finally {
  fs.rmSync(stateDir, { recursive: true, force: true });
}
