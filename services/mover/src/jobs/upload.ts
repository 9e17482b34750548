import type { BackupJob } from '@sigil/proto/strata-jobs';
import type { S3Client } from '@strata/stream';

/** Where and how a backup job's objects go into the store: the same for its dumps, bases and exports. */
export function backupUpload(job: BackupJob, client: S3Client, key: string, signal: AbortSignal) {
  return {
    compression: job.compression,
    recipients: job.store.ageRecipients,
    client,
    bucket: job.store.bucket,
    key,
    partSizeBytes: job.store.partSizeBytes,
    concurrency: job.store.concurrency,
    bandwidthBytesPerSecond: job.bandwidthBytesPerSecond,
    stallTimeoutMs: job.stallTimeoutMs,
    signal,
    contentType: 'application/octet-stream',
  };
}
