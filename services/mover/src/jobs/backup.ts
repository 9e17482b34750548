import { hostname } from 'node:os';
import { Readable } from 'node:stream';
import { STRATA } from '@sigil/proto/strata';
import { backupPrefix, dataKey, inventoryKey, manifestKey, type BackupJob } from '@sigil/proto/strata-jobs';
import { driverFor } from '../engines/index.ts';
import type { Inventory, Position } from '../engines/types.ts';
import { createS3Client, listKeys, objectExists, putObjectUnique, removeObjects, runUploadPipeline, downloadStream, type S3Client } from '@strata/stream';
import type { Reporter } from '../reports.ts';

export interface ManifestObject {
  key: string;
  sha256: string;
  role: 'data' | 'inventory';
  database?: string;
  format: string;
  name: string;
  compression: 'zstd' | 'none';
  size: number;
  rawSize: number;
}

/**
 * One full logical backup: every database is dumped by the engine's tool and streamed through
 * compression, age encryption, a SHA-256 tap and a multipart upload; then the inventory (a catalog
 * object); then the manifest, last, under a key of its own. A failure removes what was written, so no
 * object remains that a restore could mistake for a backup.
 */
export async function runBackup(job: BackupJob, reporter: Reporter, signal: AbortSignal): Promise<void> {
  const client = createS3Client(job.store);
  const base = backupPrefix(job.store.prefix, job.target.namespace, job.target.name, job.backupId);
  const mKey = manifestKey(base);
  const startedAt = new Date();
  try {
    if (await objectExists(client, job.store.bucket, mKey)) {
      // A redelivered job whose first attempt finished: report the stored result again.
      const manifest = JSON.parse((await readAll(await downloadStream(client, job.store.bucket, mKey))).toString('utf8')) as Record<string, unknown>;
      await reporter.report('backup.succeeded', { backupId: job.backupId, manifestKey: mKey, manifest });
      return;
    }
    await removeAll(client, job.store.bucket, base);
    await reporter.report('backup.started', { backupId: job.backupId, startedAt: startedAt.toISOString(), jobName: `mover@${hostname()}` });
    const manifest = await backUp(job, client, base, reporter, signal, startedAt);
    await putObjectUnique(client, job.store.bucket, mKey, Buffer.from(JSON.stringify(manifest, null, 2)), {
      disableConditionalPut: job.store.disableConditionalPut,
      contentType: 'application/json',
    });
    await reporter.report('backup.succeeded', { backupId: job.backupId, manifestKey: mKey, manifest });
  } catch (error) {
    await removeAll(client, job.store.bucket, base).catch(() => undefined);
    await reporter.report('backup.failed', { backupId: job.backupId, message: messageOf(error), finishedAt: new Date().toISOString() });
  }
}

async function backUp(job: BackupJob, client: S3Client, base: string, reporter: Reporter, signal: AbortSignal, startedAt: Date): Promise<Record<string, unknown>> {
  const engine = job.database.engine;
  if (engine === 'mongodb') throw new Error('mongodb backups are not available in this release');
  const driver = driverFor(engine);
  const access = job.database;
  const server = await driver.serverInfo(access);
  const databases = await driver.listDatabases(access, job.databases);
  if (databases.length === 0) throw new Error('the target has no database to back up');
  const position: Position = await driver.position(access);
  const consistentAt = new Date();
  const compressed = job.compression.algorithm === 'zstd';
  const objects: ManifestObject[] = [];
  const warnings: string[] = [];
  const commands: string[][] = [];
  let doneBytes = 0;
  const progress = (stage: string, bytes: number) =>
    reporter.progress('backup', job.backupId, job.namespace, job.name, { stage, bytes, totalBytes: server.sizeBytes });

  for (const database of databases) {
    const dump = driver.dump(access, database, { excludeData: job.excludeData, excludeTables: job.excludeTables });
    commands.push(...dump.commands);
    const key = dataKey(base, database, engine, compressed);
    const watchdog = job.activeDeadlineMs > 0 ? setTimeout(() => dump.kill(), job.activeDeadlineMs - (Date.now() - startedAt.getTime())) : undefined;
    try {
      progress(`dump ${database}`, doneBytes);
      const [result] = await Promise.all([
        runUploadPipeline({
          source: dump.stdout,
          compression: job.compression,
          recipients: job.store.ageRecipients,
          client,
          bucket: job.store.bucket,
          key,
          partSizeBytes: job.store.partSizeBytes,
          concurrency: job.store.concurrency,
          bandwidthBytesPerSecond: job.bandwidthBytesPerSecond,
          stallTimeoutMs: job.stallTimeoutMs,
          onProgress: (raw) => progress(`dump ${database}`, doneBytes + raw),
          signal,
          contentType: 'application/octet-stream',
        }).catch((error: unknown) => {
          dump.kill();
          throw error;
        }),
        dump.done,
      ]);
      const dumpPosition = await dump.position;
      if (dumpPosition && Object.keys(position).length === 0) Object.assign(position, dumpPosition);
      warnings.push(...dump.warnings.map((w) => `${database}: ${w}`));
      doneBytes += result.rawBytes;
      objects.push({
        key,
        sha256: result.sha256,
        role: 'data',
        database,
        format: engine === 'postgres' ? 'pg_dump-custom' : 'sql',
        name: database,
        compression: job.compression.algorithm,
        size: result.storedBytes,
        rawSize: result.rawBytes,
      });
    } finally {
      if (watchdog) clearTimeout(watchdog);
    }
  }

  progress('inventory', doneBytes);
  const inventory: Inventory = await driver.inventory(access, databases);
  const inventoryBytes = Buffer.from(JSON.stringify(inventory));
  const iKey = inventoryKey(base, compressed);
  const stored = await runUploadPipeline({
    source: Readable.from([inventoryBytes]),
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
  progress('done', rawBytes);
  return {
    version: STRATA.manifestVersion,
    id: job.backupId,
    kind: 'full',
    engine,
    mode: 'logical',
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
      postpones: 0,
      warnings,
    },
    tools: { ...(await driver.tools()), commands: commands.map((c) => c.join(' ')) },
    scope: { databases: job.databases, excludeData: job.excludeData, excludeTables: job.excludeTables, catalogRecipients: job.store.catalogRecipients },
  };
}

async function removeAll(client: S3Client, bucket: string, prefix: string): Promise<void> {
  const keys: string[] = [];
  for await (const key of listKeys(client, bucket, prefix)) keys.push(key);
  if (keys.length) await removeObjects(client, bucket, keys);
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.trim() || 'unknown error';
}
