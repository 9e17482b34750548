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
  /** The Backup resource's namespace and name (for progress reports). */
  namespace: string;
  name: string;
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
  'backup.succeeded': { backupId: string; manifestKey: string; manifest: Record<string, unknown> };
  'backup.failed': { backupId: string; message: string; finishedAt: string };
  'restore.started': { restoreId: string; startedAt: string };
  'restore.succeeded': { restoreId: string; finishedAt: string; databases: string[]; message: string };
  'restore.failed': { restoreId: string; message: string; finishedAt: string };
}

/** A report on the wire: the id doubles as Nats-Msg-Id and as the consumer's idempotency key. */
export interface StrataReport<K extends keyof StrataReports = keyof StrataReports> {
  id: string;
  type: K;
  occurredAt: string;
  data: StrataReports[K];
}

/** A job on the wire: the job itself is sealed (AES-256-GCM under STRATA_SECRETS_KEY) because it carries credentials. */
export interface SealedJob {
  id: string;
  type: keyof StrataJobs;
  sealed: string;
}

/** Best-effort progress of a running backup or restore, on plain NATS. */
export interface ProgressReport {
  kind: 'backup' | 'restore';
  id: string;
  namespace: string;
  name: string;
  progress: Progress;
}

/**
 * A cell isolates stacks that share one NATS server (tests, several installations): its name becomes a
 * subject token, so work-queue consumers of different cells never overlap. Production uses no cell.
 */
const cellToken = (cell: string): string => (cell ? `${cell}.` : '');
export const strataJobSubject = (name: keyof StrataJobs, cell = ''): string => `strata.jobs.${cellToken(cell)}${name}`;
export const strataEventSubject = (name: keyof StrataReports, cell = ''): string => `strata.events.${cellToken(cell)}${name}`;
export const strataProgressSubject = (kind: 'backup' | 'restore', id: string, cell = ''): string =>
  `${STRATA_PROGRESS_SUBJECT_PREFIX}${cellToken(cell)}${kind}.${id}`;
/** Every progress subject of a cell. */
export const strataProgressWildcard = (cell = ''): string => `${STRATA_PROGRESS_SUBJECT_PREFIX}${cellToken(cell)}*.*`;

/**
 * Object layout of a store: everything of one backup lives under one prefix, and the manifest is written last.
 * `<prefix>/<namespace>/<target>/<backupID>/data/<database>.<ext>`, `.../catalog/inventory.json.zst.age`, `.../manifest.json`.
 */
export const MANIFEST_FILE = 'manifest.json';

export function backupPrefix(storePrefix: string, namespace: string, target: string, backupId: string): string {
  const root = storePrefix.replace(/^\/+|\/+$/g, '');
  return `${root ? `${root}/` : ''}${namespace}/${target}/${backupId}/`;
}

export function manifestKey(base: string): string {
  return `${base}${MANIFEST_FILE}`;
}

export function dataKey(base: string, database: string, engine: StrataEngine, compressed: boolean): string {
  const format = engine === 'postgres' ? 'pgdump' : 'sql';
  return `${base}data/${encodeURIComponent(database)}.${format}${compressed ? '.zst' : ''}.age`;
}

export function inventoryKey(base: string, compressed: boolean): string {
  return `${base}catalog/inventory.json${compressed ? '.zst' : ''}.age`;
}

/** Every manifest of a store lives at a key ending like this. */
export function isManifestKey(key: string): boolean {
  return key.endsWith(`/${MANIFEST_FILE}`);
}

/** The databases a `new` restore creates: one source keeps the name asked for, several get `<database>_<source>`. */
export function restoredDatabaseNames(database: string, sources: string[]): Record<string, string> {
  return Object.fromEntries(sources.map((source) => [source, sources.length > 1 ? `${database}_${source}` : database]));
}
