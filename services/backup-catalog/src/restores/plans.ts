import { AppError } from '@sigil/kit/errors';
import type { BackupTargetSpec as TargetSpec, TargetPitrStatus } from '@sigil/proto/resources';
import { BACKUP_PHASES, mayReplicate, type BackupRow } from '../backups/backups.ts';
import { chooseChain, type ChainReport, type PlanChoice, type Window } from '../change-capture/chain.ts';
import type { DbOrTx } from '../db.ts';
import type { ResourceRepository, StoredResource } from '../resources/resources.ts';
import { chainReport, segmentObjects, type LoadedSegment } from '../change-capture/chain-inputs.ts';
import { findPolicy } from '../resources/stores.ts';
import { pitrSettings } from '../change-capture/streams.ts';

/** Spec 2.1 Plan, with what a restore needs to follow it. */
export interface RestorePlan {
  restorable: boolean;
  reason?: string;
  baseBackupID?: string;
  baseTime?: string;
  effectiveTime?: string;
  targetTime?: string;
  bytes: number;
  segments: number;
  windows: Window[];
  backup?: BackupRow;
  /** With change capture: the chain and the segments to replay. */
  choice?: PlanChoice;
  /** The time to recover to exactly as asked (RFC 3339), unless every segment given ends before it. */
  recoverTo?: string;
}

function parseAt(at: string | undefined): Date | 'latest' | undefined {
  if (at === undefined || at === '') return undefined;
  if (at === 'latest') return 'latest';
  const time = new Date(at);
  if (Number.isNaN(time.getTime())) throw new AppError('validation-failed', `at: "${at}" is neither an RFC 3339 time nor latest`);
  return time;
}

const describe = (windows: Window[]): string => (windows.length ? windows.map((w) => `${w.from} – ${w.to}`).join(', ') : 'none yet');

/** A succeeded backup's id and the moment it restores (its manifest's consistent-at time), read without the manifest. */
interface BaseCandidate {
  id: string;
  at: Date;
  storedBytes: bigint;
}

const CANDIDATES = `SELECT id, stored_bytes AS "storedBytes", manifest->>'consistentAt' AS consistent_at, completed_at, queued_at
  FROM backups WHERE namespace = $1 AND target_name = $2 AND phase = '${BACKUP_PHASES.succeeded}' ORDER BY completed_at DESC`;

async function candidates(conn: DbOrTx, namespace: string, name: string): Promise<BaseCandidate[]> {
  const rows = await conn.$queryRawUnsafe<Array<{ id: string; storedBytes: bigint; consistent_at: string | null; completed_at: Date | null; queued_at: Date }>>(CANDIDATES, namespace, name);
  return rows.map((row) => ({ id: row.id, storedBytes: row.storedBytes, at: row.consistent_at ? new Date(row.consistent_at) : (row.completed_at ?? row.queued_at) }));
}

/**
 * What restoring a target to `at` takes. With change capture (postgres, pitr on, replication allowed) the time
 * must lie inside a window and is restored exactly; without it, the newest full at or before `at` is used and the
 * plan says the effective time. A target without any completed backup is a 422. Only the chosen backup and the
 * chosen segments are read whole: a target may have thousands of each.
 */
export async function planFor(conn: DbOrTx, resources: ResourceRepository, target: StoredResource<TargetSpec>, atText: string | undefined): Promise<RestorePlan> {
  const { namespace, name } = target.metadata;
  const at = parseAt(atText);
  const bases = await candidates(conn, namespace, name);
  if (bases.length === 0) throw new AppError('not-restorable', `Target ${namespace}/${name} has no completed backup yet.`);
  const policy = await findPolicy(conn, resources, namespace, target.spec.policy);
  const pitr = (target.status as { pitr?: TargetPitrStatus }).pitr;
  const capture = (target.spec.engine === 'postgres' || target.spec.engine === 'mysql') && pitrSettings(target, policy).enabled && mayReplicate(pitr);
  const report = capture ? await chainReport(conn, target) : undefined;
  if (report && report.windows.length > 0) return exactPlan(conn, report, at ?? 'latest', at === undefined ? 'latest' : (atText as string));
  if (capture && at instanceof Date) {
    return { restorable: false, reason: `${at.toISOString()} lies outside every change-capture window of ${namespace}/${name} (windows: none yet; the first physical full backup opens one)`, bytes: 0, segments: 0, windows: [] };
  }
  return fullPlan(conn, bases, at, report?.windows ?? []);
}

async function exactPlan(conn: DbOrTx, report: ChainReport<LoadedSegment>, at: Date | 'latest', atText: string): Promise<RestorePlan> {
  const newest = report.windows.at(-1) as Window;
  const time = at === 'latest' ? new Date(newest.to) : at;
  const chosen = chooseChain(report, at);
  if (!chosen) {
    return { restorable: false, reason: `${time.toISOString()} lies outside every change-capture window (windows: ${describe(report.windows)})`, targetTime: time.toISOString(), bytes: 0, segments: 0, windows: report.windows };
  }
  const choice = { ...chosen, segments: await segmentObjects(conn, chosen.segments) };
  const backup = await conn.backup.findUnique({ where: { id: choice.chain.full.id } });
  const bytes = choice.chain.full.storedBytes + choice.segments.reduce((sum, s) => sum + Number(s.size), 0);
  return {
    restorable: true,
    baseBackupID: choice.chain.full.id,
    baseTime: choice.chain.full.time.toISOString(),
    effectiveTime: time.toISOString(),
    targetTime: time.toISOString(),
    bytes,
    segments: choice.segments.length,
    windows: report.windows,
    ...(backup ? { backup } : {}),
    choice,
    ...(choice.toEnd ? {} : { recoverTo: at === 'latest' ? time.toISOString() : atText }),
  };
}

async function fullPlan(conn: DbOrTx, bases: BaseCandidate[], at: Date | 'latest' | undefined, windows: Window[]): Promise<RestorePlan> {
  const time = at instanceof Date ? at : undefined;
  const base = bases.filter((b) => !time || b.at <= time).sort((a, b) => b.at.getTime() - a.at.getTime())[0];
  const backup = base && (await conn.backup.findUnique({ where: { id: base.id } }));
  if (!base || !backup) {
    return { restorable: false, reason: `No backup is consistent at or before ${time?.toISOString()}.`, ...(time ? { targetTime: time.toISOString() } : {}), bytes: 0, segments: 0, windows };
  }
  return {
    restorable: true,
    baseBackupID: base.id,
    baseTime: base.at.toISOString(),
    effectiveTime: base.at.toISOString(),
    ...(time ? { targetTime: time.toISOString() } : {}),
    bytes: Number(base.storedBytes),
    segments: 0,
    windows,
    backup,
  };
}

/** The Plan object of the API. */
export function planView(plan: RestorePlan) {
  const { backup: _b, choice: _c, recoverTo: _r, ...view } = plan;
  return view;
}
