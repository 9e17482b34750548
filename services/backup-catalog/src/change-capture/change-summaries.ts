/**
 * `getTargetChanges`: what a target's change log did between two times, read from the summaries the mover stored
 * with each segment. A file uploaded several times (partial uploads before the finished one) counts once, by its
 * newest upload: each upload's summary covers the file from its start.
 */
import { AppError } from '@sigil/kit/errors';
import type { components } from '@sigil/proto/api/strata';
import type { StrataPrincipal } from '@sigil/proto/strata';
import { parseDuration } from '@sigil/proto/units';
import type { TargetService } from '../console/targets.ts';
import type { Db } from '../db.ts';
import { segmentView } from './segments.ts';
import { segmentsOverlapping, type TimeRange } from './segment-times.ts';
import { inputTime } from '../time-input.ts';

type TableChange = components['schemas']['TableChange'];
type SegmentView = ReturnType<typeof segmentView>;

/** The default range: the last day. */
const DEFAULT_SINCE_MS = 24 * 60 * 60 * 1000;
/** At most this many segments are read for one answer (the oldest of the range first). */
const MAX_SEGMENTS = 2000;

/** `since` as an RFC 3339 time or a Duration before `now`; `until` as an RFC 3339 time or `latest`. */
export function changeRange(since: string | undefined, until: string | undefined, now: Date): TimeRange {
  const to = until === undefined || until === '' || until === 'latest' ? now : timeOf('until', until);
  const from = since === undefined || since === '' ? new Date(to.getTime() - DEFAULT_SINCE_MS) : sinceOf(since, now);
  if (from.getTime() > to.getTime()) throw new AppError('validation-failed', `since (${from.toISOString()}) is after until (${to.toISOString()}): give a range that starts before it ends`);
  return { from, to };
}

function sinceOf(since: string, now: Date): Date {
  if (/^[0-9.]+[a-z]/.test(since)) {
    let ms: number;
    try {
      ms = parseDuration(since);
    } catch {
      throw new AppError('validation-failed', `since: "${since}" is neither an RFC 3339 time nor a duration such as 2h or 7d`);
    }
    return inputTime('since', since, new Date(now.getTime() - ms));
  }
  return timeOf('since', since);
}

function timeOf(name: string, text: string): Date {
  const time = /^\d{4}-\d\d-\d\dT/.test(text) ? new Date(text) : new Date(Number.NaN);
  if (Number.isNaN(time.getTime())) throw new AppError('validation-failed', `${name}: "${text}" is not an RFC 3339 time (e.g. 2026-11-28T09:00:00Z)${name === 'until' ? ' or latest' : ''}`);
  return inputTime(name, text, time);
}

/** Each file's newest upload: the finished one, else the partial that reached furthest. */
export function newestUploads(segments: SegmentView[]): SegmentView[] {
  const newest = new Map<string, SegmentView>();
  for (const segment of segments) {
    const file = `${segment.chainID} ${segment.timeline} ${segment.name}`;
    const kept = newest.get(file);
    if (!kept || (kept.partial && (!segment.partial || reachesFurther(segment, kept)))) newest.set(file, segment);
  }
  return segments.filter((segment) => newest.get(`${segment.chainID} ${segment.timeline} ${segment.name}`) === segment);
}

/** Partial uploads of one file: Postgres ends are LSNs (X/Y), MariaDB ends `<file>:<offset>`. */
function reachesFurther(a: SegmentView, b: SegmentView): boolean {
  const offset = (pos: string) => {
    const lsn = /^([0-9A-F]+)\/([0-9A-F]+)$/i.exec(pos);
    if (lsn) return (BigInt(`0x${lsn[1]}`) << 32n) | BigInt(`0x${lsn[2]}`);
    return BigInt(/:(\d+)$/.exec(pos)?.[1] ?? '0');
  };
  return offset(a.endPos) > offset(b.endPos);
}

/** The per-table totals of the segments' summaries. */
export function totalTables(segments: Array<{ tables: Record<string, TableChange> }>): Record<string, TableChange> {
  const total: Record<string, Required<TableChange>> = {};
  for (const segment of segments) {
    for (const [table, change] of Object.entries(segment.tables)) {
      const sum = (total[table] ??= { inserts: 0, updates: 0, deletes: 0, truncates: 0 });
      sum.inserts += change.inserts ?? 0;
      sum.updates += change.updates ?? 0;
      sum.deletes += change.deletes ?? 0;
      sum.truncates += change.truncates ?? 0;
    }
  }
  return total;
}

/** One target's change summaries between `since` and `until` (ChangeSummary with its segments). */
export async function targetChanges(deps: { db: Db; targets: TargetService; now?: () => Date }, principal: StrataPrincipal, namespace: string, name: string, query: { since?: string; until?: string; at?: string }) {
  const range = changeRange(query.since, query.until ?? query.at, deps.now?.() ?? new Date());
  await deps.targets.visibleTarget(principal, namespace, name);
  const seqs = await segmentsOverlapping(deps.db, { namespace, name }, range, MAX_SEGMENTS);
  const rows = seqs.length ? await deps.db.segment.findMany({ where: { seq: { in: seqs } }, orderBy: [{ uploadedAt: 'asc' }, { seq: 'asc' }] }) : [];
  const segments = newestUploads(rows.map(segmentView));
  return { target: `${namespace}/${name}`, since: range.from.toISOString(), at: range.to.toISOString(), tables: totalTables(segments), segments };
}
