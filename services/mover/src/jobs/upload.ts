import type { BackupJob, StreamJob } from '@sigil/proto/strata-jobs';
import type { S3Client } from '@strata/stream';

/** Where and how a job's objects go into its store: encrypted to the store's recipients, compressed as the job says. */
export function storeUpload(job: Pick<BackupJob | StreamJob, 'compression' | 'store'>, client: S3Client, key: string, signal: AbortSignal) {
  return {
    compression: job.compression,
    recipients: job.store.ageRecipients,
    client,
    bucket: job.store.bucket,
    key,
    partSizeBytes: job.store.partSizeBytes,
    concurrency: job.store.concurrency,
    signal,
    contentType: 'application/octet-stream',
  };
}

/** A backup's dumps, bases and exports: the store's upload, under the job's bandwidth limit and stall timeout. */
export function backupUpload(job: BackupJob, client: S3Client, key: string, signal: AbortSignal) {
  return { ...storeUpload(job, client, key, signal), bandwidthBytesPerSecond: job.bandwidthBytesPerSecond, stallTimeoutMs: job.stallTimeoutMs };
}
