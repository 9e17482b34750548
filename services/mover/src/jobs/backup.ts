import { hostname } from 'node:os';
import { Readable } from 'node:stream';
import { STRATA } from '@sigil/proto/strata';
import { backupPrefix, baseKey, dataKey, inventoryKey, manifestKey, type BackupJob } from '@sigil/proto/strata-jobs';
import { driverFor } from '../engines/index.ts';
import { baseBackup, baseBackupVersion, bootstrapSuperuser } from '../engines/postgres/physical.ts';
import type { DriverEngine, DumpProcess, Inventory, Position } from '../engines/types.ts';
import { createS3Client, listKeys, ObjectExistsError, objectExists, putObjectUnique, removeObjects, runUploadPipeline, downloadStream, readSmall, type S3Client } from '@strata/stream';
import type { Reporter } from '../reports.ts';
import { runTogether } from '../engines/together.ts';
import { backupUpload } from './upload.ts';
import { acquireLease, leasePrefix, StoodDownError, type Claim, type HeldLease, type LeaseTiming } from './backup-lease.ts';
import { judgeLoad } from './load-guard.ts';
import { runExports } from './exports.ts';
import { inventoryWithCounts } from './exact-counts.ts';

export interface ManifestObject {
  key: string;
  sha256: string;
  role: 'data' | 'inventory' | 'export';
  database?: string;
  format: string;
  name: string;
  compression: 'zstd' | 'none';
  size: number;
  rawSize: number;
  /** Where the binlog stood at this dump's snapshot (MariaDB/MySQL): its changes replay from here. */
  position?: Position;
  /** A selective export: the rows its query returned, and the query. */
  rows?: number;
  sql?: string;
}

/** How one attempt of a backup runs; the worker's attempts use the defaults. */
export interface BackupAttemptOptions {
  /** This attempt's id in the backup's lease (default: a random one). */
  attempt?: string;
  /** The lease's timing (tests shorten it). */
  lease?: Partial<LeaseTiming>;
  /** Another attempt of the same backup holds its lease: this one waits for it. */
  onWaiting?: (holder: Claim) => void;
}

/** What one attempt did so far: what its failure path may undo. */
interface Attempt {
  client: S3Client;
  base: string;
  manifestKey: string;
  lease?: HeldLease;
  /** Every key this attempt wrote or began to write: all that its failure path removes. */
  written: Set<string>;
  manifestWritten: boolean;
}

/**
 * One full logical backup: every database is dumped by the engine's tool and streamed through
 * compression, age encryption, a SHA-256 tap and a multipart upload; then the inventory (a catalog
 * object); then the manifest, last, under a key of its own. A failure removes what was written, so no
 * object remains that a restore could mistake for a backup.
 *
 * A job can be delivered again while an attempt still runs (its heartbeat late, its mover stalled), in this mover or
 * another: an attempt works under the backup's prefix only while it holds the backup's lease (backup-lease.ts). One
 * that finds another attempt holding it touches nothing and reports nothing. *Decision:* it waits, its message kept
 * alive by the worker's heartbeat, until the holder ends, and then resolves (the message is acknowledged): the holder
 * reports the outcome itself. Acknowledging at once would lose the job if the holder's mover then died (the broker
 * redelivers only the live delivery, this one); throwing to have it redelivered later would spend the job's five
 * deliveries within minutes while a backup can run for hours, with the same loss. Waiting keeps a standby instead: if
 * the holder dies its claim expires and this attempt takes over (reporting a manifest it finds, or running the backup).
 */
export async function runBackup(job: BackupJob, reporter: Reporter, signal: AbortSignal, options: BackupAttemptOptions = {}): Promise<void> {
  const client = createS3Client(job.store);
  const base = backupPrefix(job.store.prefix, job.target.namespace, job.target.name, job.backupId);
  const run: Attempt = { client, base, manifestKey: manifestKey(base), written: new Set(), manifestWritten: false };
  try {
    if (await objectExists(client, job.store.bucket, run.manifestKey)) {
      // A redelivered job whose first attempt finished: report the stored result again.
      await reportStored(job, run, reporter);
      return;
    }
    const acquired = await acquireLease({ client, bucket: job.store.bucket, base }, { signal, attempt: options.attempt, timing: options.lease, onWaiting: options.onWaiting });
    if (acquired.kind === 'ended elsewhere') return;
    run.lease = acquired.lease;
    await runHoldingLease(job, reporter, signal, run, acquired.tookOver);
  } catch (error) {
    await endInFailure(job, reporter, run, error);
  }
}

async function runHoldingLease(job: BackupJob, reporter: Reporter, signal: AbortSignal, run: Attempt, tookOver: boolean): Promise<void> {
  const { client, base } = run;
  const startedAt = new Date();
  const bucket = job.store.bucket;
  if (await objectExists(client, bucket, run.manifestKey)) {
    // Finished while this attempt waited: its writer reported it, unless it died first (its claim expired: taken over).
    await release(run);
    if (tookOver) await reportStored(job, run, reporter);
    return;
  }
  const load = await judgeLoad(job);
  if (load.postpone) {
    // Nothing was written: the catalog waits postponeFor and hands the run out again.
    await release(run);
    await reporter.report('backup.postponed', load.report);
    return;
  }
  // What a dead attempt left (its claim expired): while this attempt holds the lease no other writes here.
  await removeAll(client, bucket, base, leasePrefix(base));
  await reporter.report('backup.started', { backupId: job.backupId, startedAt: startedAt.toISOString(), jobName: `mover@${hostname()}` });
  if (job.activeDeadlineMs > 0) deadlines.set(job.backupId, startedAt.getTime() + job.activeDeadlineMs);
  const wrote = (key: string) => void run.written.add(key);
  const manifest = await backUp(job, client, base, reporter, signal, startedAt, load.warnings, wrote).finally(() => deadlines.delete(job.backupId));
  if (!(await run.lease?.stillHeld())) throw new Error(`another attempt took the backup over (this one's lease expired while it ran)`);
  await putObjectUnique(client, bucket, run.manifestKey, Buffer.from(JSON.stringify(manifest, null, 2)), {
    disableConditionalPut: job.store.disableConditionalPut,
    contentType: 'application/json',
  });
  run.manifestWritten = true;
  await release(run);
  await reporter.report('backup.succeeded', { backupId: job.backupId, manifestKey: run.manifestKey, manifest });
}

/**
 * How an attempt that threw ends. It reports the backup failed only when no other attempt is at it and no manifest
 * exists, and then removes only what it wrote itself:
 * - it stood down while another attempt held the lease: nothing to remove or report; the error goes to the worker and
 *   the job is offered again (to find the holder still at work, or the manifest);
 * - another attempt took the lease over (this one's expired while its mover stalled): that attempt reports;
 * - a manifest exists (written here, or by another attempt): the backup is done and nothing of it is removed; what
 *   failed came after (a report that could not be sent), so the error goes to the worker, whose redelivery reports the
 *   stored manifest.
 */
async function endInFailure(job: BackupJob, reporter: Reporter, run: Attempt, error: unknown): Promise<void> {
  if (error instanceof StoodDownError) throw error;
  if (run.lease && !(await run.lease.stillHeld().catch(() => true))) {
    await release(run);
    return;
  }
  const manifestExists = run.manifestWritten || error instanceof ObjectExistsError || (await objectExists(run.client, job.store.bucket, run.manifestKey).catch(() => false));
  if (manifestExists) {
    await release(run);
    throw error;
  }
  await removeObjects(run.client, job.store.bucket, [...run.written]).catch(() => undefined);
  await release(run);
  await reporter.report('backup.failed', { backupId: job.backupId, message: messageOf(error), finishedAt: new Date().toISOString() });
}

async function reportStored(job: BackupJob, run: Attempt, reporter: Reporter): Promise<void> {
  const manifest = JSON.parse((await readSmall(await downloadStream(run.client, job.store.bucket, run.manifestKey))).toString('utf8')) as Record<string, unknown>;
  await reporter.report('backup.succeeded', { backupId: job.backupId, manifestKey: run.manifestKey, manifest });
}

/** Ends the lease before the outcome is reported: a failed backup's prefix is empty once the catalog hears of it. */
async function release(run: Attempt): Promise<void> {
  const lease = run.lease;
  run.lease = undefined;
  await lease?.release();
}

type Progress = (stage: string, bytes: number) => void;
/** Notes a key the attempt is about to write (before the upload: a failed one may leave an object or parts behind). */
export type Wrote = (key: string) => void;

/** When each running backup must be done by (spec jobs.activeDeadline, counted from its start). */
const deadlines = new Map<string, number>();

interface DataResult {
  objects: ManifestObject[];
  position: Position;
  warnings: string[];
  commands: string[][];
  rawBytes: number;
  /** physical: the role a recovered copy of the server is entered as. */
  superuser?: string;
}

/**
 * Streams one tool's stdout into the store as an encrypted object; the tool is stopped when the upload fails. `rawBytes`
 * is the tool's output: counted on its way through, or as zstd counted it where zstd read the tool directly.
 */
async function uploadDump(job: BackupJob, client: S3Client, dump: DumpProcess, key: string, signal: AbortSignal, onProgress: (raw: number) => void) {
  const deadline = job.activeDeadlineMs > 0 ? deadlines.get(job.backupId) : undefined;
  const watchdog = deadline !== undefined ? setTimeout(() => dump.kill(), Math.max(0, deadline - Date.now())) : undefined;
  const precompressed = dump.compressedBy;
  try {
    const result = await runTogether(
      runUploadPipeline({ ...backupUpload(job, client, key, signal), source: dump.stdout, onProgress, ...(precompressed ? { precompressed } : {}) }),
      dump.done,
      dump.kill,
    );
    if (!precompressed) return result;
    const { readBytes, writtenBytes } = await precompressed.totals;
    if (writtenBytes !== result.rawBytes) throw new Error(`zstd wrote ${writtenBytes} bytes but ${result.rawBytes} arrived`);
    return { ...result, rawBytes: readBytes };
  } finally {
    if (watchdog) clearTimeout(watchdog);
  }
}

/**
 * Logical: one dump per database. The backup's position is the one the first dump recorded at its snapshot (each
 * dump's own is kept on its object, since each database is read in a snapshot of its own); a server whose dumps
 * record none keeps the position read right before them.
 */
async function dumpDatabases(job: BackupJob, client: S3Client, base: string, databases: string[], signal: AbortSignal, progress: Progress, wrote: Wrote): Promise<DataResult> {
  const engine = job.database.engine as DriverEngine;
  const driver = driverFor(engine);
  const position: Position = await driver.position(job.database);
  const compressed = job.compression.algorithm === 'zstd';
  const result: DataResult = { objects: [], position, warnings: [], commands: [], rawBytes: 0 };
  for (const database of databases) {
    const dump = driver.dump(job.database, database, { excludeData: job.excludeData, excludeTables: job.excludeTables, compression: job.compression });
    const key = dataKey(base, database, engine, compressed);
    progress(`dump ${database}`, result.rawBytes);
    wrote(key);
    const stored = await uploadDump(job, client, dump, key, signal, (raw) => progress(`dump ${database}`, result.rawBytes + raw));
    result.commands.push(...dump.commands); // known once the dump ran: its plan is made asynchronously
    const dumpPosition = await dump.position;
    // The position read before the dump is older than the dump's snapshot: replaying from it would apply again what
    // the dump already holds (a duplicate key on restore).
    if (dumpPosition && result.objects.length === 0) {
      for (const key of Object.keys(position) as Array<keyof Position>) delete position[key];
      Object.assign(position, dumpPosition);
    }
    result.warnings.push(...dump.warnings.map((w) => `${database}: ${w}`));
    result.rawBytes += stored.rawBytes;
    result.objects.push({
      key, sha256: stored.sha256, role: 'data', database, format: engine === 'postgres' ? 'pg_dump-custom' : 'sql', name: database,
      compression: job.compression.algorithm, size: stored.storedBytes, rawSize: stored.rawBytes,
      ...(dumpPosition?.binlogFile ? { position: dumpPosition } : {}),
    });
  }
  return result;
}

/** Physical (postgres): the whole server as one pg_basebackup tar, with the WAL that makes it consistent and its backup manifest. */
async function baseBackupServer(job: BackupJob, client: S3Client, base: string, signal: AbortSignal, progress: Progress, wrote: Wrote): Promise<DataResult> {
  const superuser = bootstrapSuperuser(job.database);
  superuser.catch(() => {});
  const dump = baseBackup(job.database, `strata ${job.backupId}`, job.compression);
  const key = baseKey(base, job.compression.algorithm === 'zstd');
  progress('base backup', 0);
  wrote(key);
  const stored = await uploadDump(job, client, dump, key, signal, (raw) => progress('base backup', raw));
  const position = await dump.position;
  return {
    objects: [{ key, sha256: stored.sha256, role: 'data', format: 'pg_basebackup-tar', name: 'base', compression: job.compression.algorithm, size: stored.storedBytes, rawSize: stored.rawBytes }],
    position,
    warnings: dump.warnings,
    commands: dump.commands,
    rawBytes: stored.rawBytes,
    superuser: await superuser,
  };
}

async function backUp(job: BackupJob, client: S3Client, base: string, reporter: Reporter, signal: AbortSignal, startedAt: Date, loadWarnings: string[], wrote: Wrote): Promise<Record<string, unknown>> {
  const engine = job.database.engine;
  if (engine === 'mongodb') throw new Error('mongodb backups are not available in this release');
  const physical = job.mode === 'physical';
  if (physical && engine !== 'postgres') throw new Error(`physical backups of ${engine} are not available; use the logical mode`);
  const driver = driverFor(engine);
  const access = job.database;
  // The tools' versions (for the manifest) are asked while the data streams: each is a process to start.
  const tools = Promise.all([driver.tools(), physical ? baseBackupVersion() : undefined]);
  tools.catch(() => {});
  const [server, databases] = await Promise.all([driver.serverInfo(access), driver.listDatabases(access, job.databases)]);
  if (databases.length === 0) throw new Error('the target has no database to back up');
  const compressed = job.compression.algorithm === 'zstd';
  const progress: Progress = (stage, bytes) => reporter.progress('backup', job.backupId, job.namespace, job.name, { stage, bytes, totalBytes: server.sizeBytes });
  const beforeData = new Date();
  const data = physical ? await baseBackupServer(job, client, base, signal, progress, wrote) : await dumpDatabases(job, client, base, databases, signal, progress, wrote);
  // A physical base is consistent once its end point is replayed, that is as of its end; a logical dump as of its start.
  const consistentAt = physical ? new Date() : beforeData;
  const { objects, position, warnings, commands } = data;
  const doneBytes = data.rawBytes;
  objects.push(...(await runExports(job, client, base, databases, signal, (stage) => progress(stage, doneBytes), wrote)));

  progress('inventory', doneBytes);
  const inventory: Inventory = await inventoryWithCounts(driver, job, databases, server);
  const inventoryBytes = Buffer.from(JSON.stringify(inventory));
  const iKey = inventoryKey(base, compressed);
  wrote(iKey);
  const stored = await runUploadPipeline({
    source: Readable.from([inventoryBytes]),
    smallSource: true,
    compression: job.compression,
    recipients: [...job.store.ageRecipients, ...job.store.catalogRecipients],
    client,
    bucket: job.store.bucket,
    key: iKey,
    partSizeBytes: job.store.partSizeBytes,
    concurrency: 1,
    bandwidthBytesPerSecond: job.bandwidthBytesPerSecond,
    stallTimeoutMs: job.stallTimeoutMs,
    signal,
  });
  objects.push({ key: iKey, sha256: stored.sha256, role: 'inventory', format: 'json', name: 'inventory', compression: job.compression.algorithm, size: stored.storedBytes, rawSize: stored.rawBytes });

  const completedAt = new Date();
  const durationSeconds = (completedAt.getTime() - startedAt.getTime()) / 1000;
  const rawBytes = objects.filter((o) => o.role === 'data').reduce((sum, o) => sum + o.rawSize, 0);
  const storedBytes = objects.reduce((sum, o) => sum + o.size, 0);
  const tables = inventory.databases.reduce((sum, d) => sum + d.tables.length, 0);
  const rowsEstimate = inventory.databases.reduce((sum, d) => sum + d.tables.reduce((s, t) => s + Math.max(0, t.rowsEstimate), 0), 0);
  const migrated = inventory.databases.find((d) => d.migrationVersion);
  const [engineTools, baseBackupTool] = await tools;
  progress('done', rawBytes);
  return {
    version: STRATA.manifestVersion,
    id: job.backupId,
    kind: 'full',
    engine,
    mode: physical ? 'physical' : 'logical',
    ...(data.superuser ? { superuser: data.superuser } : {}),
    policy: job.policy,
    reason: job.reason,
    [STRATA.versionField]: STRATA.version,
    target: job.target,
    server,
    startedAt: startedAt.toISOString(),
    completedAt: completedAt.toISOString(),
    consistentAt: consistentAt.toISOString(),
    position,
    databases,
    recipients: job.store.ageRecipients,
    tiers: [],
    objects,
    inventory: {
      databases: inventory.databases.length,
      tables,
      rowsEstimate,
      bytes: inventory.databases.reduce((sum, d) => sum + d.sizeBytes, 0),
      schemaHash: inventory.schemaHash,
      migrationVersion: migrated?.migrationVersion ?? '',
    },
    stats: {
      rawBytes,
      storedBytes,
      durationSeconds,
      throughputMBps: durationSeconds > 0 ? rawBytes / 1e6 / durationSeconds : 0,
      postpones: job.postpones ?? 0,
      warnings: [...loadWarnings, ...warnings],
    },
    tools: { ...engineTools, ...(baseBackupTool ? { pg_basebackup: baseBackupTool } : {}), commands: commands.map((c) => c.join(' ')) },
    scope: {
      databases: job.databases, excludeData: job.excludeData, excludeTables: job.excludeTables, catalogRecipients: job.store.catalogRecipients,
      ...(job.queries?.length ? { queries: job.queries } : {}),
    },
  };
}

/** Every object under `prefix` but those under `keep`. */
async function removeAll(client: S3Client, bucket: string, prefix: string, keep: string): Promise<void> {
  const keys: string[] = [];
  for await (const key of listKeys(client, bucket, prefix)) if (!key.startsWith(keep)) keys.push(key);
  if (keys.length) await removeObjects(client, bucket, keys);
}

export function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.trim() || 'unknown error';
}
