/** The pieces of a restore that every mode shares: the request, the backup and plan it restores, the mover's job, its event. */
import { AppError } from '@sigil/kit/errors';
import type { components } from '@sigil/proto/api/strata';
import type { BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';
import type { RestoreJob, SegmentObject } from '@sigil/proto/strata-jobs';
import { parseDuration, parseQuantity } from '@sigil/proto/units';
import { BACKUP_PHASES, type BackupDeps, type BackupRow } from '../backups/backups.ts';
import type { Tx } from '../db.ts';
import type { ConsoleEvent } from '../console/events.ts';
import { planFor, type RestorePlan } from './plans.ts';
import { checksFor, DEFAULT_VERIFY_CHECKS } from './restore-checks.ts';
import { storeAccess, storeIdentity, type TargetBundle } from '../resources/stores.ts';
import type { RestoreRow } from '../console/views.ts';

/**
 * RestoreRequest of the console API (spec 2.1), as generated from the contract: every member optional. What a mode
 * needs (its target, the mode itself for `POST /restores`) is checked where the request is used, as 400s.
 */
export type RestoreRequest = components['schemas']['RestoreRequest'];

export interface ManifestObject {
  key: string;
  sha256: string;
  role: string;
  database?: string;
  compression?: string;
  size?: number;
  /** A selective export's name and row count (role `export`). */
  name?: string;
  rows?: number;
  /** A MariaDB/MySQL dump's own binlog position (its snapshot; each database is dumped in its own). */
  position?: { binlogFile?: string; binlogPos?: number };
}

export async function explicitBackup(tx: Tx, namespace: string, target: string, backupID: string): Promise<BackupRow> {
  const row = await tx.backup.findUnique({ where: { id: backupID } });
  if (!row || row.namespace !== namespace || row.targetName !== target) {
    throw new AppError('not-found', `Backup ${backupID} of ${namespace}/${target} was not found.`);
  }
  if (row.phase !== BACKUP_PHASES.succeeded) throw new AppError('not-restorable', `Backup ${row.id} is ${row.phase}; only a completed backup can be restored.`);
  return row;
}

/**
 * Whether a request asks for `at: latest` (RestoreSource.latest): no backup named and no moment, or `latest` itself,
 * as chooseBackup and planFor read it.
 */
export function asksLatest(request: Pick<RestoreRequest, 'backupID' | 'at'>): boolean {
  return !request.backupID && (request.at === undefined || request.at === '' || request.at === 'latest');
}

/** The backup and, for a time, the plan that restores it exactly (with change capture) or as near before it as there is. */
export async function chooseBackup(resources: BackupDeps['resources'], tx: Tx, bundle: TargetBundle, request: Pick<RestoreRequest, 'backupID' | 'at'>): Promise<{ backup: BackupRow; plan?: RestorePlan }> {
  const { namespace, name } = bundle.target.metadata;
  if (request.backupID) return { backup: await explicitBackup(tx, namespace, name, request.backupID) };
  const plan = await planFor(tx, resources, bundle.target, request.at);
  if (!plan.restorable || !plan.backup) throw new AppError('not-restorable', plan.reason ?? `Target ${namespace}/${name} cannot be restored to ${request.at}.`);
  return { backup: plan.backup, plan };
}


/** The sealed job a mover runs to restore `backup` (to the plan's moment, when there is one) into `destination`. */
export async function restoreJob(
  deps: BackupDeps,
  tx: Tx,
  chosen: { bundle: TargetBundle; backup: BackupRow; plan?: RestorePlan; id: string; namespace: string; name: string },
  into: { destination: RestoreJob['destination']; databases: string[]; keepNames?: boolean; checks?: string[]; mode?: RestoreJob['mode']; tables?: string[] },
): Promise<RestoreJob> {
  const { bundle, backup, plan } = chosen;
  const manifest = (backup.manifest ?? {}) as { mode?: string };
  const segments = segmentsOf(plan);
  const access = await storeAccess(tx, deps.secrets, bundle.store);
  const identity = await storeIdentity(tx, deps.secrets, bundle.store, 'identitySecret');
  return {
    restoreId: chosen.id,
    namespace: chosen.namespace,
    name: chosen.name,
    mode: into.mode ?? 'new',
    ...(into.tables?.length ? { tables: into.tables } : {}),
    backupId: backup.id,
    manifestKey: backup.manifestKey ?? '',
    store: { ...access, identity },
    destination: into.destination,
    databases: into.databases,
    ...(into.keepNames ? { keepNames: true } : {}),
    bandwidthBytesPerSecond: bundle.policy.spec.limits?.restoreBandwidth ? parseQuantity(bundle.policy.spec.limits.restoreBandwidth) : 0,
    stallTimeoutMs: parseDuration(bundle.policy.spec.jobs?.stallTimeout ?? '60s'),
    ...(plan?.recoverTo && (manifest.mode === 'physical' || segments.length) ? { at: plan.recoverTo } : {}),
    ...(segments.length ? { segments } : {}),
    ...checksFor(bundle.target.spec as TargetSpec, into.checks),
  };
}

/** The source databases a backup holds: a physical backup lists them; a logical one has an object per database. */
export function databasesOf(manifest: { objects?: ManifestObject[]; databases?: string[]; mode?: string }): string[] {
  if (manifest.mode === 'physical') return manifest.databases ?? [];
  return (manifest.objects ?? []).filter((o) => o.role === 'data').map((o) => o.database ?? '').filter(Boolean);
}

export function segmentsOf(plan: RestorePlan | undefined): SegmentObject[] {
  return (plan?.choice?.segments ?? []).map((s) => ({ name: s.name, key: s.key, sha256: s.sha256, partial: s.partial, compression: s.compression === 'none' ? 'none' : 'zstd', size: Number(s.size), endPos: s.endPos }));
}

/**
 * What a restore that starts later (a sandbox once its server runs, an in-place one after its safety backup) keeps to
 * choose its plan again: the exact time asked, or `latest` when the plan replays every segment of the window (the
 * chain may only have grown by then, a partial segment at its end included). Without segments, the backup alone.
 */
export function momentToReplan(plan: RestorePlan | undefined): string | undefined {
  if (plan?.recoverTo) return plan.recoverTo;
  return plan?.choice ? 'latest' : undefined;
}

/** What the Restore records of its plan (RestorePlanRef), the moment its data will show (effectiveTime) included. */
export function planRefOf(backup: BackupRow, plan: RestorePlan | undefined) {
  if (!plan) return undefined;
  return {
    baseBackupID: backup.id,
    segments: segmentsOf(plan).length,
    ...(plan.targetTime ? { targetTime: plan.targetTime } : {}),
    ...(plan.effectiveTime ? { effectiveTime: plan.effectiveTime } : {}),
    bytes: plan.bytes,
    message: planMessage(plan),
  };
}

/** What a Restore records of its plan (its `plan` column), written by planRefOf alone. */
export type RestorePlanRef = NonNullable<ReturnType<typeof planRefOf>>;

/** What the plan restores, in words: exactly to a time, or the effective time of the newest full before it. */
export function planMessage(plan: RestorePlan): string {
  if (plan.choice) return `backup ${plan.baseBackupID} plus ${plan.segments} WAL segments, recovered exactly to ${plan.effectiveTime}`;
  return `backup ${plan.baseBackupID}, consistent at ${plan.effectiveTime}${plan.targetTime && plan.targetTime !== plan.effectiveTime ? ` (the newest backup at or before ${plan.targetTime}; without change capture that is the time restored)` : ''}`;
}

/** The checks a restore asked for: its own list, or with `runChecks` the policy's verification checks (else the defaults). */
export function requestedChecks(request: Pick<RestoreRequest, 'checks' | 'runChecks'>, policyChecks: string[] | undefined): string[] | undefined {
  if (request.checks?.length) return request.checks;
  return request.runChecks ? (policyChecks?.length ? policyChecks : DEFAULT_VERIFY_CHECKS) : undefined;
}

/** Binlogs replay whole databases: a table-level MariaDB/MySQL restore can only use the dump, not a moment after it. */
export function refuseTablesWithBinlogs(spec: TargetSpec, tables: string[] | undefined, segments: number): void {
  if (tables?.length && spec.engine === 'mysql' && segments > 0) {
    throw new AppError('not-restorable', 'A table-level restore of MariaDB/MySQL to a moment of the window is not available: binlogs replay whole databases. Restore the database to a new name at that moment instead.');
  }
}

/**
 * `namespace/name` (or a name in `defaultNamespace`). Part 2.1 leaves every RestoreRequest member optional, so a
 * request without its target reaches this and is a 400 naming the member.
 */
export function splitTarget(value: string | undefined, defaultNamespace = 'default'): [string, string] {
  if (!value) throw new AppError('validation-failed', 'target: is required, as namespace/name');
  const parts = value.split('/');
  if (parts.length === 1 && parts[0]) return [defaultNamespace, parts[0]];
  if (parts.length === 2 && parts[0] && parts[1]) return [parts[0], parts[1]];
  throw new AppError('validation-failed', `target: "${value}" must be namespace/name`);
}

export function restoreEvent(row: RestoreRow, version: bigint): ConsoleEvent {
  const progress = (row.progress ?? {}) as { stage?: string; bytes?: number };
  return { kind: 'restore', namespace: row.namespace, name: row.name, phase: row.phase, stage: progress.stage ?? '', message: row.message, bytes: Number(progress.bytes ?? 0), version: Number(version) };
}
