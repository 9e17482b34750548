/**
 * Change-log segments by time, for the console's timeline: which segments overlap a range, and the range's segments
 * merged into a bounded number of spans. The database does the counting: a target may hold tens of thousands of
 * segments, and only a few hundred rows leave it.
 *
 * A segment's time is [start, end]: from its first commit to what the streamer covered or its last commit; a segment
 * without commits is the moment it covered, or else the moment it reached the store.
 */
import type { DbOrTx } from '../db.ts';

const START = 'coalesce(first_time, last_time, covered_until, uploaded_at)';
const END = `greatest(${START}, coalesce(covered_until, last_time, first_time, uploaded_at))`;
/** The target's segments (not expired; the store may have lost some: they are listed, and say so) whose time overlaps [$3, $4]. */
const OVERLAPPING = `namespace = $1 AND target_name = $2 AND NOT expired AND ${START} <= $4::timestamptz AND ${END} >= $3::timestamptz`;

export interface TimeRange {
  from: Date;
  to: Date;
}

/** The sequence numbers of a target's segments overlapping the range, in upload order, at most `limit`. */
export async function segmentsOverlapping(conn: DbOrTx, target: { namespace: string; name: string }, range: TimeRange, limit: number): Promise<bigint[]> {
  const rows = await conn.$queryRawUnsafe<Array<{ seq: bigint }>>(
    `SELECT seq FROM segments WHERE ${OVERLAPPING} ORDER BY uploaded_at, seq LIMIT $5`,
    target.namespace, target.name, range.from.toISOString(), range.to.toISOString(), limit,
  );
  return rows.map((row) => row.seq);
}

/** Segments drawn as one bar. */
export interface SegmentSpan {
  firstTime: string;
  lastTime: string;
  segments: number;
  commits: number;
  bytes: number;
  partial: boolean;
  firstSeq: number;
  lastSeq: number;
}

/**
 * The segments of one slice of the range (`(to - from) / maxSpans` wide, by start): all of them merge into one span,
 * since two segments starting in the same slice are never further apart than the slice is wide. Times in ms: `first`
 * and `last` are the segments' own, `start` and `end` clamped to the range (the gaps count inside it only).
 */
export interface SpanBucket {
  start: number;
  end: number;
  first: number;
  last: number;
  segments: number;
  commits: number;
  bytes: number;
  partial: boolean;
  firstSeq: number;
  lastSeq: number;
}

/**
 * Times as epoch seconds in double precision, each computed once per row (`OFFSET 0` keeps the planner from
 * inlining the subquery and computing them again for every use): a third cheaper than timestamps and numeric.
 */
const SLICES = `SELECT floor((greatest(s, $3::float8) - $3::float8) * 1000 / $5::float8)::int AS slice,
    min(s) * 1000 AS first, max(e) * 1000 AS last, count(*)::int AS segments, sum(commits)::float8 AS commits,
    sum(size)::float8 AS bytes, bool_or(partial) AS partial, min(seq)::float8 AS "firstSeq", max(seq)::float8 AS "lastSeq"
  FROM (SELECT date_part('epoch', ${START}) AS s, date_part('epoch', ${END}) AS e, commits, size, partial, seq
        FROM segments WHERE namespace = $1 AND target_name = $2 AND NOT expired AND NOT missing OFFSET 0) times
  WHERE s <= $4::float8 AND e >= $3::float8 GROUP BY 1 ORDER BY 1`;

/** A time of microseconds, as ms in double precision (…122.9999 for …123), back to the whole milliseconds a Date keeps. */
const wholeMs = (ms: number) => Math.floor(Math.round(ms * 1000) / 1000);

/** How a spans read may be shared: the target's inputs token, and whether its range ends at "now" (none was asked). */
export interface SpansReuse {
  /** The target's `chain_inputs` token, read before the segments: every write to its segments renews it. */
  token?: string;
  /** The range ends at the moment of the read, not at a time the caller gave. */
  openEnd?: boolean;
}

/**
 * The target's segments overlapping the range, oldest first, merged into spans: a segment joins the span before it
 * when it starts at most (to - from) / maxSpans after everything before it ended. Spans are then more than that
 * apart, so at most maxSpans of them fit in the range.
 *
 * A range ending now is sliced as if it ended at the next whole minute (the spans are still cut at its end), so the
 * reads of one minute slice it alike; with the inputs token, reads that find the same token reuse the database's
 * slices: a whole history of 50,000 segments costs the database about 40 ms to slice, and a console page asks it on
 * every visit.
 */
export async function segmentSpans(conn: DbOrTx, target: { namespace: string; name: string }, range: TimeRange, maxSpans: number, reuse: SpansReuse = {}): Promise<SegmentSpan[]> {
  const [from, to] = [range.from.getTime(), range.to.getTime()];
  const gridTo = reuse.openEnd ? Math.ceil(to / 60_000) * 60_000 : to;
  const gapMs = (gridTo - from) / maxSpans;
  const slices = await slicesOf(conn, target, from, gridTo, gapMs, reuse.token);
  return mergeBuckets(slices.filter((slice) => slice.first <= to).map((slice) => ({ ...slice, start: Math.max(slice.first, from), end: Math.min(slice.last, to) })), gapMs);
}

type Slice = Omit<SpanBucket, 'start' | 'end'>;

/** Slices read lately, by target, inputs token and slicing; the least recently used goes first past the limit. */
const SLICES_KEPT = 128;
const slicesKept = new Map<string, Slice[]>();

async function slicesOf(conn: DbOrTx, target: { namespace: string; name: string }, from: number, to: number, gapMs: number, token: string | undefined): Promise<Slice[]> {
  const key = token === undefined ? undefined : `${target.namespace}/${target.name} ${token} ${from} ${to} ${gapMs}`;
  const kept = key === undefined ? undefined : slicesKept.get(key);
  if (key !== undefined && kept) {
    slicesKept.delete(key);
    slicesKept.set(key, kept);
    return kept;
  }
  const rows = await conn.$queryRawUnsafe<Slice[]>(SLICES, target.namespace, target.name, from / 1000, to / 1000, gapMs);
  const slices = rows.map((slice) => ({ ...slice, first: wholeMs(slice.first), last: wholeMs(slice.last) }));
  if (key !== undefined) {
    slicesKept.set(key, slices);
    if (slicesKept.size > SLICES_KEPT) slicesKept.delete(slicesKept.keys().next().value as string);
  }
  return slices;
}

/** Merges consecutive slices (ordered by start) whose gap is at most `gapMs`. */
export function mergeBuckets(buckets: SpanBucket[], gapMs: number): SegmentSpan[] {
  const merged: SpanBucket[] = [];
  for (const bucket of buckets) {
    const span = merged.at(-1);
    if (span && bucket.start - span.end <= gapMs) {
      span.end = Math.max(span.end, bucket.end);
      span.first = Math.min(span.first, bucket.first);
      span.last = Math.max(span.last, bucket.last);
      span.segments += bucket.segments;
      span.commits += bucket.commits;
      span.bytes += bucket.bytes;
      span.partial ||= bucket.partial;
      span.firstSeq = Math.min(span.firstSeq, bucket.firstSeq);
      span.lastSeq = Math.max(span.lastSeq, bucket.lastSeq);
    } else {
      merged.push({ ...bucket });
    }
  }
  return merged.map(({ first, last, segments, commits, bytes, partial, firstSeq, lastSeq }) => ({
    firstTime: new Date(first).toISOString(),
    lastTime: new Date(last).toISOString(),
    segments,
    commits,
    bytes,
    partial,
    firstSeq,
    lastSeq,
  }));
}
