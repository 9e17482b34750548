import { retryAborted } from '@sigil/kit/db';
import { AppError } from '@sigil/kit/errors';
import type { Logger } from '@sigil/kit/log';
import type { StrataPrincipal } from '@sigil/proto/strata';
import { BACKUP_PHASES, backupEvent, dispatchQueued, queueBackup, type BackupDeps, type BackupRow } from '../backups/backups.ts';
import { CONDITION, withConditions, type ConditionInput } from '../resources/conditions.ts';
import { bumpCatalogVersion, catalogVersion, type DbOrTx } from '../db.ts';
import type { StoredResource } from '../resources/resources.ts';
import { decide, scheduleFor, typicalIntervalMs } from '../scheduling/schedule.ts';
import type { BackupPolicySpec as PolicySpec, BackupStoreSpec as StoreSpec, BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';
import { STRATA_LABELS as LABELS } from '@sigil/proto/strata';
import { findPolicy, findStore, loadTargetBundle } from '../resources/stores.ts';
import { backupRefView } from './views.ts';
import { mayReplicate } from '../backups/backups.ts';
import { chainSummary, type ChainSummary } from '../change-capture/chain-inputs.ts';
import { targetStats, type TargetStats } from './target-stats.ts';
import { pitrSettings } from '../change-capture/streams.ts';
import type { TargetPitrStatus } from '@sigil/proto/resources';

export interface TargetFilters {
  env?: string;
  org?: string;
  project?: string;
  health?: string;
  q?: string;
}

/**
 * Targets as the console shows them. Health: `ok`, `never` (no successful backup yet), `failing` (the last
 * run failed), `stale` (no success for two schedule intervals), `suspended`, `misconfigured` (policy or
 * store missing).
 */
export function createTargetService(deps: BackupDeps & { log: Logger }) {
  const { db, resources } = deps;

  /** The console's view of a target, with the chain and the resource it was computed from. */
  async function describe(conn: DbOrTx, target: StoredResource<TargetSpec>, stats: TargetStats | undefined, now: Date): Promise<TargetRecord> {
    const { namespace, name } = target.metadata;
    const labels = target.metadata.labels ?? {};
    const policy = await findPolicy(conn, resources, namespace, target.spec.policy);
    const store = policy ? await findStore(conn, resources, policy.metadata.namespace, policy.spec.store) : undefined;
    const status = target.status as { lastScheduleTime?: string; nextRunTime?: string; pitr?: TargetPitrStatus; lastVerification?: { time?: string; verifiedAt?: string } };
    const denied = status.pitr?.replicationDenied;
    const pitr = (target.spec.engine === 'postgres' || target.spec.engine === 'mysql') && pitrSettings(target, policy).enabled && mayReplicate(status.pitr);
    const chain = pitr ? await chainSummary(conn, target) : undefined;
    const suspended = target.spec.suspend === true;
    const { health, healthReason } = healthOf(target, policy, store, stats, now);
    const last = stats?.lastSuccess;
    const view = {
      namespace,
      name,
      engine: target.spec.engine,
      org: labels[LABELS.org] ?? '',
      project: labels[LABELS.project] ?? '',
      env: labels[LABELS.env] ?? '',
      policy: target.spec.policy,
      store: store?.metadata.name ?? policy?.spec.store ?? '',
      phase: health === 'misconfigured' ? 'Error' : suspended ? 'Suspended' : 'Ready',
      message: health === 'misconfigured' ? healthReason : '',
      health,
      healthReason,
      running: stats?.running?.name ?? '',
      suspended,
      // Change capture needs replication rights: without them the target takes logical backups and says why.
      pitr,
      ...(denied ? { replicationDenied: denied, replicationFix: status.pitr?.replicationFix ?? '' } : {}),
      chainBroken: chain?.chainBroken ?? false,
      onlyInStore: false,
      lastFull: last ? backupRefView(last) : null,
      ...(last?.completedAt ? { lastSuccess: last.completedAt.toISOString() } : {}),
      ...(!suspended && status.nextRunTime ? { nextRun: status.nextRunTime } : {}),
      ...(status.lastVerification?.verifiedAt ? { lastVerification: status.lastVerification.verifiedAt } : {}),
      windows: chain?.windows ?? [],
      gaps: chain?.gaps ?? 0,
      backups: stats?.backups ?? 0,
      segments: chain?.segments ?? 0,
      lagSeconds: pitr ? (status.pitr?.lagSeconds ?? 0) : 0,
      storedBytes: Number(stats?.storedBytes ?? 0n),
    };
    return { view, resource: target, chain, lastFinished: stats?.lastFinished };
  }

  function visible(principal: StrataPrincipal, target: StoredResource<TargetSpec>): boolean {
    const labels = target.metadata.labels ?? {};
    if (principal.orgs.length && !principal.orgs.includes(labels[LABELS.org] ?? '')) return false;
    if (principal.projects.length && !principal.projects.includes(labels[LABELS.project] ?? '')) return false;
    return true;
  }

  async function getVisible(principal: StrataPrincipal, namespace: string, name: string): Promise<StoredResource<TargetSpec>> {
    const target = await resources.get<TargetSpec>(db, 'BackupTarget', namespace, name);
    if (!target || !visible(principal, target)) throw new AppError('not-found', `Target ${namespace}/${name} was not found.`);
    return target;
  }

  async function setSuspended(principal: StrataPrincipal, namespace: string, name: string, suspend: boolean) {
    await getVisible(principal, namespace, name);
    const now = deps.clock();
    const version = await db.$transaction(async (tx) => {
      await resources.patchSpec(tx, 'BackupTarget', namespace, name, { suspend });
      // Slots missed while suspended are not caught up on resume.
      if (!suspend) await resources.patchStatus(tx, 'BackupTarget', namespace, name, { lastScheduleTime: now.toISOString() });
      return bumpCatalogVersion(tx);
    });
    await tick(now);
    deps.notify({ kind: 'target', namespace, name, phase: suspend ? 'Suspended' : 'Ready', stage: '', message: suspend ? 'suspended' : 'resumed', bytes: 0, version: Number(version) });
    return { message: `Target ${namespace}/${name} ${suspend ? 'suspended' : 'resumed'}.`, kind: 'BackupTarget', namespace, name, link: `/targets/${namespace}/${name}` };
  }

  /** One scheduler pass: queue due runs (at most one per target), refresh nextRunTime, then start what the limits allow. */
  async function tick(now = deps.clock()): Promise<void> {
    const queued: BackupRow[] = [];
    const version = await db.$transaction(async (tx) => {
      const locked = await tx.$queryRawUnsafe<Array<{ ok: boolean }>>(`SELECT pg_try_advisory_xact_lock(hashtext('strata-scheduler')) AS ok`);
      if (!locked[0]?.ok) return 0n;
      for (const target of await resources.list<TargetSpec>(tx, 'BackupTarget')) {
        const { namespace, name } = target.metadata;
        const policy = await findPolicy(tx, resources, namespace, target.spec.policy);
        if (!policy) continue;
        const schedule = scheduleFor(policy.spec, target.metadata.uid);
        const status = target.status as { lastScheduleTime?: string; nextRunTime?: string };
        const lastSlot = new Date(status.lastScheduleTime ?? target.metadata.creationTimestamp);
        const decision = decide(schedule, lastSlot, now);
        const patch: Record<string, unknown> = { nextRunTime: decision.nextRun.toISOString() };
        let scheduled: ConditionInput | undefined;
        if (decision.due) {
          patch.lastScheduleTime = decision.slot.toISOString();
          const slot = decision.slot.toISOString();
          if (target.spec.suspend) {
            // A suspended target's slots pass without a run, and without a word: suspending says so already.
          } else if (decision.run) {
            try {
              // The target's row first; the catalog version's last, after every target (the order every writer takes them).
              await resources.lock(tx, 'BackupTarget', namespace, name);
              const bundle = await loadTargetBundle(tx, resources, namespace, name);
              queued.push(await queueBackup(tx, bundle, { reason: 'scheduled', requestedBy: 'scheduler' }, now));
              scheduled = { type: CONDITION.scheduled, status: 'True', reason: 'RunQueued', message: `the run of ${slot} was queued` };
            } catch (error) {
              // A refusal (AppError) is the target's condition; a database error has aborted the pass's transaction.
              if (!(error instanceof AppError)) throw error;
              scheduled = { type: CONDITION.scheduled, status: 'False', reason: 'RunNotStarted', message: `scheduled run at ${slot} not started: ${(error as Error).message}` };
            }
          } else {
            scheduled = { type: CONDITION.scheduled, status: 'False', reason: 'MissedDeadline', message: `missed the run of ${slot}: older than startingDeadline` };
          }
        }
        if (patch.nextRunTime !== status.nextRunTime || decision.due) {
          await resources.updateStatus(tx, 'BackupTarget', namespace, name, (current) =>
            scheduled ? withConditions({ ...current.status, ...patch }, [scheduled], current.metadata.generation, now) : { ...current.status, ...patch },
          );
        }
      }
      return queued.length ? bumpCatalogVersion(tx) : 0n;
    });
    for (const row of queued) deps.notify(backupEvent(row, version));
    await dispatchQueued(deps);
  }

  /** The targets the principal may see that pass the filters, each with its chain and resource (the GraphQL console's). */
  async function listRecords(principal: StrataPrincipal, filters: TargetFilters): Promise<{ records: TargetRecord[]; catalogVersion: number }> {
    const now = deps.clock();
    const [targets, stats, version] = await Promise.all([resources.list<TargetSpec>(db, 'BackupTarget'), targetStats(db), catalogVersion(db)]);
    const records: TargetRecord[] = [];
    for (const target of targets) {
      if (!visible(principal, target)) continue;
      const record = await describe(db, target, stats.get(`${target.metadata.namespace}/${target.metadata.name}`), now);
      if (passes(record.view, filters, target)) records.push(record);
    }
    return { records, catalogVersion: Number(version) };
  }

  /** One target the principal may see (404 otherwise), with its chain and resource. */
  async function record(principal: StrataPrincipal, namespace: string, name: string): Promise<TargetRecord> {
    const target = await getVisible(principal, namespace, name);
    const stats = await targetStats(db, { namespace, name });
    return describe(db, target, stats.get(`${namespace}/${name}`), deps.clock());
  }

  return {
    tick,
    /** The target, if the principal may see it (404 otherwise). */
    visibleTarget: getVisible,
    isVisible: visible,
    listRecords,
    record,
    async list(principal: StrataPrincipal, filters: TargetFilters) {
      const { records, catalogVersion: version } = await listRecords(principal, filters);
      return { targets: records.map((record) => record.view), catalogVersion: version };
    },
    async detail(principal: StrataPrincipal, namespace: string, name: string) {
      const { view: v, resource: target, lastFinished: last } = await record(principal, namespace, name);
      return {
        target: v,
        spec: target.spec,
        status: {
          phase: v.phase,
          message: v.message || ((target.status as { message?: string }).message ?? ''),
          observedGeneration: target.metadata.generation,
          conditions: [],
          ...target.status,
          ...(last ? { lastBackup: backupRefView(last) } : {}),
          ...(v.lastSuccess ? { lastSuccessTime: v.lastSuccess } : {}),
          storeBytes: v.storedBytes,
        },
      };
    },
    suspend: (principal: StrataPrincipal, namespace: string, name: string) => setSuspended(principal, namespace, name, true),
    resume: (principal: StrataPrincipal, namespace: string, name: string) => setSuspended(principal, namespace, name, false),
    /** `skipLoadGuard`: run without the policy's load guard; a run the guard postponed is run now (docs/strata.md). */
    async backupNow(principal: StrataPrincipal, namespace: string, name: string, reason: string, options: { skipLoadGuard?: boolean } = {}) {
      await getVisible(principal, namespace, name);
      const now = deps.clock();
      // A deadlock victim is run again: the backup's insert renews the target's chain inputs through a trigger, whose
      // lock a concurrent writer may hold (seen in CI beside a pin's scheduler pass).
      const { row, version } = await retryAborted(() => db.$transaction(async (tx) => {
        const bundle = await loadTargetBundle(tx, resources, namespace, name);
        // The target's row before the catalog version's, in the order every writer takes them.
        await resources.patchStatus(tx, 'BackupTarget', namespace, name, { handledBackupNow: now.toISOString() });
        const row = await queueBackup(tx, bundle, { reason: reason || 'backup-now', requestedBy: principal.email || principal.id, skipLoadGuard: options.skipLoadGuard === true }, now);
        return { row, version: await bumpCatalogVersion(tx) };
      }));
      deps.notify(backupEvent(row, version));
      // The run is queued and committed: that is the answer. A dispatch that fails now (the database busy or away)
      // is the scheduler's next pass's to do again, not an error of this request.
      await dispatchQueued(deps).catch((error: unknown) => deps.log.warn({ err: error, backup: row.name }, 'backup-now: dispatch deferred to the next scheduler pass'));
      return { message: `Backup ${row.name} of ${namespace}/${name} requested.`, kind: 'Backup', namespace, name: row.name, link: `/backups/${row.id}` };
    },
    async queueFromResource(tx: Parameters<Parameters<typeof db.$transaction>[0]>[0], namespace: string, name: string, spec: Record<string, unknown>, principal: StrataPrincipal) {
      const targetName = String(spec.target);
      const bundle = await loadTargetBundle(tx, resources, namespace, targetName);
      const request = { reason: String(spec.reason ?? 'applied'), requestedBy: String(spec.requestedBy ?? (principal.email || principal.id)), name, skipLoadGuard: spec.skipLoadGuard === true };
      const row = await queueBackup(tx, bundle, request, deps.clock());
      return row;
    },
  };
}

export type TargetService = ReturnType<typeof createTargetService>;

/** A target as the console shows it (`view`, the API's Target), and what it was computed from. */
export interface TargetRecord {
  view: TargetView;
  resource: StoredResource<TargetSpec>;
  /** Its change-capture chain, for a target with point-in-time recovery. */
  chain: ChainSummary | undefined;
  lastFinished: BackupRow | undefined;
}

/** The API's Target (spec 2.1). */
export interface TargetView {
  namespace: string;
  name: string;
  engine: string;
  org: string;
  project: string;
  env: string;
  policy: string;
  store: string;
  phase: string;
  message: string;
  health: string;
  healthReason: string;
  running: string;
  suspended: boolean;
  pitr: boolean;
  replicationDenied?: string;
  replicationFix?: string;
  chainBroken: boolean;
  onlyInStore: boolean;
  lastFull: ReturnType<typeof backupRefView> | null;
  lastSuccess?: string;
  nextRun?: string;
  lastVerification?: string;
  windows: Array<{ from: string; to: string }>;
  gaps: number;
  backups: number;
  segments: number;
  lagSeconds: number;
  storedBytes: number;
}

function passes(v: TargetView, filters: TargetFilters, target: StoredResource<TargetSpec>): boolean {
  if (filters.env && v.env !== filters.env) return false;
  if (filters.org && v.org !== filters.org) return false;
  if (filters.project && v.project !== filters.project) return false;
  if (filters.health && v.health !== filters.health) return false;
  return !filters.q || matches(filters.q, [v.namespace, v.name, v.engine, v.policy, v.store, v.org, v.project, v.env, target.spec.endpoint.host, ...Object.values(target.metadata.labels ?? {})]);
}

function healthOf(
  target: StoredResource<TargetSpec>,
  policy: StoredResource<PolicySpec> | undefined,
  store: StoredResource<StoreSpec> | undefined,
  stats: TargetStats | undefined,
  now: Date,
): { health: string; healthReason: string } {
  if (!policy) return { health: 'misconfigured', healthReason: `policy ${target.spec.policy} does not exist` };
  if (!store) return { health: 'misconfigured', healthReason: `store ${policy.spec.store} does not exist` };
  if (target.spec.suspend) return { health: 'suspended', healthReason: 'scheduled backups are paused' };
  if (stats?.lastFinished?.phase === BACKUP_PHASES.failed) return { health: 'failing', healthReason: stats.lastFinished.message };
  const last = stats?.lastSuccess?.completedAt;
  if (!last) return { health: 'never', healthReason: 'no successful backup yet' };
  const schedule = scheduleFor(policy.spec, target.metadata.uid);
  const interval = typicalIntervalMs(schedule, last);
  if (now.getTime() - last.getTime() > 2 * interval + schedule.jitterMs) {
    return { health: 'stale', healthReason: `no successful backup since ${last.toISOString()}` };
  }
  return { health: 'ok', healthReason: '' };
}

function matches(q: string, fields: string[]): boolean {
  const needle = q.toLowerCase();
  return fields.some((f) => f.toLowerCase().includes(needle));
}


