import { restoredDatabaseNames, type RestoreJob } from '@sigil/proto/strata-jobs';
import { driverFor } from '../engines/index.ts';
import fs from 'node:fs';
import path from 'node:path';
import { createS3Client, downloadStream, readSmall, runDownloadPipeline, type S3Client } from '@strata/stream';
import { replayBinlogs } from '../engines/mysql/binlog.ts';
import type { Position } from '../engines/types.ts';
import type { Reporter } from '../reports.ts';
import { messageOf, type ManifestObject } from './backup.ts';
import { recoverPhysical, type PhysicalManifest } from './recover.ts';
import { runRestoreChecks } from './restore-checks.ts';
import { fetchSegment } from './segment-fetch.ts';
import { copyPostgres, placementOf, postgresDatabaseExists, scratchName } from './placement.ts';
import { runTogether } from '../engines/together.ts';
import { jobTempDir } from '../temp-dir.ts';

/**
 * Restores a backup into new databases: each object is downloaded, checked against the manifest's
 * SHA-256, decrypted, decompressed and fed to the engine's restore tool. On any failure the databases
 * this restore created are dropped again.
 */
export async function runRestore(job: RestoreJob, reporter: Reporter, signal: AbortSignal): Promise<void> {
  await reporter.report('restore.started', { restoreId: job.restoreId, startedAt: new Date().toISOString() });
  const engine = job.destination.engine;
  const created: string[] = [];
  try {
    if (engine === 'mongodb') throw new Error('mongodb restores are not available in this release');
    const driver = driverFor(engine);
    const client = createS3Client(job.store);
    const manifest = JSON.parse((await readSmall(await downloadStream(client, job.store.bucket, job.manifestKey))).toString('utf8')) as { objects?: ManifestObject[]; id?: string; mode?: string };
    if (manifest.id !== job.backupId) throw new Error(`manifest ${job.manifestKey} belongs to backup ${manifest.id}, not ${job.backupId}`);
    if (manifest.mode === 'physical') {
      const { names, stoppedAt } = await recoverPhysical(job, manifest as PhysicalManifest, client, reporter, signal, created);
      await succeeded(job, reporter, client, manifest, names, `; ${stoppedAt}`, signal);
      return;
    }
    const objects = (manifest.objects ?? []).filter((o) => o.role === 'data' && job.databases.includes(o.database ?? ''));
    if (objects.length === 0) throw new Error('the backup holds none of the databases asked for');
    const names = new Map(Object.entries(restoredDatabaseNames(job.destination.database, objects.map((o) => o.database ?? ''), job.keepNames)));
    const total = objects.reduce((sum, o) => sum + o.rawSize, 0);
    let done = 0;
    const placement = placementOf(job);
    /** What the restore's message adds (keys left out). */
    const notes: string[] = [];
    for (const object of objects) {
      const final = names.get(object.database ?? '') as string;
      // Postgres tables go through a scratch copy of the whole dump, so they keep their indexes and constraints.
      const viaScratch = engine === 'postgres' && placement.tables !== undefined;
      const target = viaScratch ? scratchName(final) : final;
      if (placement.inPlace && !placement.tables) await driver.dropDatabase(job.destination, final);
      // The driver drops a database it created when its own restore fails; earlier ones are dropped below.
      const intoInitdbDatabase = engine === 'postgres' && placement.freshServer && !viaScratch && (await postgresDatabaseExists(job.destination, target));
      const options = engine === 'mysql' && placement.tables ? { tables: placement.tables, existing: placement.inPlace } : intoInitdbDatabase ? { existing: true } : {};
      const restore = driver.restore(job.destination, target, options);
      const stage = `restore ${object.database} into ${final}${placement.inPlace ? ' (in place)' : ''}`;
      reporter.progress('restore', job.restoreId, job.namespace, job.name, { stage, bytes: done, totalBytes: total });
      await runTogether(
        runDownloadPipeline({
          client,
          bucket: job.store.bucket,
          key: object.key,
          expectedSha256: object.sha256,
          identity: job.store.identity,
          compression: object.compression,
          sink: restore.stdin,
          bandwidthBytesPerSecond: job.bandwidthBytesPerSecond,
          stallTimeoutMs: job.stallTimeoutMs,
          onProgress: (raw) => reporter.progress('restore', job.restoreId, job.namespace, job.name, { stage, bytes: done + raw, totalBytes: total }),
          signal,
        }),
        restore.done,
        restore.kill,
      );
      if (viaScratch) {
        try {
          const note = await copyPostgres(job.destination, target, job.destination, final, placement);
          if (note) notes.push(`${final}: ${note}`);
        } finally {
          await driver.dropDatabase(job.destination, target).catch(() => undefined);
        }
      }
      if (!placement.inPlace) created.push(final);
      done += object.rawSize;
    }
    const replayed = engine === 'mysql' && job.segments?.length ? await replayChanges(job, client, manifest as { position?: Position; objects?: ManifestObject[] }, names, reporter, signal) : '';
    await succeeded(job, reporter, client, manifest, names, `${replayed}${notes.map((n) => `; ${n}`).join('')}`, signal);
  } catch (error) {
    if (engine !== 'mongodb') {
      const driver = driverFor(engine);
      for (const database of created) await driver.dropDatabase(job.destination, database).catch(() => undefined);
    }
    await reporter.report('restore.failed', { restoreId: job.restoreId, message: messageOf(error), finishedAt: new Date().toISOString() });
  }
}

/** Runs the checks the job asked for, then reports success with their results (a failed check does not undo the restore). */
async function succeeded(job: RestoreJob, reporter: Reporter, client: S3Client, manifest: { objects?: ManifestObject[] }, names: Map<string, string>, detail: string, signal: AbortSignal): Promise<void> {
  if (job.checks?.length) reporter.progress('restore', job.restoreId, job.namespace, job.name, { stage: `checks: ${job.checks.join(', ')}`, bytes: 0, totalBytes: 0 });
  const checks = await runRestoreChecks(job, client, manifest, names, signal);
  const summary = [...names].map(([from, to]) => `${from} → ${to}`).join(', ');
  const failed = checks.filter((c) => !c.passed).length;
  const verdict = checks.length ? `; checks: ${failed ? `${failed} of ${checks.length} failed` : `all ${checks.length} passed`}` : '';
  await reporter.report('restore.succeeded', {
    restoreId: job.restoreId, finishedAt: new Date().toISOString(), databases: [...names.values()],
    message: `restored ${summary} on ${job.destination.host}:${job.destination.port}${detail}${verdict}`,
    ...(checks.length ? { checks } : {}),
  });
}

/**
 * MariaDB/MySQL to a moment: the binlog segments after the backup's position, replayed into each restored database
 * from where that database's own dump stood (its snapshot), so nothing the dump holds is applied twice.
 */
async function replayChanges(job: RestoreJob, client: S3Client, manifest: { position?: Position; objects?: ManifestObject[] }, names: Map<string, string>, reporter: Reporter, signal: AbortSignal): Promise<string> {
  const position = manifest.position;
  if (!position?.binlogFile || position.binlogPos === undefined) throw new Error('the backup records no binlog position; it cannot be rolled forward');
  const dir = jobTempDir('strata-replay-');
  try {
    const files: Array<{ name: string; file: string; label: string }> = [];
    for (const segment of job.segments ?? []) {
      const file = path.join(dir, segment.name);
      const { label } = await fetchSegment(job, client, segment, file, signal);
      files.push({ name: segment.name, file, label });
    }
    for (const [source, target] of names) {
      reporter.progress('restore', job.restoreId, job.namespace, job.name, { stage: `replay binlogs into ${target}`, bytes: 0, totalBytes: 0 });
      // The database's own position (its dump's snapshot); backups before it was recorded carry only the backup's.
      const own = manifest.objects?.find((o) => o.role === 'data' && o.database === source)?.position;
      const at = own?.binlogFile && own.binlogPos !== undefined ? own : position;
      const first = files.findIndex((f) => f.name === at.binlogFile);
      if (first < 0) throw new Error(`the binlog ${at.binlogFile} holding the position of ${source} is not among the segments given (${files.map((f) => f.name).join(', ') || 'none'})`);
      const [from, start] = [files.slice(first), at.binlogPos as number];
      await replayBinlogs(job.destination, from.map((f) => f.file), start, source, target, job.at).catch((error: unknown) => {
        // Which binlogs, from where: what tells a damaged segment from a wrong choice of them.
        throw new Error(`${(error as Error).message} (replaying ${from.map((f) => f.label).join(', ')} from position ${start})`, { cause: error });
      });
    }
    return `; binlogs replayed from ${position.binlogFile}:${position.binlogPos}${job.at ? ` to the end of the second of ${job.at}` : ''}`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
