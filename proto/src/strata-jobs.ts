/**
 * What the backup catalog and the mover tell each other over NATS JetStream.
 * Jobs go catalog -> mover on the work-queue stream; reports go mover -> catalog on the events stream.
 * Secret values never travel in clear: `sealed` fields are AES-256-GCM boxes under STRATA_SECRETS_KEY
 * (`@sigil/kit/crypto`). Each message is described by a JSON Schema in `proto/jobs/`; the types are generated from
 * them (`npm run types`) and `./strata-wire.ts` validates them.
 */

import type * as Wire from './gen/strata-jobs.ts';

export const STRATA_JOBS_STREAM = 'STRATA_JOBS';
export const STRATA_JOBS_SUBJECTS = 'strata.jobs.>';
export const STRATA_EVENTS_STREAM = 'STRATA_EVENTS';
export const STRATA_EVENTS_SUBJECTS = 'strata.events.>';
/** Progress is best-effort and frequent: plain NATS, not persisted. */
export const STRATA_PROGRESS_SUBJECT_PREFIX = 'strata.progress.';

export type StrataEngine = Wire.StrataEngine;
/** The S3 side of a store, with its credentials. */
export type StoreAccess = Wire.StoreAccess;
export type DatabaseAccess = Wire.DatabaseAccess;
export type BackupJob = Wire.BackupJob;
export type RestoreJob = Wire.RestoreJob;
export type StreamJob = Wire.StreamJob;
export type SegmentReport = Wire.SegmentReport;
export type SegmentObject = Wire.SegmentObject;
/** What the committed transactions of a segment did (the mover summarises each segment it uploads). */
export type SegmentSummary = Wire.SegmentSummary;
export type SegmentTableChange = Wire.SegmentTableChange;
/** Masked sample rows of a segment (the plaintext of its previews object), and what the streamer is told to make. */
export type SegmentPreviews = Wire.SegmentPreviews;
export type TablePreviews = Wire.TablePreviews;
export type PreviewRow = Wire.PreviewRow;
export type PreviewSettings = Wire.PreviewSettings;
export type Progress = Wire.Progress;
/** A job on the wire: the job itself is sealed (AES-256-GCM under STRATA_SECRETS_KEY) because it carries credentials. */
export type SealedJob = Wire.SealedJob;
/** Best-effort progress of a running backup or restore, on plain NATS. */
export type ProgressReport = Wire.ProgressReport;

/** The job of each type, keyed by the types a sealed job may carry (`proto/jobs/<type>.schema.json`). */
export type StrataJobs = { [K in SealedJob['type']]-?: NonNullable<Wire.StrataJobsAndReports[K]> };

/** The data of each report type, keyed by the types the report envelope allows (`proto/jobs/<type>.schema.json`). */
export type StrataReports = { [K in Wire.StrataReportEnvelope['type']]-?: NonNullable<Wire.StrataJobsAndReports[K]> };

/** A report on the wire: the id doubles as Nats-Msg-Id and as the consumer's idempotency key. */
export type StrataReport<K extends keyof StrataReports = keyof StrataReports> = Omit<Wire.StrataReportEnvelope, 'type' | 'data'> & {
  type: K;
  data: StrataReports[K];
};

export const STRATA_JOB_TYPES = ['backup.run', 'restore.run', 'stream.run', 'sandbox.create'] as const satisfies readonly (keyof StrataJobs)[];
export const STRATA_REPORT_TYPES = [
  'backup.started',
  'backup.succeeded',
  'backup.failed',
  'backup.postponed',
  'restore.started',
  'restore.succeeded',
  'restore.failed',
  'segment.uploaded',
  'stream.status',
  'audit.recorded',
] as const satisfies readonly (keyof StrataReports)[];

// Compile-time proof that the lists above name every job and report type of the schemas.
type UnlistedTypes = Exclude<keyof StrataJobs, (typeof STRATA_JOB_TYPES)[number]> | Exclude<keyof StrataReports, (typeof STRATA_REPORT_TYPES)[number]>;
const everyTypeListed: [UnlistedTypes] extends [never] ? true : UnlistedTypes = true;
void everyTypeListed;

/**
 * A cell isolates stacks that share one NATS server (tests, several installations): its name becomes a
 * subject token, so work-queue consumers of different cells never overlap. Production uses no cell.
 */
const cellToken = (cell: string): string => (cell ? `${cell}.` : '');
export const strataJobSubject = (name: keyof StrataJobs, cell = ''): string => `strata.jobs.${cellToken(cell)}${name}`;
export const strataEventSubject = (name: keyof StrataReports, cell = ''): string => `strata.events.${cellToken(cell)}${name}`;
export const strataProgressSubject = (kind: 'backup' | 'restore', id: string, cell = ''): string =>
  `${STRATA_PROGRESS_SUBJECT_PREFIX}${cellToken(cell)}${kind}.${id}`;
/** Plain NATS: the catalog tells streamers to stop (`{ streamId }` or `{ targetUid }`); streamers also stop when their heartbeat is refused. */
export const strataStreamControlSubject = (cell = ''): string => `strata.control.${cellToken(cell)}stream`;
export interface StreamControlMessage {
  action: 'stop';
  streamId?: string;
  targetUid?: string;
  /** The target is gone: drop its replication slot (and its previews' logical slots) when stopping. */
  release?: boolean;
  /** The target no longer wants previews (turned off, or change capture turned off): drop its logical slots when stopping. */
  releasePreviews?: boolean;
}
/**
 * Plain NATS: the console's change events (spec part 6, `Event`), which every catalog replica relays on
 * `GET /api/v1/events`; the sandbox service tells its sandboxes' phase changes there too. Best effort: the catalog and
 * the sandbox service hold the truth, a page reads it again on each event.
 */
export const strataConsoleSubject = (cell = ''): string => `strata.console${cell ? `.${cell}` : ''}`;
export interface StrataConsoleEvent {
  kind: 'backup' | 'restore' | 'sandbox' | 'target' | 'catalog';
  namespace: string;
  name: string;
  phase: string;
  stage: string;
  message: string;
  bytes: number;
  version: number;
}
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

/** The pin record kept beside a pinned backup's manifest, so a catalog rebuilt from the store keeps the pin. */
export const PIN_FILE = 'pin.json';

/** `<backup prefix>pin.json`, from the backup's manifest key. */
export function pinKeyOfManifest(manifestKey: string): string {
  return manifestKey.slice(0, manifestKey.length - MANIFEST_FILE.length) + PIN_FILE;
}

/** What pin.json holds (plain JSON: no secret in it). An unpinned backup has no pin.json. */
export interface StoredPin {
  v: 1;
  backup: string;
  reason: string;
  by: string;
  /** RFC 3339; null: pinned until unpinned. */
  expires: string | null;
  /** When the pin was written. */
  at: string;
}

export function dataKey(base: string, database: string, engine: StrataEngine, compressed: boolean): string {
  const format = engine === 'postgres' ? 'pgdump' : 'sql';
  return `${base}data/${encodeURIComponent(database)}.${format}${compressed ? '.zst' : ''}.age`;
}

/**
 * A selective export (target `scope.queries`): the query's result as CSV, beside the dumps of the same backup
 * (`<backupID>/exports/<name>.csv.zst.age`).
 */
export function exportKey(base: string, name: string, compressed: boolean): string {
  return `${base}exports/${encodeURIComponent(name)}.csv${compressed ? '.zst' : ''}.age`;
}

/** The tar stream of a physical base backup (postgres: pg_basebackup of the whole server). */
export function baseKey(base: string, compressed: boolean): string {
  return `${base}data/base.tar${compressed ? '.zst' : ''}.age`;
}

/** A chain of change log: one server (Postgres' system identifier, a binlog server's id) on one timeline (1 for binlogs). */
export function chainIdOf(system: string, timeline: number): string {
  return `${system}-${timeline}`;
}

/** The server of a chain (the inverse of `chainIdOf`). */
export function systemOfChain(chainId: string): string {
  return chainId.replace(/-\d+$/, '');
}

/**
 * The statements of `mariadb-binlog` (and `mysqlbinlog`) output that give a replayed transaction its original GTID
 * and server id, as a pattern both JavaScript (with the `i` flag) and `sed -E` (with `I`) read the same way.
 * Replayed into a server with binary logging on (the source itself, for a restore into a new database), they would
 * write old GTIDs into its binlog: a later replay of that binlog fails ("out of order GTID") and replicas skip the
 * transactions as already applied. Without them the server logs the replay as new transactions.
 */
export const REPLAY_IDENTITY_STATEMENT = '^(\\/\\*[M!]?!?[0-9]* )?SET @@session\\.(gtid_seq_no|gtid_domain_id|server_id|gtid_next) *=';

/**
 * The change log of a target lives beside its backups, one folder per chain (`<server's system identifier or id>-
 * <timeline>`): `<prefix>/<namespace>/<target>/wal/<chain>/<WAL file>.zst.age`. Another cluster behind the same
 * endpoint (a server made anew) names its WAL files the same: its own folder keeps them from replacing the old
 * chain's. A partial upload of the segment being written adds `.partial.<end position>`, so each upload is its own object.
 */
export function segmentKey(storePrefix: string, namespace: string, target: string, chain: string, name: string, compressed: boolean, partialEnd?: string): string {
  const root = storePrefix.replace(/^\/+|\/+$/g, '');
  const partial = partialEnd ? `.partial.${partialEnd.replace(/[/:]/g, '-')}` : '';
  return `${root ? `${root}/` : ''}${namespace}/${target}/wal/${encodeURIComponent(chain)}/${name}${partial}${compressed ? '.zst' : ''}.age`;
}

/**
 * Beside each segment, the report that recorded it, as plain JSON (`<segment key>.json`): what the catalog's mirror
 * rebuilds its segment records from when the catalog database is lost. It holds positions, times and checksums only.
 */
export function segmentReportKey(segmentKey: string): string {
  return `${segmentKey}.json`;
}

/**
 * The logical decoding slot a Postgres target's previews keep in one database (`<physical slot>_l<database oid>`, at
 * most 63 characters), beside a publication named like the physical slot: the mover makes them, the mover or the
 * catalog drops them.
 */
export function logicalSlotName(slot: string, databaseOid: number): string {
  const suffix = `_l${databaseOid}`;
  return `${slot.slice(0, 63 - suffix.length)}${suffix}`;
}

/**
 * Beside each segment whose target has previews on, its masked sample rows (`<segment key>.previews.age`): JSON
 * (SegmentPreviews) encrypted to the store's ageRecipients and catalogRecipients, masked before it left the mover.
 */
export function segmentPreviewsKey(segmentKey: string): string {
  return `${segmentKey}.previews.age`;
}

export function isSegmentPreviewsKey(key: string): boolean {
  return key.includes('/wal/') && key.endsWith('.age.previews.age');
}

/** The segment a report or a previews object kept beside it belongs to. */
export function segmentKeyOfSidecar(key: string): string {
  return isSegmentPreviewsKey(key) ? key.slice(0, -'.previews.age'.length) : isSegmentReportKey(key) ? segmentKeyOfReport(key) : key;
}

export function isSegmentReportKey(key: string): boolean {
  return key.includes('/wal/') && key.endsWith('.age.json');
}

/** The segment a report kept beside it describes (the inverse of `segmentReportKey`). */
export function segmentKeyOfReport(reportKey: string): string {
  return reportKey.replace(/\.json$/, '');
}

export function inventoryKey(base: string, compressed: boolean): string {
  return `${base}catalog/inventory.json${compressed ? '.zst' : ''}.age`;
}

/** Every manifest of a store lives at a key ending like this. */
export function isManifestKey(key: string): boolean {
  return key.endsWith(`/${MANIFEST_FILE}`);
}

/** The databases a `new` restore creates: one source keeps the name asked for, several get `<database>_<source>`. */
export function restoredDatabaseNames(database: string, sources: string[], keepNames = false): Record<string, string> {
  return Object.fromEntries(sources.map((source) => [source, keepNames ? source : sources.length > 1 ? `${database}_${source}` : database]));
}
