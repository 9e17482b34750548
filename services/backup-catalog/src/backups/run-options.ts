/**
 * What a backup job carries from the policy and the target besides where to read and write: the load guard's
 * limits, the selective exports and the exact row counts. Defaults live here, where the job is built, so the mover
 * never has to know the resources' shapes (docs/strata.md, "The load guard", "Selective exports", "Exact counts").
 */
import { parseDuration } from '@sigil/proto/units';
import type { BackupJob } from '@sigil/proto/strata-jobs';
import type { BackupPolicySpec as PolicySpec, BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';

/** How long a postponed run waits when the policy names no `postponeFor`. */
export const DEFAULT_POSTPONE_FOR = '15m';
/** How many times a run is postponed at most when the policy names no `maxPostpones`: an hour late at worst by default. */
export const DEFAULT_MAX_POSTPONES = 4;
/** The statement timeout of each selective export. */
export const EXPORT_QUERY_TIMEOUT_MS = 5 * 60_000;
export const EXACT_COUNTS_DEFAULTS = { maxRows: 100_000, timeout: '5s' };

/**
 * Postgres backs up physically (the base of point-in-time restore) when its user may replicate, unless told
 * otherwise. *Decision:* a target that excludes tables or table data without naming a mode is backed up logically:
 * a physical base copies every table whole, and exclusions silently ignored would keep data its owner asked to leave
 * out (an explicit `physical` with exclusions is refused when applied).
 */
export function backupModeOf(target: Pick<TargetSpec, 'engine' | 'scope'>, mayReplicate: boolean): 'physical' | 'logical' {
  const scope = target.scope ?? {};
  const excludes = (scope.excludeData?.length ?? 0) > 0 || (scope.excludeTables?.length ?? 0) > 0;
  if (target.engine !== 'postgres' || scope.mode === 'logical' || !mayReplicate) return 'logical';
  return scope.mode === 'physical' || !excludes ? 'physical' : 'logical';
}

type LoadGuardSpec = NonNullable<PolicySpec['loadGuard']>;
const LIMITS = ['maxActiveConnections', 'maxReplicationLagSeconds', 'maxLongTransactionSeconds'] as const;

/** The guard's limits for the mover; none when the policy sets no limit or the run skips the guard. */
export function loadGuardOf(guard: LoadGuardSpec | undefined, skip: boolean): Pick<BackupJob, 'loadGuard'> {
  if (!guard || skip) return {};
  const limits = Object.fromEntries(LIMITS.filter((l) => guard[l] !== undefined).map((l) => [l, guard[l]]));
  if (Object.keys(limits).length === 0) return {};
  return { loadGuard: { ...limits, maxPostpones: guard.maxPostpones ?? DEFAULT_MAX_POSTPONES } };
}

/** When a run postponed now is handed out again. */
export function postponedUntil(guard: LoadGuardSpec | undefined, now: Date): Date {
  return new Date(now.getTime() + parseDuration(guard?.postponeFor ?? DEFAULT_POSTPONE_FOR));
}

export function exportsOf(scope: TargetSpec['scope']): Pick<BackupJob, 'queries' | 'queryTimeoutMs'> {
  const queries = scope?.queries ?? [];
  if (queries.length === 0) return {};
  return { queries: queries.map((q) => ({ name: q.name, sql: q.sql, ...(q.database ? { database: q.database } : {}) })), queryTimeoutMs: EXPORT_QUERY_TIMEOUT_MS };
}

export function exactCountsOf(exact: Partial<NonNullable<TargetSpec['exactCounts']>> | undefined): Pick<BackupJob, 'exactCounts'> {
  if (!exact?.enabled) return {};
  return { exactCounts: { maxRows: exact.maxRows ?? EXACT_COUNTS_DEFAULTS.maxRows, timeoutMs: Math.max(1, parseDuration(exact.timeout ?? EXACT_COUNTS_DEFAULTS.timeout)) } };
}
