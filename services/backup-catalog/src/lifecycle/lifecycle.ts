/**
 * The catalog's lifecycle: retention for every target, then garbage collection of every writable store that has
 * garbage (something expired since its last pass) or whose last pass is older than the interval (objects a failed
 * run's cleanup left). The scheduler asks for it on every pass; retention runs when the catalog changed (a backup
 * succeeded, a pin moved) or a minute passed, and collection runs beside the scheduler, never holding it up.
 */
import { AppError } from '@sigil/kit/errors';
import { catalogVersion } from '../db.ts';
import type { ExclusiveWork } from '@sigil/kit/db';
import type { Logger } from '@sigil/kit/log';
import type { BackupStoreSpec as StoreSpec, BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';
import { BACKUP_PHASES, type BackupDeps } from '../backups/backups.ts';
import type { AuditLog } from '../console/audit.ts';
import { findPolicy } from '../resources/stores.ts';
import type { StoredResource } from '../resources/resources.ts';
import { collectGarbage, type GcResult } from './gc.ts';
import { applyRetention } from './retention-pass.ts';
import { syncPendingPins } from '../backups/pin-sync.ts';

/** How long one target's retention transaction may take (Prisma's default is 5 s). */
const RETENTION_TRANSACTION_MS = 120_000;

export interface LifecycleDeps extends BackupDeps {
  log: Logger;
  audit: AuditLog;
  /** A store with nothing known to collect is still swept this often (`GC_INTERVAL_MS`). */
  gcIntervalMs: number;
  /** Retention runs at least this often even when nothing changed: calendar buckets roll over (`RETENTION_INTERVAL_MS`). */
  retentionIntervalMs: number;
  /** Garbage younger than this is left for a later pass: the store's clock may differ from ours (`GC_SKEW_MARGIN_MS`). */
  gcSkewMarginMs: number;
  /** Across replicas, one scheduled collection of a store at a time (two would sweep it and record two passes). */
  exclusive?: ExclusiveWork;
}

export function createLifecycle(deps: LifecycleDeps) {
  /** The pass running on each store in this process: another request waits for it, then makes its own. */
  const running = new Map<string, Promise<GcResult>>();
  let lastRetention: { at: number; version: bigint } | undefined;
  /** After a pass failed, none starts before this (ms): a pass that cannot finish would otherwise run at every tick. */
  let retentionRetryAt = 0;
  /** The store's last-pass times are the wall clock's (they are compared with the store's own), so are these. */
  const startedAt = new Date();
  /** Retention expired something in this process since the last scheduled collection: collect now, whatever the clocks say. */
  let expiredSinceCollection = false;
  let collecting: Promise<void> | undefined;
  let retaining: Promise<void> | undefined;

  /** Whether the rules may decide differently than last time: the catalog changed, or time moved on. */
  async function retentionDue(now: Date): Promise<boolean> {
    if (now.getTime() < retentionRetryAt) return false;
    const version = await catalogVersion(deps.db);
    if (lastRetention && lastRetention.version === version && now.getTime() - lastRetention.at < deps.retentionIntervalMs) return false;
    return true;
  }

  /** Retention for every target; false when another replica held the lock for some target (it runs the pass then). */
  async function retention(now: Date): Promise<boolean> {
    let ranAll = true;
    for (const target of await deps.resources.list<TargetSpec>(deps.db, 'BackupTarget')) {
      // A target of tens of thousands of segments takes seconds to load and mark: more than Prisma's 5 s under load.
      await deps.db.$transaction(async (tx) => {
        const [lock] = await tx.$queryRawUnsafe<Array<{ ok: boolean }>>(`SELECT pg_try_advisory_xact_lock(hashtext('strata-retention')) AS ok`);
        if (!lock?.ok) {
          ranAll = false;
          return;
        }
        const outcome = await applyRetention(deps, tx, target, now);
        if (outcome.expired.length || outcome.segmentsExpired) expiredSinceCollection = true;
        if (outcome.expired.length) deps.log.info({ target: `${target.metadata.namespace}/${target.metadata.name}`, expired: outcome.expired, segments: outcome.segmentsExpired }, 'retention expired backups');
      }, { timeout: RETENTION_TRANSACTION_MS });
    }
    return ranAll;
  }

  /** One retention pass at a time in this process: a caller that finds one running waits for it, then runs its own if due. */
  async function retentionIfDue(now: Date): Promise<void> {
    while (retaining) await retaining;
    retaining = (async () => {
      if (!(await retentionDue(now))) return;
      // Pins the store could not take when they were set (it was down) are written again first.
      await syncPendingPins(deps);
      const version = await catalogVersion(deps.db);
      try {
        if (await retention(now)) lastRetention = { at: now.getTime(), version };
      } catch (error) {
        retentionRetryAt = now.getTime() + deps.retentionIntervalMs;
        throw error;
      }
    })().finally(() => (retaining = undefined));
    await retaining;
  }

  /**
   * Whether a store has something to collect: a backup expired since its last pass, the interval passed, or expired
   * segments wait (those younger than the skew margin stay after a pass: looked at again once it has gone by).
   */
  async function gcDue(store: StoredResource<StoreSpec>): Promise<boolean> {
    const { lastGCTime: last, lastGCWaiting: waiting = 0 } = store.status as { lastGCTime?: string; lastGCWaiting?: number };
    // A store never collected counts its interval from this process's start (no sweep at every boot). Expiries in this
    // process start a pass by themselves (scheduledGc); the catalog's records find those from before a restart.
    const elapsed = Date.now() - (last ? Date.parse(last) : startedAt.getTime());
    if (elapsed >= deps.gcIntervalMs) return true;
    // Garbage the last pass found too recent is old enough once the margin has passed.
    if (waiting > 0 && elapsed > deps.gcSkewMarginMs) return true;
    const since = last ? new Date(last) : new Date(0);
    for (const target of await deps.resources.list<TargetSpec>(deps.db, 'BackupTarget')) {
      const { namespace, name } = target.metadata;
      const policy = await findPolicy(deps.db, deps.resources, namespace, target.spec.policy);
      if (policy?.spec.store !== store.metadata.name) continue;
      if (await deps.db.backup.count({ where: { namespace, targetName: name, phase: BACKUP_PHASES.expired, expiredAt: { gt: since } } })) return true;
      if (elapsed > deps.gcSkewMarginMs && (await deps.db.segment.count({ where: { namespace, targetName: name, expired: true } }))) return true;
    }
    return false;
  }

  async function runGc(store: StoredResource<StoreSpec>, dryRun: boolean): Promise<GcResult> {
    const id = `${store.metadata.namespace}/${store.metadata.name}`;
    for (let pass = running.get(id); pass; pass = running.get(id)) await pass.catch(() => undefined);
    const pass = collectGarbage(deps, store, { dryRun, skewMarginMs: deps.gcSkewMarginMs }).finally(() => running.delete(id));
    running.set(id, pass);
    return await pass;
  }

  /**
   * A scheduled pass over a store, unless another replica is collecting it; then its status is read again under the
   * lock, since a pass that just ended elsewhere leaves nothing due.
   */
  async function collectOnce(store: StoredResource<StoreSpec>, expired: boolean): Promise<GcResult | undefined> {
    if (!deps.exclusive) return await runGc(store, false);
    const { namespace, name } = store.metadata;
    const outcome = await deps.exclusive.tryExclusive(`strata-gc:${namespace}/${name}`, async () => {
      const current = await deps.resources.get<StoreSpec>(deps.db, 'BackupStore', namespace, name);
      if (!current || current.spec.readOnly || !(expired || (await gcDue(current)))) return undefined;
      return await runGc(current, false);
    });
    return outcome.ran ? outcome.value : undefined;
  }

  async function scheduledGc(): Promise<void> {
    const expired = expiredSinceCollection;
    expiredSinceCollection = false;
    for (const store of await deps.resources.list<StoreSpec>(deps.db, 'BackupStore')) {
      if (store.spec.readOnly || running.has(`${store.metadata.namespace}/${store.metadata.name}`) || !(expired || (await gcDue(store)))) continue;
      const result = await collectOnce(store, expired);
      if (!result) continue;
      await deps.audit.record({
        time: deps.clock(),
        user: 'scheduler',
        role: 'system',
        action: 'collectStoreGarbage',
        target: '',
        object: `BackupStore/${store.metadata.namespace}/${store.metadata.name}`,
        outcome: result.error ? 'failed' : 'ok',
        from: 'scheduler',
        detail: { objects: result.objects, bytes: result.bytes, ...(result.error ? { error: result.error } : {}) },
      });
      if (result.error) deps.log.warn({ store: store.metadata.name, error: result.error }, 'garbage collection stopped at an error');
    }
  }

  return {
    /** A scheduler pass: retention when due, then (in the background) the stores that have garbage. */
    async tick(now = deps.clock()): Promise<void> {
      await retentionIfDue(now);
      collecting ??= scheduledGc()
        .catch((error: unknown) => deps.log.error({ err: error }, 'garbage collection pass failed'))
        .finally(() => (collecting = undefined));
    },
    /** Resolves once no scheduled collection runs (tests, shutdown). */
    async idle(): Promise<void> {
      await collecting;
    },
    /** `POST /stores/{ns}/{name}/gc`: retention first, so the pass sees what the rules say now. */
    async gc(namespace: string, name: string, dryRun: boolean): Promise<GcResult> {
      const store = await deps.resources.get<StoreSpec>(deps.db, 'BackupStore', namespace, name);
      if (!store) throw new AppError('not-found', `BackupStore ${namespace}/${name} not found.`);
      if (store.spec.readOnly) throw new AppError('unprocessable', `Store ${name} is read-only: it is never garbage collected.`);
      lastRetention = undefined;
      retentionRetryAt = 0;
      await retentionIfDue(deps.clock());
      return await runGc(store, dryRun);
    },
  };
}

export type Lifecycle = ReturnType<typeof createLifecycle>;
