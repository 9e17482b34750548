/**
 * A target's history over a time range, as the console's zoomable timeline draws it: its windows, every run, the
 * verification restores, its change log merged into spans and where that log breaks. Each part is one query that
 * reads only what it shows; the windows and breaks come from the target's chain summary, which the caller holds.
 */
import { inputsToken, type ChainSummary } from '../change-capture/chain-inputs.ts';
import type { Window } from '../change-capture/chain.ts';
import { segmentSpans, type SegmentSpan, type TimeRange } from '../change-capture/segment-times.ts';
import { BACKUP_PHASES } from '../backups/backups.ts';
import type { DbOrTx } from '../db.ts';

export interface TimelineTarget {
  namespace: string;
  name: string;
  windows: Window[];
  /** What the target's chain says of its breaks. */
  chain: Pick<ChainSummary, 'holes' | 'chainBroken' | 'brokenReason' | 'brokenSince'> | undefined;
}

export interface TimelineRequest {
  from?: Date;
  to?: Date;
  maxSpans: number;
}

/** A run's members the timeline shows, picked out of its manifest by the database. */
interface RunRow {
  id: string;
  phase: string;
  mode: string | null;
  consistent_at: string | null;
  completed_at: Date | null;
  queued_at: Date;
  verified: boolean;
  verify_failed: boolean;
  pinned: boolean;
  stored_bytes: bigint;
}

// The manifest's members come from columns a trigger keeps (migration backup_timeline_columns): reading them from the
// manifests themselves opens every one, about 35 ms for 2,000 backups.
const RUNS = `SELECT id, phase, manifest_mode AS mode, manifest_consistent_at AS consistent_at, completed_at, queued_at,
  verified, verify_failed, pinned, stored_bytes FROM backups WHERE namespace = $1 AND target_name = $2`;

/** Where a run sits: the moment its data show once known, else when it finished, else when it was queued. */
const timeOf = (run: RunRow): Date => (run.consistent_at ? new Date(run.consistent_at) : (run.completed_at ?? run.queued_at));

/** A run with its time, worked out once: thousands of runs are filtered and sorted by it. */
interface TimedRun {
  run: RunRow;
  time: Date;
}

/** As the Backup view says them: `completed` for a succeeded run only, `mode` logical unless the manifest says. */
function runView(run: RunRow, time: Date) {
  return {
    id: run.id,
    time: time.toISOString(),
    completed: run.phase === BACKUP_PHASES.succeeded && run.completed_at ? run.completed_at.toISOString() : null,
    phase: run.phase,
    mode: run.mode ?? 'logical',
    verified: run.verified,
    verifyFailed: run.verify_failed,
    pinned: run.pinned,
    storedBytes: Number(run.stored_bytes),
  };
}

/** Without a range asked: from the oldest run or window (a day back when there is neither) to now. */
function rangeOf(request: TimelineRequest, runs: TimedRun[], windows: Window[], now: Date): TimeRange {
  const to = request.to ?? now;
  if (request.from) return { from: request.from, to };
  const oldest = Math.min(...runs.map(({ time }) => time.getTime()), ...windows.map((w) => Date.parse(w.from)));
  return { from: Number.isFinite(oldest) && oldest < to.getTime() ? new Date(oldest) : new Date(to.getTime() - 86_400_000), to };
}

const overlaps = (range: TimeRange, from: number, to: number) => from <= range.to.getTime() && to >= range.from.getTime();

/** The verification restores of the target that finished in the range: what `recordVerification` wrote on their backup. */
async function verificationsIn(conn: DbOrTx, target: TimelineTarget, range: TimeRange) {
  const rows = await conn.restore.findMany({
    where: {
      targetNamespace: target.namespace,
      targetName: target.name,
      phase: { in: ['Succeeded', 'Failed'] },
      completedAt: { gte: range.from, lte: range.to },
      destination: { path: ['verify'], equals: true },
    },
    orderBy: { completedAt: 'asc' },
    select: { name: true, backupId: true, phase: true, message: true, checks: true, createdAt: true, completedAt: true },
  });
  return rows.map((row) => {
    const checks = (row.checks ?? []) as Array<{ passed: boolean }>;
    const at = row.completedAt as Date;
    return { backupID: row.backupId, restore: row.name, at: at.toISOString(), passed: row.phase === 'Succeeded' && checks.every((c) => c.passed), rtoSeconds: (at.getTime() - row.createdAt.getTime()) / 1000, message: row.message };
  });
}

const iso = (at: Date | null | undefined) => at?.toISOString() ?? null;

/** The holes of the change log in the range, and why the newest full's chain is broken when it is. */
function breaksIn(chain: TimelineTarget['chain'], range: TimeRange) {
  if (!chain) return [];
  const holes = chain.holes
    .filter((hole) => overlaps(range, (hole.from ?? hole.to ?? range.from).getTime(), (hole.to ?? hole.from ?? range.to).getTime()))
    .map((hole) => ({
      kind: 'gap',
      from: iso(hole.from),
      to: iso(hole.to),
      reason: hole.partial ? `${hole.after} is in the store only as a partial upload: the rest of that file is missing before ${hole.before}` : `the segments between ${hole.after} and ${hole.before} are not in the store`,
    }));
  const since = chain.brokenSince?.getTime();
  const broken = chain.chainBroken && (since === undefined || overlaps(range, since, since)) ? [{ kind: 'chain', from: iso(chain.brokenSince), to: null, reason: chain.brokenReason ?? '' }] : [];
  return [...holes, ...broken].sort((a, b) => (a.from ?? '').localeCompare(b.from ?? ''));
}

export interface Timeline {
  from: string;
  to: string;
  windows: Window[];
  backups: Array<ReturnType<typeof runView>>;
  verifications: Awaited<ReturnType<typeof verificationsIn>>;
  segmentSpans: SegmentSpan[];
  breaks: ReturnType<typeof breaksIn>;
}

/** The target's timeline; the caller has checked the caller may see the target. */
export async function readTimeline(conn: DbOrTx, target: TimelineTarget, request: TimelineRequest, now: Date): Promise<Timeline> {
  // Read before the segments: a spans answer kept under it is never newer than what it stands for.
  const token = await inputsToken(conn, target.namespace, target.name);
  const reading = conn.$queryRawUnsafe<RunRow[]>(RUNS, target.namespace, target.name).then((rows) => rows.map((run) => ({ run, time: timeOf(run) })));
  // A range asked is known at once: the three reads go together. Without one, its start is the oldest run's.
  const known = request.from ? { from: request.from, to: request.to ?? now } : undefined;
  const range = known ?? rangeOf(request, await reading, target.windows, now);
  const [runs, verifications, spans] = await Promise.all([reading, verificationsIn(conn, target, range), segmentSpans(conn, target, range, request.maxSpans, { ...(token ? { token } : {}), openEnd: !request.to })]);
  const inRange = runs.filter(({ time }) => overlaps(range, time.getTime(), time.getTime()));
  return {
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    windows: target.windows.filter((w) => overlaps(range, Date.parse(w.from), Date.parse(w.to))),
    backups: inRange.sort((a, b) => a.time.getTime() - b.time.getTime() || a.run.id.localeCompare(b.run.id)).map(({ run, time }) => runView(run, time)),
    verifications,
    segmentSpans: spans,
    breaks: breaksIn(target.chain, range),
  };
}
