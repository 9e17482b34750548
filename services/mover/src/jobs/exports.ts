/**
 * Selective exports (target `scope.queries`): each query's result stored as CSV beside the dumps, through the same
 * pipeline (zstd, age to the store's recipients, SHA-256, multipart), and listed in the manifest with role `export`,
 * its name, database, SQL and row count. *Decision:* a query that fails fails the backup with the database's own
 * message: an export someone relies on (a compliance extract, a ledger) that silently went missing is worse than a
 * failed run that says why, and the run's objects are removed as for any failure.
 */
import { Readable } from 'node:stream';
import { exportKey, type BackupJob } from '@sigil/proto/strata-jobs';
import { runUploadPipeline, type S3Client } from '@strata/stream';
import { csvOf, type ExportBatch } from '../engines/csv.ts';
import { mysqlExport } from '../engines/mysql/export.ts';
import { postgresExport } from '../engines/postgres/export.ts';
import type { ManifestObject, Wrote } from './backup.ts';
import { backupUpload } from './upload.ts';

type Query = NonNullable<BackupJob['queries']>[number];

function batchesOf(job: BackupJob, database: string, query: Query): AsyncGenerator<ExportBatch> {
  const timeoutMs = job.queryTimeoutMs ?? 0;
  return job.database.engine === 'postgres' ? postgresExport(job.database, database, query.sql, timeoutMs) : mysqlExport(job.database, database, query.sql, timeoutMs);
}

async function exportOne(job: BackupJob, client: S3Client, base: string, databases: string[], query: Query, signal: AbortSignal, wrote: Wrote): Promise<ManifestObject> {
  const database = query.database ?? databases[0] ?? '';
  const counted = { rows: 0 };
  const key = exportKey(base, query.name, job.compression.algorithm === 'zstd');
  wrote(key);
  try {
    const stored = await runUploadPipeline({ ...backupUpload(job, client, key, signal), source: Readable.from(csvOf(batchesOf(job, database, query), counted)) });
    return {
      key, sha256: stored.sha256, role: 'export', database, format: 'csv', name: query.name, compression: job.compression.algorithm,
      size: stored.storedBytes, rawSize: stored.rawBytes, rows: counted.rows, sql: query.sql,
    };
  } catch (error) {
    throw new Error(`export ${query.name}: ${(error as Error).message}`, { cause: error });
  }
}

/** Every export of the job, one after the other, after the dumps. */
export async function runExports(job: BackupJob, client: S3Client, base: string, databases: string[], signal: AbortSignal, progress: (stage: string) => void, wrote: Wrote): Promise<ManifestObject[]> {
  const objects: ManifestObject[] = [];
  for (const query of job.queries ?? []) {
    progress(`export ${query.name}`);
    objects.push(await exportOne(job, client, base, databases, query, signal, wrote));
  }
  return objects;
}
