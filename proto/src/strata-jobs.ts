/**
 * What the backup catalog and the mover tell each other over NATS JetStream.
 * Jobs go catalog -> mover on the work-queue stream; reports go mover -> catalog on the events stream.
 * Secret values never travel in clear: `sealed` fields are AES-256-GCM boxes under STRATA_SECRETS_KEY
 * (see services/kit/src/sealed.ts and docs/strata-secrets.md).
 */

export const STRATA_JOBS_STREAM = 'STRATA_JOBS';
export const STRATA_JOBS_SUBJECTS = 'strata.jobs.>';
export const STRATA_EVENTS_STREAM = 'STRATA_EVENTS';
export const STRATA_EVENTS_SUBJECTS = 'strata.events.>';
/** Progress is best-effort and frequent: plain NATS, not persisted. */
export const STRATA_PROGRESS_SUBJECT_PREFIX = 'strata.progress.';

export type StrataEngine = 'postgres' | 'mysql' | 'mongodb';

/** The S3 side of a store, with its credentials. */
export interface StoreAccess {
  endpoint: string;
  region: string;
  bucket: string;
  /** Key prefix inside the bucket; '' or ending without a slash. */
  prefix: string;
  pathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
  disableConditionalPut: boolean;
  partSizeBytes: number;
  concurrency: number;
}

export interface DatabaseAccess {
  engine: StrataEngine;
  host: string;
  port: number;
  username: string;
  password: string;
}

export interface BackupJob {
  backupId: string;
  /** Names for manifests and keys. */
  target: { namespace: string; name: string; uid: string; org: string; project: string; env: string };
  policy: string;
  reason: string;
  requestedBy: string;
  database: DatabaseAccess;
  /** Database names, or ['*'] for every non-template database. */
  databases: string[];
  excludeData: string[];
  excludeTables: string[];
  store: StoreAccess & { storeName: string; ageRecipients: string[]; catalogRecipients: string[] };
  compression: { algorithm: 'zstd' | 'none'; level: 'fastest' | 'default' | 'better' | 'best'; threads: number };
  /** Bytes per second, 0 for unlimited. */
  bandwidthBytesPerSecond: number;
  stallTimeoutMs: number;
  activeDeadlineMs: number;
}

export interface RestoreJob {
  restoreId: string;
  namespace: string;
  name: string;
  mode: 'new';
  backupId: string;
  manifestKey: string;
  store: StoreAccess & { identity: string };
  /** Where to restore and as whom (an admin able to create databases). */
  destination: DatabaseAccess & { database: string };
  /** Source databases to restore; several get `<database>_<source>` names. */
  databases: string[];
  bandwidthBytesPerSecond: number;
  stallTimeoutMs: number;
}

export interface StrataJobs {
  'backup.run': BackupJob;
  'restore.run': RestoreJob;
}

export interface Progress {
  stage: string;
  bytes: number;
  totalBytes: number;
  updatedAt: string;
}

export interface StrataReports {
  'backup.started': { backupId: string; startedAt: string; jobName: string };
  'backup.progress': { backupId: string; progress: Progress };
  'backup.succeeded': { backupId: string; manifestKey: string; manifest: Record<string, unknown> };
  'backup.failed': { backupId: string; message: string; finishedAt: string };
  'restore.started': { restoreId: string; startedAt: string };
  'restore.progress': { restoreId: string; progress: Progress };
  'restore.succeeded': { restoreId: string; finishedAt: string; databases: string[]; message: string };
  'restore.failed': { restoreId: string; message: string; finishedAt: string };
}

export const strataJobSubject = (name: keyof StrataJobs): string => `strata.jobs.${name}`;
export const strataEventSubject = (name: keyof StrataReports): string => `strata.events.${name}`;
export const strataProgressSubject = (kind: 'backup' | 'restore', id: string): string => `${STRATA_PROGRESS_SUBJECT_PREFIX}${kind}.${id}`;
