import { restoredDatabaseNames, type RestoreJob } from '@sigil/proto/strata-jobs';
import { driverFor } from '../engines/index.ts';
import { createS3Client, downloadStream, runDownloadPipeline } from '@strata/stream';
import type { Reporter } from '../reports.ts';
import { messageOf, readAll, type ManifestObject } from './backup.ts';
import { recoverPhysical, type PhysicalManifest } from './recover.ts';

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
    const manifest = JSON.parse((await readAll(await downloadStream(client, job.store.bucket, job.manifestKey))).toString('utf8')) as { objects?: ManifestObject[]; id?: string; mode?: string };
    if (manifest.id !== job.backupId) throw new Error(`manifest ${job.manifestKey} belongs to backup ${manifest.id}, not ${job.backupId}`);
    if (manifest.mode === 'physical') {
      const { names, stoppedAt } = await recoverPhysical(job, manifest as PhysicalManifest, client, reporter, signal, created);
      const summary = [...names].map(([from, to]) => `${from} → ${to}`).join(', ');
      await reporter.report('restore.succeeded', { restoreId: job.restoreId, finishedAt: new Date().toISOString(), databases: [...names.values()], message: `restored ${summary} on ${job.destination.host}:${job.destination.port}; ${stoppedAt}` });
      return;
    }
    const objects = (manifest.objects ?? []).filter((o) => o.role === 'data' && job.databases.includes(o.database ?? ''));
    if (objects.length === 0) throw new Error('the backup holds none of the databases asked for');
    const names = new Map(Object.entries(restoredDatabaseNames(job.destination.database, objects.map((o) => o.database ?? ''))));
    const total = objects.reduce((sum, o) => sum + o.rawSize, 0);
    let done = 0;
    for (const object of objects) {
      const target = names.get(object.database ?? '') as string;
      // The driver drops a database it created when its own restore fails; earlier ones are dropped below.
      const restore = driver.restore(job.destination, target);
      const stage = `restore ${object.database} into ${target}`;
      reporter.progress('restore', job.restoreId, job.namespace, job.name, { stage, bytes: done, totalBytes: total });
      await Promise.all([
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
        }).catch((error: unknown) => {
          restore.kill();
          throw error;
        }),
        restore.done,
      ]);
      created.push(target);
      done += object.rawSize;
    }
    const summary = [...names].map(([from, to]) => `${from} → ${to}`).join(', ');
    await reporter.report('restore.succeeded', { restoreId: job.restoreId, finishedAt: new Date().toISOString(), databases: [...names.values()], message: `restored ${summary} on ${job.destination.host}:${job.destination.port}` });
  } catch (error) {
    if (engine !== 'mongodb') {
      const driver = driverFor(engine);
      for (const database of created) await driver.dropDatabase(job.destination, database).catch(() => undefined);
    }
    await reporter.report('restore.failed', { restoreId: job.restoreId, message: messageOf(error), finishedAt: new Date().toISOString() });
  }
}
