import { STRATA } from '@sigil/proto/strata';
import { BACKUP_PHASES, type BackupRow } from '../backups/backups.ts';
import type { Db } from '../db.ts';
import type { RestorePlanRef } from '../restores/restore-steps.ts';
import type { components } from '@sigil/proto/api/strata';

/** Why retention keeps a backup, in the contract's words. */
type RetainReason = NonNullable<components['schemas']['Backup']['retainedBy']>[number];

export type RestoreRow = NonNullable<Awaited<ReturnType<Db['restore']['findUnique']>>>;

interface ManifestShape {
  server?: { version?: string };
  consistentAt?: string;
  completedAt?: string;
  startedAt?: string;
  position?: { startLSN?: string; endLSN?: string; binlogFile?: string; binlogPos?: number; gtidSet?: string; timeline?: number };
  databases?: string[];
  tiers?: string[];
  inventory?: { tables?: number; rowsEstimate?: number; schemaHash?: string; migrationVersion?: string };
  stats?: { warnings?: string[]; durationSeconds?: number; rawBytes?: number; storedBytes?: number };
  mode?: string;
}

const manifestOf = (row: BackupRow): ManifestShape => (row.manifest ?? {}) as ManifestShape;

/** A position as one readable string: the binlog coordinates, the GTID set, or the WAL LSNs. */
export function positionText(position: ManifestShape['position']): string {
  if (!position) return '';
  if (position.gtidSet) return `gtid:${position.gtidSet}`;
  if (position.binlogFile) return `${position.binlogFile}:${position.binlogPos ?? 0}`;
  if (position.startLSN) return position.endLSN && position.endLSN !== position.startLSN ? `${position.startLSN}-${position.endLSN}` : position.startLSN;
  return '';
}

export function backupRefView(row: BackupRow) {
  return { name: row.name, id: row.id, time: (consistentAt(row) ?? row.queuedAt).toISOString(), phase: row.phase };
}

export function consistentAt(row: BackupRow): Date | undefined {
  const at = manifestOf(row).consistentAt;
  return at ? new Date(at) : undefined;
}

function durationSeconds(row: BackupRow): number {
  if (!row.startedAt || !row.completedAt) return manifestOf(row).stats?.durationSeconds ?? 0;
  return Math.max(0, (row.completedAt.getTime() - row.startedAt.getTime()) / 1000);
}

export function backupView(row: BackupRow) {
  const m = manifestOf(row);
  const time = consistentAt(row);
  return {
    id: row.id,
    phase: row.phase,
    restorable: row.phase === BACKUP_PHASES.succeeded,
    error: row.phase === BACKUP_PHASES.failed ? row.message || 'failed without a message' : '',
    target: row.targetName,
    engine: row.engine,
    mode: m.mode ?? 'logical',
    serverVersion: m.server?.version ?? '',
    reason: row.reason,
    pinReason: row.pinReason ?? '',
    schemaHash: m.inventory?.schemaHash ?? '',
    migrationVersion: m.inventory?.migrationVersion ?? '',
    position: positionText(m.position),
    store: row.store,
    ...(time ? { time: time.toISOString() } : {}),
    ...(row.completedAt && row.phase === 'Succeeded' ? { completed: row.completedAt.toISOString() } : {}),
    rawBytes: Number(row.rawBytes),
    storedBytes: Number(row.storedBytes),
    rowsEstimate: Number(m.inventory?.rowsEstimate ?? 0),
    durationSeconds: durationSeconds(row),
    tiers: m.tiers ?? [],
    databases: m.databases ?? [],
    warnings: m.stats?.warnings ?? [],
    pinned: row.pinned,
    verified: row.verified,
    verifyFailed: row.verifyFailed,
    tables: m.inventory?.tables ?? 0,
    retainedBy: row.retainedBy as RetainReason[],
    expiresAt: row.expiresAt?.toISOString() ?? null,
    expiredAt: row.expiredAt?.toISOString() ?? null,
    pinExpires: row.pinned ? (row.pinExpires?.toISOString() ?? null) : null,
    pinSynced: !row.pinSyncPending,
    ...(row.expiredReason ? { expiredReason: row.expiredReason } : {}),
    postpones: row.postpones,
    postponedUntil: row.postponedUntil?.toISOString() ?? null,
    skipLoadGuard: row.skipLoadGuard,
  };
}

export function tagsView(row: BackupRow) {
  return {
    tiers: manifestOf(row).tiers ?? [],
    pinned: row.pinned,
    verified: row.verified,
    verifyFailed: row.verifyFailed,
    ...(row.verifiedAt ? { verifiedAt: row.verifiedAt.toISOString() } : {}),
    ...(row.verifyRtoSeconds !== null ? { verifyRTOSeconds: row.verifyRtoSeconds } : {}),
    pinReason: row.pinReason ?? '',
    pinnedBy: row.pinnedBy ?? '',
    ...(row.pinExpires ? { pinExpires: row.pinExpires.toISOString() } : {}),
    pinSynced: !row.pinSyncPending,
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The stored manifest, or for a run that has not finished, what is known so far. */
export function manifestView(row: BackupRow): Record<string, unknown> {
  if (row.manifest) return row.manifest as Record<string, unknown>;
  return {
    version: STRATA.manifestVersion,
    id: row.id,
    kind: 'full',
    engine: row.engine,
    mode: 'logical',
    policy: row.policy,
    reason: row.reason,
    [STRATA.versionField]: STRATA.version,
    target: { namespace: row.namespace, name: row.targetName },
    ...(row.startedAt ? { startedAt: row.startedAt.toISOString() } : {}),
    databases: [],
    recipients: [],
    tiers: [],
    objects: [],
  };
}

export function backupRunView(row: BackupRow) {
  const progress = row.progress as { stage?: string; bytes?: number; totalBytes?: number; updatedAt?: string } | null;
  return {
    namespace: row.namespace,
    name: row.name,
    target: row.targetName,
    phase: row.phase,
    message: row.message,
    reason: row.reason,
    backupID: row.id,
    created: row.queuedAt.toISOString(),
    bytes: Number(row.phase === 'Succeeded' ? row.rawBytes : (progress?.bytes ?? 0)),
    durationSeconds: Math.round(durationSeconds(row)),
    progress: progress && row.phase !== 'Succeeded' ? { stage: progress.stage ?? '', bytes: progress.bytes ?? 0, totalBytes: progress.totalBytes ?? 0, updatedAt: progress.updatedAt ?? row.updatedAt.toISOString() } : null,
  };
}

/** RestorePlanRef as the restore recorded it; null for a restore of a backup chosen by id (nothing planned). */
export function restorePlanView(plan: RestoreRow['plan']) {
  if (!plan) return null;
  const { baseBackupID, segments, bytes, message, targetTime, effectiveTime } = plan as unknown as RestorePlanRef;
  // effectiveTime is absent on restores planned before the catalog recorded it.
  return { baseBackupID, segments, bytes, message, ...(targetTime ? { targetTime } : {}), ...(effectiveTime ? { effectiveTime } : {}) };
}

/** RestoreSource: the backup restored and the moment asked (none for latest, whose plan says what it stood for). */
function restoreSourceView(row: RestoreRow, plan: ReturnType<typeof restorePlanView>) {
  const asked = !row.latest && plan?.targetTime ? { time: plan.targetTime } : {};
  return { backupID: row.backupId, latest: row.latest, targetNamespace: row.targetNamespace, ...asked };
}

/** RestoreDestination, from what each mode recorded (sandbox-restores.ts, in-place.ts, restores.ts). */
function restoreDestinationView(row: RestoreRow) {
  const destination = (row.destination ?? {}) as Record<string, unknown>;
  return {
    mode: row.mode,
    ...(typeof destination.database === 'string' ? { database: destination.database } : {}),
    ...(typeof destination.host === 'string' ? { host: destination.host } : {}),
    ...(Array.isArray(destination.tables) ? { tables: destination.tables as string[] } : {}),
    ...(typeof destination.sandboxTTL === 'string' ? { sandboxTTL: destination.sandboxTTL } : {}),
    ...(typeof destination.expose === 'boolean' ? { expose: destination.expose } : {}),
    ...(typeof destination.deleteAfter === 'boolean' ? { deleteAfter: destination.deleteAfter } : {}),
  };
}

export function restoreView(row: RestoreRow) {
  const destination = (row.destination ?? {}) as Record<string, unknown>;
  const progress = row.progress as { stage?: string; bytes?: number; totalBytes?: number; updatedAt?: string } | null;
  const plan = restorePlanView(row.plan);
  return {
    namespace: row.namespace,
    name: row.name,
    target: `${row.targetNamespace}/${row.targetName}`,
    phase: row.phase,
    message: row.message,
    requestedBy: row.requestedBy,
    sandbox: typeof destination.sandbox === 'string' ? destination.sandbox : '',
    ...(row.mode === 'in-place' ? { safetyBackup: typeof destination.safetyBackup === 'string' ? destination.safetyBackup : '' } : {}),
    downloadURL: row.downloadUrl ?? '',
    mode: row.mode,
    created: row.createdAt.toISOString(),
    ...(row.downloadExpires ? { downloadExpires: row.downloadExpires.toISOString() } : {}),
    durationSeconds: row.startedAt && row.completedAt ? Math.round((row.completedAt.getTime() - row.startedAt.getTime()) / 1000) : 0,
    plan,
    progress: progress ? { stage: progress.stage ?? '', bytes: progress.bytes ?? 0, totalBytes: progress.totalBytes ?? 0, updatedAt: progress.updatedAt ?? '' } : null,
    checks: (row.checks ?? []) as Array<{ name: string; passed: boolean; message: string }>,
    source: restoreSourceView(row, plan),
    destination: restoreDestinationView(row),
  };
}
