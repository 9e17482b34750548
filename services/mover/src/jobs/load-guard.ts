/**
 * The load guard (policy `loadGuard`), the mover's half: before a backup starts, measure the source and compare
 * with the limits the job carries. Over a limit the run is postponed (the catalog waits `postponeFor` and hands it
 * out again) unless it was postponed `maxPostpones` times already: then it runs anyway, and its manifest says so.
 * The check runs here because the mover holds the credentials and the network path to the source. A measure the
 * server cannot give (a replica whose status is unreadable) never holds a backup back: it becomes a warning.
 */
import type { BackupJob, StrataReports } from '@sigil/proto/strata-jobs';
import { driverFor } from '../engines/index.ts';
import { measureLoad, type LoadMeasures } from '../engines/load.ts';

type LoadGuard = NonNullable<BackupJob['loadGuard']>;
type Exceeded = StrataReports['backup.postponed']['exceeded'][number];

export type LoadVerdict =
  | { postpone: false; warnings: string[] }
  | { postpone: true; report: StrataReports['backup.postponed'] };

const UNITS: Record<Exceeded['limit'], (value: number) => string> = {
  maxActiveConnections: (n) => `${n} connection${n === 1 ? '' : 's'} open to the target's databases`,
  maxReplicationLagSeconds: (n) => `replication lag of ${n} s`,
  maxLongTransactionSeconds: (n) => `a transaction open for ${n} s`,
};

/** Each limit the measures are over, with the measured value. */
export function exceededLimits(measures: LoadMeasures, guard: LoadGuard): Exceeded[] {
  const pairs: Array<[Exceeded['limit'], number | undefined]> = [
    ['maxActiveConnections', measures.activeConnections],
    ['maxReplicationLagSeconds', measures.replicationLagSeconds],
    ['maxLongTransactionSeconds', measures.longestTransactionSeconds],
  ];
  return pairs.flatMap(([limit, measured]) => {
    const max = guard[limit];
    return max !== undefined && measured !== undefined && measured > max ? [{ limit, measured, max }] : [];
  });
}

export function describeExceeded(exceeded: Exceeded[]): string {
  return exceeded.map((e) => `${UNITS[e.limit](e.measured)} (${e.limit} ${e.max})`).join('; ');
}

/**
 * Measures the source once and decides; no guard on the job (none in the policy, or skipLoadGuard): run. An engine
 * without a driver is left to the backup itself, which refuses it with its own message.
 */
export async function judgeLoad(job: BackupJob, now = () => new Date()): Promise<LoadVerdict> {
  const guard = job.loadGuard;
  if (!guard || job.database.engine === 'mongodb') return { postpone: false, warnings: [] };
  const databases = await driverFor(job.database.engine).listDatabases(job.database, job.databases);
  const measures = await measureLoad(job.database, databases);
  const notes = guard.maxReplicationLagSeconds !== undefined ? measures.notes.map((n) => `load guard: ${n}`) : [];
  const exceeded = exceededLimits(measures, guard);
  if (exceeded.length === 0) return { postpone: false, warnings: notes };
  const postpones = job.postpones ?? 0;
  if (postpones < guard.maxPostpones) {
    const report = { backupId: job.backupId, message: describeExceeded(exceeded), exceeded: exceeded as StrataReports['backup.postponed']['exceeded'], measuredAt: now().toISOString() };
    return { postpone: true, report };
  }
  const ran = `load guard: ran anyway after ${postpones} postponement${postpones === 1 ? '' : 's'} (maxPostpones ${guard.maxPostpones}): ${describeExceeded(exceeded)}`;
  return { postpone: false, warnings: [...notes, ran] };
}
