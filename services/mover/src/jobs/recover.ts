import fs from 'node:fs';
import path from 'node:path';
import { restoredDatabaseNames, type RestoreJob } from '@sigil/proto/strata-jobs';
import type { Writable } from 'node:stream';
import { runDownloadPipeline, type S3Client } from '@strata/stream';
import { extractTar, startRecovery } from '../engines/postgres/recover.ts';
import type { Reporter } from '../reports.ts';
import type { ManifestObject } from './backup.ts';
import { copyPostgres, placementOf } from './placement.ts';
import { fetchSegment } from './segment-fetch.ts';
import { runTogether } from '../engines/together.ts';
import { jobTempDir } from '../temp-dir.ts';

export interface PhysicalManifest {
  id: string;
  mode: 'physical';
  objects?: ManifestObject[];
  databases?: string[];
  superuser?: string;
  server?: { major?: number };
}

type Stage = (stage: string, bytes: number) => void;

/**
 * Restores a physical backup, to a moment when the job names one: the base and the segments are fetched (each
 * checked against its SHA-256 and decrypted) into a work directory, a private server recovers and is promoted,
 * and each database asked for is copied into a new database on the destination. Answers the restored names and
 * where recovery stopped.
 */
export async function recoverPhysical(job: RestoreJob, manifest: PhysicalManifest, client: S3Client, reporter: Reporter, signal: AbortSignal, created: string[]): Promise<{ names: Map<string, string>; stoppedAt: string }> {
  const base = (manifest.objects ?? []).find((o) => o.role === 'data' && o.format === 'pg_basebackup-tar');
  if (!base) throw new Error(`backup ${manifest.id} holds no base backup`);
  const major = manifest.server?.major;
  if (!major) throw new Error(`the manifest of backup ${manifest.id} does not say the server's major version`);
  const wanted = (manifest.databases ?? []).filter((d) => job.databases.includes(d));
  if (wanted.length === 0) throw new Error('the backup holds none of the databases asked for');
  const segments = job.segments ?? [];
  const total = base.rawSize + segments.reduce((sum, s) => sum + (s.size ?? 0), 0);
  const stage: Stage = (name, bytes) => reporter.progress('restore', job.restoreId, job.namespace, job.name, { stage: name, bytes, totalBytes: total });
  const workDir = jobTempDir('strata-recover-');
  try {
    stage('fetch base', 0);
    const tar = extractTar(path.join(workDir, 'data'));
    await runTogether(fetchObject(job, client, base, tar.stdin, signal, (raw) => stage('fetch base', raw)), tar.done, () => tar.stdin.destroy());
    const walDir = path.join(workDir, 'wal');
    fs.mkdirSync(walDir);
    let done = base.rawSize;
    /** What the restore's message adds: segments that stood in for others, keys left out. */
    const notes: string[] = [];
    for (const segment of segments) {
      stage(`fetch WAL ${segment.name}`, done);
      // A partial segment stands in for the whole file: recovery stops at the end of its valid records.
      const fetched = await fetchSegment(job, client, segment, path.join(walDir, segment.name), signal);
      if (fetched.replaced) notes.push(fetched.label);
      done += segment.size ?? 0;
    }
    stage(job.at ? `recover to ${job.at}` : 'recover to the end of the backup', done);
    const server = await startRecovery(workDir, major, manifest.superuser ?? 'postgres', job.at ? { time: job.at } : {});
    try {
      const names = new Map(Object.entries(restoredDatabaseNames(job.destination.database, wanted, job.keepNames)));
      const placement = placementOf(job);
      for (const [source, target] of names) {
        stage(`copy ${placement.tables ? `${placement.tables.join(', ')} of ` : ''}${source} into ${target}${placement.inPlace ? ' (in place)' : ''}`, done);
        const note = await copyPostgres(server.access, source, job.destination, target, placement);
        if (note) notes.push(`${target}: ${note}`);
        if (!placement.inPlace) created.push(target);
      }
      return { names, stoppedAt: [server.stoppedAt, ...notes].join('; ') };
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

async function fetchObject(
  job: RestoreJob,
  client: S3Client,
  object: { key: string; sha256: string; compression: string },
  sink: Writable,
  signal: AbortSignal,
  onProgress: (raw: number) => void,
): Promise<void> {
  await runDownloadPipeline({
    client,
    bucket: job.store.bucket,
    key: object.key,
    expectedSha256: object.sha256,
    identity: job.store.identity,
    compression: object.compression as 'zstd' | 'none',
    sink,
    bandwidthBytesPerSecond: job.bandwidthBytesPerSecond,
    stallTimeoutMs: job.stallTimeoutMs,
    onProgress,
    signal,
  });
}
