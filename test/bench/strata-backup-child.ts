/**
 * The measured side of test/bench/strata-backup.ts, in a process of its own so its peak RSS is the
 * mover's alone (the embedded S3 server runs in the parent):
 *
 *   node_modules/.bin/node test/bench/strata-backup-child.ts <config.json>
 *
 * Modes (from the config file the parent writes):
 *   backup    `runBackup(job, reporter, signal)` exactly as the worker calls it, with a recording
 *             Reporter; the job's store is the parent's s3rver.
 *   pipeline  everything of the backup's data path but the upload: the driver's `dump()` (pg_dump)
 *             → raw counter → compress → age encrypt → SHA-256 tap → throttle (0 = pass-through)
 *             → stall watchdog → a Writable that drops the bytes.
 *
 * Writes its result (times, bytes, RSS samples, CPU, reports) as JSON to `config.resultFile`.
 */
import fs from 'node:fs';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BackupJob, DatabaseAccess, Progress, StrataReports } from '@sigil/proto';
import { runBackup, type Reporter } from '@strata/mover';
import { driverFor } from '@strata/mover/engines';
import { createAgeEncryptStream } from '@strata/stream/age';
import { createByteCounter, createCoalescer, createHashTap, createStallWatchdog, createThrottle } from '@strata/stream/taps';
import { createCompressStream, type CompressionOptions } from '@strata/stream/zstd';

export interface ChildConfig {
  mode: 'backup' | 'pipeline';
  resultFile: string;
  /** Abort the run after this long. */
  timeoutMs: number;
  /** mode backup */
  job?: BackupJob;
  /** mode pipeline */
  pipeline?: { access: DatabaseAccess; database: string; compression: CompressionOptions; recipients: string[]; stallTimeoutMs: number };
}

export interface ChildResult {
  mode: ChildConfig['mode'];
  ok: boolean;
  failure?: string;
  /** Wall time of the measured call (runBackup, or the pipeline), process start-up excluded. */
  seconds: number;
  /** backup: from the first `dump` progress to the `inventory` one (the streaming phase alone). */
  streamSeconds?: number;
  rawBytes: number;
  storedBytes: number;
  sha256: string;
  parts?: number;
  manifestKey?: string;
  manifest?: Record<string, unknown>;
  reports: { type: string; atSeconds: number }[];
  progressEvents: number;
  lastProgress?: Omit<Progress, 'updatedAt'>;
  /** process.resourceUsage().maxRSS at the end, MiB. */
  peakRssMiB: number;
  /** RSS right before the measured call (node + loaded modules), MiB. */
  startRssMiB: number;
  /** RSS sampled every 200 ms during the call, MiB. */
  rssSamples: { count: number; maxMiB: number; medianMiB: number };
  /** CPU of this process (all its threads, zstd workers included) during the call, seconds. */
  cpu: { user: number; system: number };
}

const MiB = 1024 * 1024;

const configPath = process.argv[2];
if (!configPath) {
  console.error('usage: node test/bench/strata-backup-child.ts <config.json>');
  process.exit(2);
}
const config = JSON.parse(fs.readFileSync(configPath, 'utf8')) as ChildConfig;

const samples: number[] = [];
const sampler = setInterval(() => samples.push(process.memoryUsage.rss() / MiB), 200);

const startRssMiB = process.memoryUsage.rss() / MiB;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const at = (): number => (performance.now() - t0) / 1000;
const controller = new AbortController();
const deadline = setTimeout(() => controller.abort(new Error(`benchmark child: gave up after ${config.timeoutMs} ms`)), config.timeoutMs);

let result: Omit<ChildResult, 'mode' | 'seconds' | 'peakRssMiB' | 'startRssMiB' | 'rssSamples' | 'cpu'>;
try {
  result = config.mode === 'backup' ? await backup(config.job!) : await uploadlessPipeline(config.pipeline!);
} catch (error) {
  result = { ok: false, failure: error instanceof Error ? error.message : String(error), rawBytes: 0, storedBytes: 0, sha256: '', reports: [], progressEvents: 0 };
}
const seconds = at();
const cpu = process.cpuUsage(cpu0);
clearInterval(sampler);
clearTimeout(deadline);

const sorted = [...samples].sort((a, b) => a - b);
const full: ChildResult = {
  mode: config.mode,
  ...result,
  seconds,
  peakRssMiB: process.resourceUsage().maxRSS / 1024,
  startRssMiB,
  rssSamples: { count: samples.length, maxMiB: sorted.at(-1) ?? 0, medianMiB: sorted[Math.floor(sorted.length / 2)] ?? 0 },
  cpu: { user: cpu.user / 1e6, system: cpu.system / 1e6 },
};
fs.writeFileSync(config.resultFile, JSON.stringify(full, null, 2));
process.exitCode = full.ok ? 0 : 1;

async function backup(job: BackupJob): Promise<typeof result> {
  const reports: { type: string; atSeconds: number; data: unknown }[] = [];
  const progress: { atSeconds: number; progress: Omit<Progress, 'updatedAt'> }[] = [];
  const reporter: Reporter = {
    async report<K extends keyof StrataReports>(type: K, data: StrataReports[K]): Promise<void> {
      reports.push({ type, atSeconds: at(), data });
    },
    progress(_kind, _id, _namespace, _name, p) {
      progress.push({ atSeconds: at(), progress: p });
    },
  };
  await runBackup(job, reporter, controller.signal);

  const summary = reports.map((r) => ({ type: r.type, atSeconds: r.atSeconds }));
  const firstDump = progress.find((p) => p.progress.stage.startsWith('dump ') || p.progress.stage === 'base backup');
  const inventory = progress.find((p) => p.progress.stage === 'inventory');
  const base = { reports: summary, progressEvents: progress.length, lastProgress: progress.at(-1)?.progress };
  const last = reports.at(-1);
  if (last?.type !== 'backup.succeeded') {
    const failed = reports.find((r) => r.type === 'backup.failed')?.data as StrataReports['backup.failed'] | undefined;
    return { ...base, ok: false, failure: failed?.message ?? `no backup.succeeded report (got ${summary.map((r) => r.type).join(', ')})`, rawBytes: 0, storedBytes: 0, sha256: '' };
  }
  const succeeded = last.data as StrataReports['backup.succeeded'];
  const objects = (succeeded.manifest.objects ?? []) as { role: string; sha256: string; size: number; rawSize: number }[];
  const data = objects.filter((o) => o.role === 'data');
  return {
    ...base,
    ok: true,
    ...(firstDump && inventory ? { streamSeconds: inventory.atSeconds - firstDump.atSeconds } : {}),
    rawBytes: data.reduce((s, o) => s + o.rawSize, 0),
    storedBytes: data.reduce((s, o) => s + o.size, 0),
    sha256: data[0]?.sha256 ?? '',
    manifestKey: succeeded.manifestKey,
    manifest: succeeded.manifest,
  };
}

async function uploadlessPipeline(p: NonNullable<ChildConfig['pipeline']>): Promise<typeof result> {
  const dump = driverFor('postgres').dump(p.access, p.database, { excludeData: [], excludeTables: [] });
  const raw = createByteCounter();
  const stored = createHashTap();
  const watchdog = createStallWatchdog(p.stallTimeoutMs, () => watchdog.destroy(new Error(`no data flowed for ${p.stallTimeoutMs} ms`)));
  let sunk = 0;
  const sink = new Writable({
    highWaterMark: 1024 * 1024,
    write(chunk: Buffer, _encoding, callback) {
      sunk += chunk.length;
      callback();
    },
  });
  try {
    await Promise.all([
      pipeline(dump.stdout, raw, createCoalescer(), createCompressStream(p.compression), await createAgeEncryptStream(p.recipients), stored, createThrottle(0), watchdog, sink, {
        signal: controller.signal,
      }),
      dump.done,
    ]);
  } catch (error) {
    dump.kill();
    throw error;
  }
  if (sunk !== stored.bytes) throw new Error(`sink saw ${sunk} bytes, the hash tap ${stored.bytes}`);
  return { ok: true, rawBytes: raw.bytes, storedBytes: stored.bytes, sha256: stored.digest(), reports: [], progressEvents: 0 };
}
