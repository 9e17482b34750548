import { AppError } from '@sigil/kit/errors';
import { parseDuration, parseQuantity } from '@sigil/proto/units';
import type { BackupJob } from '@sigil/proto/strata-jobs';
import { enqueueJob, newRunId } from './job-queue.ts';
import { backupModeOf, exactCountsOf, exportsOf, loadGuardOf } from './run-options.ts';
import { recordBackupOutcome } from '../resources/conditions.ts';
import { bumpCatalogVersion, type Db, type Tx } from '../db.ts';
import type { ConsoleEvent } from '../console/events.ts';
import type { ResourceRepository } from '../resources/resources.ts';
import type { SecretStore } from '../resources/secrets.ts';
import { DEFAULT_ENGINE_PORTS as DEFAULT_PORTS, STRATA_LABELS as LABELS } from '@sigil/proto/strata';
import { databaseCredentials, loadTargetBundle, storeAccess, type TargetBundle } from '../resources/stores.ts';
import type { TargetPitrStatus } from '@sigil/proto/resources';

/** Replication rights were checked and nothing is missing. */
export function mayReplicate(status: TargetPitrStatus | undefined): boolean {
  return Boolean(status?.replicationCheckedAt) && !status?.replicationDenied;
}

export type BackupRow = NonNullable<Awaited<ReturnType<Db['backup']['findUnique']>>>;

/**
 * Phases of a backup run: Queued (waiting for a slot under the policy's limits), Postponed (the load guard found the
 * source busy; queued again at `postponedUntil`), Running, Succeeded, Failed; Expired (a succeeded one no retention
 * rule keeps any more, lifecycle/).
 */
export const BACKUP_PHASES = { queued: 'Queued', postponed: 'Postponed', running: 'Running', succeeded: 'Succeeded', failed: 'Failed', expired: 'Expired' } as const;
/** A run that will not change by itself any more; `Expired` is a succeeded one retention let go (lifecycle/). */
export const TERMINAL_PHASES: readonly string[] = ['Succeeded', 'Failed', 'Expired'];

export interface BackupDeps {
  db: Db;
  resources: ResourceRepository;
  secrets: SecretStore;
  secretsKey: Buffer;
  notify: (event: ConsoleEvent) => void;
  clock: () => Date;
  /** Subject cell shared with the movers (see strataJobSubject). */
  cell: string;
}

export interface QueueRequest {
  reason: string;
  requestedBy: string;
  /** The Backup resource's name; derived from the target and the id when absent. */
  name?: string;
  /** Run without the policy's load guard (Backup `skipLoadGuard`, `backup-now?skipLoadGuard=true`). */
  skipLoadGuard?: boolean;
}

/**
 * Records a Backup in phase Queued; the dispatcher starts it when the policy's limits allow. The caller bumps the
 * catalog version, last in its transaction: a pass that queues runs for several targets would otherwise hold the
 * version's row while it waits for the next target's, the reverse of `backup-now`'s order, and Postgres would abort
 * one of the two as a deadlock (test/lock-order.test.ts).
 */
export async function queueBackup(tx: Tx, bundle: TargetBundle, request: QueueRequest, now: Date): Promise<BackupRow> {
  const { target, policy, store } = bundle;
  const { namespace, name: targetName } = target.metadata;
  if (target.spec.engine === 'mongodb') {
    throw new AppError('unprocessable', `Target ${namespace}/${targetName}: mongodb backups are not available in this release.`);
  }
  // Refused when asked, not when dispatched: a read-only store is another deployment's to write.
  if (store.spec.readOnly) throw new AppError('unprocessable', `Target ${namespace}/${targetName}: its policy's store ${store.metadata.name} is read-only; backups cannot be written to it.`);
  const queued = await tx.backup.findFirst({ where: { namespace, targetName, phase: BACKUP_PHASES.queued } });
  if (queued) throw new AppError('conflict', `A backup of ${namespace}/${targetName} is already queued (${queued.name}).`);
  const postponed = await tx.backup.findFirst({ where: { namespace, targetName, phase: BACKUP_PHASES.postponed } });
  if (postponed) return requeuePostponed(tx, postponed, request);
  const id = newRunId(now);
  const name = request.name ?? `${targetName}-${id}`.slice(0, 253);
  if (request.name && (await tx.backup.findUnique({ where: { namespace_name: { namespace, name } } }))) {
    throw new AppError('conflict', `Backup ${namespace}/${name} already exists.`);
  }
  const row = await tx.backup.create({
    data: {
      id,
      namespace,
      name,
      targetName,
      store: store.metadata.name,
      policy: policy.metadata.name,
      engine: target.spec.engine,
      host: `${target.spec.endpoint.host}:${target.spec.endpoint.port ?? DEFAULT_PORTS[target.spec.engine]}`,
      phase: BACKUP_PHASES.queued,
      message: 'waiting for a free slot',
      reason: request.reason,
      requestedBy: request.requestedBy,
      priority: policy.spec.limits?.priority ?? 0,
      queuedAt: now,
      skipLoadGuard: request.skipLoadGuard ?? false,
    },
  });
  return row;
}

/**
 * A run asked for while the target's run is postponed by the load guard: that run is the one asked for, now. It is
 * queued again at once (the guard measures again unless this request skips it; its postponements still count toward
 * `maxPostpones`). The scheduler's next slot does not: it leaves the postponed run to its time, and a Backup
 * document names a run of its own.
 */
async function requeuePostponed(tx: Tx, postponed: BackupRow, request: QueueRequest): Promise<BackupRow> {
  const { namespace, targetName } = postponed;
  if (request.name || request.requestedBy === 'scheduler') {
    throw new AppError('conflict', `The backup ${postponed.name} of ${namespace}/${targetName} is postponed by the load guard until ${postponed.postponedUntil?.toISOString() ?? 'later'}.`);
  }
  const skip = request.skipLoadGuard === true || postponed.skipLoadGuard;
  const row = await tx.backup.update({
    where: { id: postponed.id },
    data: { phase: BACKUP_PHASES.queued, postponedUntil: null, skipLoadGuard: skip, message: `requested again by ${request.requestedBy}${skip ? ' without the load guard' : ''}` },
  });
  return row;
}

export function backupEvent(row: BackupRow, version: bigint, stage = ''): ConsoleEvent {
  const progress = (row.progress ?? {}) as { stage?: string; bytes?: number };
  return {
    kind: 'backup',
    namespace: row.namespace,
    name: row.name,
    phase: row.phase,
    stage: stage || progress.stage || '',
    message: row.message,
    bytes: Number(progress.bytes ?? row.rawBytes ?? 0),
    version: Number(version),
  };
}

interface Limits {
  perHost: number;
  perTarget: number;
  global: number;
}

/** Limits of 0 (or absent) mean unlimited, except perTarget, which defaults to one run at a time. */
function limitsOf(bundle: TargetBundle): Limits {
  const limits = bundle.policy.spec.limits ?? {};
  return { perHost: limits.perHost ?? 0, perTarget: limits.perTarget ?? 1, global: limits.global ?? 0 };
}

/**
 * Starts queued backups, highest priority first then oldest, as far as every limit allows:
 * `perTarget` and `perHost` count running backups of the same target and database server, `global` all.
 * Runs under an advisory lock so replicas never start the same backup twice.
 */
export async function dispatchQueued(deps: BackupDeps): Promise<BackupRow[]> {
  const started: BackupRow[] = [];
  const failed: BackupRow[] = [];
  const version = await deps.db.$transaction(async (tx) => {
    await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(hashtext('strata-dispatch'))`);
    const released = await requeueDuePostponed(tx, deps.clock());
    const queued = await tx.backup.findMany({ where: { phase: BACKUP_PHASES.queued }, orderBy: [{ priority: 'desc' }, { queuedAt: 'asc' }] });
    if (queued.length === 0) return 0n;
    const running = await tx.backup.findMany({ where: { phase: BACKUP_PHASES.running }, select: { namespace: true, targetName: true, host: true } });
    const count = (pred: (r: { namespace: string; targetName: string; host: string }) => boolean) => running.filter(pred).length;
    for (const backup of queued) {
      let bundle: TargetBundle;
      try {
        bundle = await loadTargetBundle(tx, deps.resources, backup.namespace, backup.targetName);
      } catch (error) {
        failed.push(await failQueued(tx, deps.resources, backup, (error as Error).message, deps.clock()));
        continue;
      }
      const limits = limitsOf(bundle);
      const sameTarget = count((r) => r.namespace === backup.namespace && r.targetName === backup.targetName);
      const sameHost = count((r) => r.host === backup.host);
      if (limits.perTarget > 0 && sameTarget >= limits.perTarget) continue;
      if (limits.perHost > 0 && sameHost >= limits.perHost) continue;
      if (limits.global > 0 && running.length >= limits.global) continue;
      let job: BackupJob;
      try {
        job = await buildBackupJob(tx, deps, bundle, backup);
      } catch (error) {
        failed.push(await failQueued(tx, deps.resources, backup, (error as Error).message, deps.clock()));
        continue;
      }
      await enqueueJob(tx, deps.secretsKey, { id: `${backup.id}.${backup.attempts + 1}`, type: 'backup.run', cell: deps.cell }, job);
      const row = await tx.backup.update({
        where: { id: backup.id },
        data: { phase: BACKUP_PHASES.running, attempts: { increment: 1 }, message: 'handed to a mover', progress: { stage: 'pending', bytes: 0, totalBytes: 0, updatedAt: deps.clock().toISOString() } },
      });
      running.push({ namespace: row.namespace, targetName: row.targetName, host: row.host });
      started.push(row);
    }
    return started.length || failed.length || released ? bumpCatalogVersion(tx) : 0n;
  });
  for (const row of [...started, ...failed]) deps.notify(backupEvent(row, version));
  return started;
}

/** Postponed runs whose `postponedUntil` has passed are queued again (they keep their place: their first queuedAt). */
async function requeueDuePostponed(tx: Tx, now: Date): Promise<number> {
  const { count } = await tx.backup.updateMany({
    where: { phase: BACKUP_PHASES.postponed, postponedUntil: { lte: now } },
    data: { phase: BACKUP_PHASES.queued, message: 'postponed by the load guard; waiting for a free slot' },
  });
  return count;
}

async function failQueued(tx: Tx, resources: ResourceRepository, backup: BackupRow, message: string, now: Date): Promise<BackupRow> {
  const row = await tx.backup.update({ where: { id: backup.id }, data: { phase: BACKUP_PHASES.failed, message, completedAt: now } });
  await recordBackupOutcome(tx, resources, row, now);
  return row;
}

async function buildBackupJob(tx: Tx, deps: BackupDeps, bundle: TargetBundle, backup: BackupRow): Promise<BackupJob> {
  const { target, policy, store } = bundle;
  if (store.spec.readOnly) throw new AppError('unprocessable', `Store ${store.metadata.name} is read-only; backups cannot be written to it.`);
  const access = await storeAccess(tx, deps.secrets, store);
  const credentials = await databaseCredentials(tx, deps.secrets, target);
  const labels = target.metadata.labels ?? {};
  const compression = policy.spec.compression ?? {};
  return {
    mode: backupModeOf(target.spec, mayReplicate((target.status as { pitr?: TargetPitrStatus }).pitr)),
    backupId: backup.id,
    namespace: backup.namespace,
    name: backup.name,
    target: {
      namespace: target.metadata.namespace,
      name: target.metadata.name,
      uid: target.metadata.uid,
      org: labels[LABELS.org] ?? '',
      project: labels[LABELS.project] ?? '',
      env: labels[LABELS.env] ?? '',
    },
    policy: policy.metadata.name,
    reason: backup.reason,
    requestedBy: backup.requestedBy,
    database: {
      engine: target.spec.engine,
      host: target.spec.endpoint.host,
      port: target.spec.endpoint.port ?? DEFAULT_PORTS[target.spec.engine],
      ...credentials,
    },
    databases: target.spec.databases ?? ['*'],
    excludeData: target.spec.scope?.excludeData ?? [],
    excludeTables: target.spec.scope?.excludeTables ?? [],
    postpones: backup.postpones,
    ...loadGuardOf(policy.spec.loadGuard, backup.skipLoadGuard),
    ...exportsOf(target.spec.scope),
    ...exactCountsOf(target.spec.exactCounts),
    store: {
      ...access,
      storeName: store.metadata.name,
      ageRecipients: store.spec.encryption.ageRecipients,
      catalogRecipients: store.spec.encryption.catalogRecipients ?? [],
    },
    compression: { algorithm: compression.algorithm ?? 'zstd', level: compression.level ?? 'default', threads: compression.threads ?? 0 },
    bandwidthBytesPerSecond: policy.spec.limits?.bandwidth ? parseQuantity(policy.spec.limits.bandwidth) : 0,
    stallTimeoutMs: parseDuration(policy.spec.jobs?.stallTimeout ?? '60s'),
    activeDeadlineMs: policy.spec.jobs?.activeDeadline ? parseDuration(policy.spec.jobs.activeDeadline) : 0,
  };
}
