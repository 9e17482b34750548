/**
 * Store garbage collection (issue 25, point 3), on demand:
 *
 *   node_modules/.bin/node test/bench/store-gc.ts [--objects 100000] [--baseline 5000] [--rtt-ms 20] [--put-concurrency 32]
 *
 * Starts the embedded S3 (s3rver, in this process, through infra/local) in a temporary directory,
 * fills a prefix with `--objects` small expired objects (parallel PUTs, 100 to a "backup" folder)
 * and deletes them all with `sweepStore` (list, DeleteObjects of 1,000 keys a call while the listing
 * goes on). The baseline, through the same client in the same run: one DeleteObject per key, one
 * after the other, on `--baseline` objects, half before the sweep and half after so that a change in
 * the machine's load shows as a spread. For context, a sample is also deleted with 16 DeleteObject
 * requests in flight. Prints each rate (objects deleted per second), the ratio to the baseline
 * (target >= 20x) and the heap during the sweep (the listing is not held in memory; the heap is
 * s3rver's too). Every phase checks its prefix is empty afterwards.
 *
 * On loopback a request costs next to nothing, and s3rver's own work per key (listing: a stat of
 * three files and a JSON read; deleting: a stat, three unlinks, a readdir) is all that batching
 * cannot save, so the ratio there is bounded by s3rver, not by the sweep. A real store is a round
 * trip away: the same measures are taken again (on a tenth of the objects) through a TCP proxy that
 * holds every chunk `--rtt-ms / 2` each way (default 20 ms; 0 skips it).

 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startS3, type S3Handle } from '@sigil/local-stack';
import { createS3Client, ensureBucket, listKeys, sweepStore, type S3Client } from '@strata/stream';

const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  const value = i >= 0 ? Number.parseInt(args[i + 1] ?? '', 10) : Number.NaN;
  return Number.isInteger(value) && value >= 0 ? value : fallback;
};
const OBJECTS = Math.max(1, option('--objects', 100_000));
const BASELINE = Math.max(2, Math.min(option('--baseline', 5000), OBJECTS));
const RTT_MS = option('--rtt-ms', 20);
const PUT_CONCURRENCY = Math.max(1, option('--put-concurrency', 32));
const PARALLEL_DELETES = 16;
const OBJECT_BYTES = 64;
const PER_FOLDER = 100;
const BUCKET = 'strata-gc-bench';
const MiB = 1024 * 1024;

const pad = (n: number, width: number): string => String(n).padStart(width, '0');
const perSecond = (objects: number, ms: number): number => objects / (ms / 1000);
const fmt = (rate: number): string => `${rate.toFixed(0)} objects/s`;
const load = (): string => os.loadavg().map((l) => l.toFixed(1)).join(' ');

interface Rate {
  objects: number;
  ms: number;
}
const rateOf = (r: Rate): number => perSecond(r.objects, r.ms);

/** Fixed-width names, so s3rver's file order (its listing order) is the keys' order. */
function keysFor(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}b${pad(Math.floor(i / PER_FOLDER), 5)}/o${pad(i, 7)}`);
}

async function putAll(client: S3Client, keys: string[]): Promise<void> {
  const body = Buffer.alloc(OBJECT_BYTES, 'x');
  let next = 0;
  let written = 0;
  const worker = async (): Promise<void> => {
    while (next < keys.length) {
      await client.putObject(BUCKET, keys[next++]!, body, body.length);
      if (++written % 10_000 === 0) process.stdout.write(`  ${written} of ${keys.length} objects written\r`);
    }
  };
  await Promise.all(Array.from({ length: PUT_CONCURRENCY }, worker));
}

async function expectEmpty(client: S3Client, prefix: string): Promise<void> {
  let left = 0;
  for await (const key of listKeys(client, BUCKET, prefix)) if (key) left++;
  if (left !== 0) throw new Error(`${left} object(s) left under ${prefix}`);
}

async function timed(job: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await job();
  return performance.now() - start;
}

/** A store `rttMs` away: a TCP proxy that holds every chunk half of it each way (timers of one delay fire in order). */
async function startDelayProxy(target: string, rttMs: number): Promise<{ endpoint: string; close: () => void }> {
  const { hostname, port } = new URL(target);
  const oneWay = Math.max(1, Math.round(rttMs / 2));
  const relay = (from: net.Socket, to: net.Socket): void => {
    from.on('data', (chunk) => setTimeout(() => !to.destroyed && to.write(chunk), oneWay));
    from.on('end', () => setTimeout(() => to.end(), oneWay));
    from.on('error', () => to.destroy());
    from.on('close', () => setTimeout(() => to.destroy(), oneWay + 1));
  };
  const server = net.createServer((downstream) => {
    const upstream = net.connect(Number(port), hostname);
    relay(downstream, upstream);
    relay(upstream, downstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return { endpoint: `http://127.0.0.1:${address.port}`, close: () => server.close() };
}

/** One DeleteObject request per key, `inFlight` at a time, on objects written for it. */
async function deleteOneByOne(seed: S3Client, client: S3Client, prefix: string, count: number, inFlight: number): Promise<Rate> {
  const keys = keysFor(prefix, count);
  await putAll(seed, keys);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < keys.length) await client.removeObject(BUCKET, keys[next++]!);
  };
  const ms = await timed(() => Promise.all(Array.from({ length: inFlight }, worker)));
  await expectEmpty(seed, prefix);
  return { objects: count, ms };
}

interface SweepRun extends Rate {
  bytes: number;
  heapBeforeMiB: number;
  heapPeakMiB: number;
}

/** Samples the heap every 50 ms while `job` runs. */
async function heapDuring(job: () => Promise<void>): Promise<{ before: number; peak: number }> {
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 50);
  try {
    await job();
  } finally {
    clearInterval(timer);
  }
  return { before: before / MiB, peak: peak / MiB };
}

/** Writes `count` objects, lets a second pass, then sweeps them all through `client`. */
async function sweepAll(seed: S3Client, client: S3Client, prefix: string, count: number): Promise<SweepRun> {
  const writing = await timed(() => putAll(seed, keysFor(prefix, count)));
  console.log(`  wrote ${count} objects in ${(writing / 1000).toFixed(0)} s (${fmt(perSecond(count, writing))})        `);
  await new Promise((resolve) => setTimeout(resolve, 1100)); // last-modified times are whole seconds
  const passStartedAt = new Date();
  let ms = 0;
  let result: Awaited<ReturnType<typeof sweepStore>> | undefined;
  const heap = await heapDuring(async () => {
    ms = await timed(async () => (result = await sweepStore({ client, bucket: BUCKET, prefix, isNeeded: () => false, passStartedAt, skewMarginMs: 0 })));
  });
  if (result?.error) throw new Error(`sweep stopped: ${result.error}`);
  if (result?.objects !== count) throw new Error(`sweep deleted ${result?.objects} of ${count} objects`);
  await expectEmpty(seed, prefix);
  return { objects: count, ms, bytes: result.bytes, heapBeforeMiB: heap.before, heapPeakMiB: heap.peak };
}

/** The baseline (half before the sweep, half after), the sweep, and the parallel context, on one store path. */
async function measure(name: string, seed: S3Client, client: S3Client, objects: number, baseline: number): Promise<void> {
  console.log(`${name}: sweep of ${objects} objects, baseline of ${baseline}; load ${load()}`);
  const half = Math.ceil(baseline / 2);
  const before = await deleteOneByOne(seed, client, `${name}/baseline-before/`, half, 1);
  const sweep = await sweepAll(seed, client, `${name}/expired/`, objects);
  const after = await deleteOneByOne(seed, client, `${name}/baseline-after/`, baseline - half, 1);
  const parallel = await deleteOneByOne(seed, client, `${name}/parallel/`, baseline, PARALLEL_DELETES);
  const base = perSecond(before.objects + after.objects, before.ms + after.ms);
  const swept = rateOf(sweep);
  console.log(`  baseline, one DeleteObject per key:      ${fmt(base)} (before the sweep ${fmt(rateOf(before))}, after ${fmt(rateOf(after))})`);
  console.log(`  context, ${PARALLEL_DELETES} DeleteObject requests in flight: ${fmt(rateOf(parallel))} (${(rateOf(parallel) / base).toFixed(1)}x the baseline)`);
  console.log(`  sweepStore, DeleteObjects of 1,000 keys: ${fmt(swept)}, ${(sweep.ms / 1000).toFixed(1)} s for ${sweep.objects} objects (${sweep.bytes} bytes); heap ${sweep.heapBeforeMiB.toFixed(0)} MiB before, ${sweep.heapPeakMiB.toFixed(0)} MiB at most`);
  console.log(`  ratio: ${(swept / base).toFixed(1)}x the baseline (target >= 20x), ${(swept / rateOf(parallel)).toFixed(1)}x the ${PARALLEL_DELETES} in flight; load ${load()}`);
}

function clientFor(s3: S3Handle, endpoint: string): S3Client {
  return createS3Client({ endpoint, region: s3.region, pathStyle: true, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey });
}

async function main(): Promise<void> {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-gc-bench-'));
  const s3 = await startS3({ stateDir, log: () => {} });
  try {
    const client = clientFor(s3, s3.endpoint);
    await ensureBucket(client, BUCKET, s3.region);
    console.log(`store GC against the embedded s3rver (in this process), objects of ${OBJECT_BYTES} bytes, ${os.cpus().length} CPUs`);
    await measure('loopback', client, client, OBJECTS, BASELINE);
    if (RTT_MS > 0) {
      const proxy = await startDelayProxy(s3.endpoint, RTT_MS);
      try {
        await measure(`rtt-${RTT_MS}ms`, client, clientFor(s3, proxy.endpoint), Math.max(1, Math.round(OBJECTS / 10)), Math.max(2, Math.round(BASELINE / 10)));
      } finally {
        proxy.close();
      }
    }
  } finally {
    await s3.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

await main();
