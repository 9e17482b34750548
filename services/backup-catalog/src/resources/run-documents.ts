import { STRATA } from '@sigil/proto/strata';
import type { ResourceCondition, ResourceProgress } from '@sigil/proto/resources';
import { TERMINAL_PHASES, type BackupRow } from '../backups/backups.ts';
import type { RestoreRow } from '../console/views.ts';

/**
 * Backup and Restore runs as the declarative documents of their kind (`GET /resources?kind=Backup`): the spec they
 * were asked with and a status whose phase and message are the run's, with one `Succeeded` condition (Unknown while
 * the run is queued or running). The runs are records of the catalog, so their generation is always 1.
 */
const API_VERSION = `${STRATA.apiGroup}/${STRATA.apiVersion}`;

interface RunTimes {
  phase: string;
  message: string;
  created: Date;
  startedAt: Date | null;
  completedAt: Date | null;
}

function succeededCondition(run: RunTimes): ResourceCondition {
  // An expired backup did succeed: retention let it go later (the reason says so).
  const status = run.phase === 'Succeeded' || run.phase === 'Expired' ? 'True' : TERMINAL_PHASES.includes(run.phase) ? 'False' : 'Unknown';
  return {
    type: 'Succeeded',
    status,
    reason: run.phase,
    message: run.message,
    observedGeneration: 1,
    lastTransitionTime: (run.completedAt ?? run.startedAt ?? run.created).toISOString(),
  };
}

function runStatus(run: RunTimes) {
  return {
    phase: run.phase,
    message: run.message,
    observedGeneration: 1,
    conditions: [succeededCondition(run)],
    ...(run.startedAt ? { startTime: run.startedAt.toISOString() } : {}),
    ...(run.completedAt ? { completionTime: run.completedAt.toISOString() } : {}),
    ...(run.startedAt && run.completedAt ? { durationSeconds: Math.max(0, Math.round((run.completedAt.getTime() - run.startedAt.getTime()) / 1000)) } : {}),
  };
}

function progressOf(value: unknown, phase: string): { progress: ResourceProgress } | Record<string, never> {
  const p = value as { stage?: unknown; bytes?: unknown; totalBytes?: unknown; updatedAt?: unknown } | null;
  if (!p || TERMINAL_PHASES.includes(phase)) return {};
  const count = (n: unknown) => (typeof n === 'number' && n >= 0 ? Math.round(n) : undefined);
  const bytes = count(p.bytes);
  const totalBytes = count(p.totalBytes);
  return {
    progress: {
      ...(typeof p.stage === 'string' ? { stage: p.stage } : {}),
      ...(bytes !== undefined ? { bytes } : {}),
      ...(totalBytes !== undefined ? { totalBytes } : {}),
      ...(typeof p.updatedAt === 'string' && p.updatedAt ? { updatedAt: p.updatedAt } : {}),
    },
  };
}

const text = (key: string, value: string | null | undefined) => (value ? { [key]: value } : {});

interface ManifestFields {
  position?: { startLSN?: string; endLSN?: string; binlogFile?: string; binlogPos?: number; gtidSet?: string };
  tiers?: string[];
  stats?: { warnings?: string[] };
}

export function backupDocument(row: BackupRow) {
  const manifest = (row.manifest ?? {}) as ManifestFields;
  const position = manifest.position ?? {};
  return {
    apiVersion: API_VERSION,
    kind: 'Backup' as const,
    metadata: { name: row.name, namespace: row.namespace, uid: row.id, generation: 1, creationTimestamp: row.queuedAt.toISOString() },
    spec: {
      target: row.targetName,
      ...text('reason', row.reason),
      ...text('requestedBy', row.requestedBy),
      ...(row.mirrored ? { backupID: row.id } : {}),
      ...(row.pinned ? { pinned: true, ...text('pinReason', row.pinReason), ...(row.pinExpires ? { pinExpires: row.pinExpires.toISOString() } : {}) } : {}),
      ...(row.skipLoadGuard ? { skipLoadGuard: true } : {}),
    },
    status: {
      ...runStatus({ phase: row.phase, message: row.message, created: row.queuedAt, startedAt: row.startedAt, completedAt: row.completedAt }),
      backupID: row.id,
      ...text('manifestKey', row.manifestKey),
      queuedTime: row.queuedAt.toISOString(),
      bytes: Number(row.rawBytes),
      compressedBytes: Number(row.storedBytes),
      attempts: row.attempts,
      priority: row.priority,
      pinSynced: !row.pinSyncPending,
      ...(row.postpones ? { postpones: row.postpones } : {}),
      ...(row.postponedUntil && row.phase === 'Postponed' ? { postponedUntil: row.postponedUntil.toISOString() } : {}),
      ...text('startLSN', position.startLSN),
      ...text('endLSN', position.endLSN),
      ...text('binlogFile', position.binlogFile),
      ...(position.binlogFile && typeof position.binlogPos === 'number' ? { binlogPos: position.binlogPos } : {}),
      ...text('gtidSet', position.gtidSet),
      ...(manifest.tiers?.length ? { tiers: manifest.tiers } : {}),
      ...(manifest.stats?.warnings?.length ? { warnings: manifest.stats.warnings } : {}),
      ...progressOf(row.progress, row.phase),
    },
  };
}

interface StoredDestination {
  host?: string;
  database?: string;
  tables?: string[];
  credentialsSecret?: string;
}

/** The destination as a Restore spec writes it; `new` needs the admin secret, which older records did not keep. */
function destinationSpec(row: RestoreRow) {
  const stored = (row.destination ?? {}) as StoredDestination;
  const tables = stored.tables?.length ? { tables: stored.tables } : {};
  if (row.mode !== 'new') return { mode: row.mode, ...tables };
  const [host = '', port] = (stored.host ?? '').split(/:(?=\d+$)/);
  const secret = (stored.credentialsSecret ?? '').split('/').at(-1) ?? '';
  return {
    mode: row.mode,
    new: { endpoint: { host, ...(port ? { port: Number(port) } : {}) }, database: stored.database ?? '', credentialsSecretRef: { name: secret } },
    ...tables,
  };
}

export function restoreDocument(row: RestoreRow) {
  return {
    apiVersion: API_VERSION,
    kind: 'Restore' as const,
    metadata: { name: row.name, namespace: row.namespace, uid: row.id, generation: 1, creationTimestamp: row.createdAt.toISOString() },
    spec: {
      target: row.targetName,
      source: { backupID: row.backupId, targetNamespace: row.targetNamespace },
      destination: destinationSpec(row),
      ...text('reason', row.reason),
      ...text('requestedBy', row.requestedBy),
    },
    status: {
      ...runStatus({ phase: row.phase, message: row.message, created: row.createdAt, startedAt: row.startedAt, completedAt: row.completedAt }),
      ...text('downloadURL', row.downloadUrl),
      ...(row.downloadExpires ? { downloadExpires: row.downloadExpires.toISOString() } : {}),
      ...progressOf(row.progress, row.phase),
    },
  };
}
