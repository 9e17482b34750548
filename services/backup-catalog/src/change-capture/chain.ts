/**
 * The change-capture chain of a target, computed from its physical fulls and the segments in the store: which
 * moments can be restored (windows), where segments are missing (gaps), and whether the newest full's chain is
 * broken. Pure functions: the callers load the rows.
 */
import { systemOfChain } from '@sigil/proto/strata-jobs';

export interface FullBase {
  id: string;
  /** When the base became consistent (the end of pg_basebackup): the first moment it can restore. */
  time: Date;
  endLsn: bigint;
  timeline: number;
  storedBytes: number;
  /**
   * A logical dump (MariaDB/MySQL): its snapshot lies before `time`, so it restores nothing exactly until the change
   * log after its position reaches past `time`. A physical base is consistent at `time` by itself.
   */
  needsChangeLog?: boolean;
  /**
   * Its change log keeps whole seconds (binlogs) and a restore replays to the end of the second asked: the chain
   * ends at the last second it holds whole.
   */
  wholeSeconds?: boolean;
  /** `<system identifier>-<timeline>` of the server it was taken from, when known: only that chain's segments follow it. */
  chainId?: string;
}

/** What the chain reads of a segment. */
export interface ChainSegment {
  /** `<system identifier or server id>-<timeline>`. */
  chainId?: string;
  name: string;
  timeline: number;
  startLsn: bigint;
  endLsn: bigint;
  /**
   * Its first and last commit, and the moment the streamer's coverage says it holds everything before, as epoch
   * milliseconds (numbers, not Dates: a target's chain holds tens of thousands of segments in a service's heap).
   */
  firstMs: number | null;
  lastMs: number | null;
  coveredUntilMs: number | null;
  partial: boolean;
  missing: boolean;
  /** When it reached the store: the only time a segment without commits or coverage has. */
  uploadedMs?: number;
}

/** A segment with its object in the store, as a restore fetches it. */
export interface SegmentRow extends ChainSegment {
  key: string;
  sha256: string;
  size: bigint;
  compression: string;
  /** As reported (an LSN, or `file:offset` of a binlog): where a restore cuts the complete upload standing in for a removed partial one. */
  endPos: string;
}

/** What the streamer last said: everything committed before `coveredUntil` is in segments ending by `coveredLsn`. */
export interface StreamCoverage {
  coveredUntil?: Date;
  coveredLsn?: bigint;
  /** The timeline of `coveredLsn`: a position on another timeline says nothing of this one. */
  coveredTimeline?: number;
  /** The streamer found WAL gone for good (a slot that lost WAL), at `brokenAt`. */
  brokenReason?: string;
  brokenAt?: Date;
}

export interface Chain<S extends ChainSegment = SegmentRow> {
  full: FullBase;
  /** The segments to replay after the base, in order. */
  segments: S[];
  /** The last moment this chain restores exactly. */
  end: Date;
  /** Whether the chain restores any moment exactly (a dump's needs segments past its completion). */
  opens: boolean;
}

export interface Window {
  from: string;
  to: string;
}

export interface ChainReport<S extends ChainSegment = SegmentRow> {
  chains: Array<Chain<S>>;
  windows: Window[];
  gaps: number;
  /** Where the change log has holes, oldest line first (`gaps` counts them). */
  holes: Array<ChainHole<S>>;
  chainBroken: boolean;
  brokenReason?: string;
  brokenSince?: Date;
  segments: number;
  newest?: S;
}

const later = (a: Date, b: Date | null | undefined): Date => (b && b > a ? b : a);
/** The later of a moment and a segment's time in milliseconds (none when null). */
const laterMs = (a: Date, ms: number | null): Date => (ms !== null && ms > a.getTime() ? new Date(ms) : a);

/** One segment per WAL file: a complete upload wins over partial ones, else the partial that reaches furthest. */
export function bestSegments<S extends ChainSegment>(rows: S[]): S[] {
  const byName = new Map<string, S>();
  for (const row of rows) {
    if (row.missing) continue;
    const id = `${row.chainId ?? ''}/${row.timeline}/${row.name}`;
    const kept = byName.get(id);
    if (!kept || (kept.partial && (!row.partial || row.endLsn > kept.endLsn))) byName.set(id, row);
  }
  return [...byName.values()].sort((a, b) => a.timeline - b.timeline || (a.chainId ?? '').localeCompare(b.chainId ?? '') || (a.startLsn < b.startLsn ? -1 : a.startLsn > b.startLsn ? 1 : 0));
}

/** The segments on a full's own line: its timeline and, when both are known, its server's chain. */
const onLineOf = (full: FullBase) => (s: ChainSegment) => s.timeline === full.timeline && (!full.chainId || !s.chainId || s.chainId === full.chainId);

/** The segments that follow a full without a hole, and the moment they reach. */
export function chainFrom<S extends ChainSegment>(full: FullBase, best: S[], coverage: StreamCoverage): Chain<S> {
  const line = best.filter(onLineOf(full));
  let first = -1;
  for (let i = 0; i < line.length; i++) if ((line[i] as S).startLsn <= full.endLsn) first = i;
  const segments: S[] = [];
  let end = full.time;
  if (first >= 0) {
    let expected = (line[first] as S).startLsn;
    for (const segment of line.slice(first)) {
      if (segment.startLsn !== expected) break;
      segments.push(segment);
      if (segment.partial) {
        end = laterMs(end, segment.coveredUntilMs ?? segment.lastMs);
        break;
      }
      end = laterMs(end, segment.coveredUntilMs ?? segment.lastMs);
      expected = segment.endLsn;
    }
    const last = segments.at(-1);
    if (last && last === line.at(-1) && coversEnd(coverage, last)) end = later(end, coverage.coveredUntil as Date);
  }
  return finishChain(full, segments, end);
}

function finishChain<S extends ChainSegment>(full: FullBase, segments: S[] | (() => S[]), reached: Date): Chain<S> {
  const end = full.wholeSeconds && reached > full.time ? later(full.time, new Date(Math.floor(reached.getTime() / 1000) * 1000 - 1)) : reached;
  const opens = !full.needsChangeLog || end > full.time;
  if (Array.isArray(segments)) return { full, segments, end, opens };
  // Many fulls share one line: each chain's segments are sliced from it only when someone reads them.
  let sliced: S[] | undefined;
  return { full, end, opens, get segments() { return (sliced ??= segments()); } };
}

/**
 * One line indexed for `chainFrom` of many fulls: for each segment, the last one the walk from it reaches without a
 * hole (`runEnd`) and the latest moment among them (`reach`, ms; -Infinity when none has a time), computed once from
 * the end of the line. A chain is then a look-up instead of a walk: with thousands of fulls on a line of tens of
 * thousands of segments the walks cost minutes.
 */
interface IndexedLine<S extends ChainSegment> {
  line: S[];
  sortedByStart: boolean;
  runEnd: Int32Array;
  reach: Float64Array;
}

function indexLine<S extends ChainSegment>(line: S[]): IndexedLine<S> {
  const n = line.length;
  const runEnd = new Int32Array(n);
  const reach = new Float64Array(n);
  let sortedByStart = true;
  for (let i = n - 1; i >= 0; i--) {
    const segment = line[i] as S;
    const next = line[i + 1];
    const own = segment.coveredUntilMs ?? segment.lastMs ?? -Infinity;
    const continues = next !== undefined && !segment.partial && next.startLsn === segment.endLsn;
    runEnd[i] = continues ? (runEnd[i + 1] as number) : i;
    reach[i] = continues ? Math.max(own, reach[i + 1] as number) : own;
    if (next && next.startLsn < segment.startLsn) sortedByStart = false;
  }
  return { line, sortedByStart, runEnd, reach };
}

/**
 * The last segment of `segments[from, to)` starting at or before `lsn` (as `chainFrom` finds it), or -1: a binary
 * search when their starts rise (`sorted`), a walk otherwise. Chains and retention both look fulls up this way.
 */
export function lastStartingBy(segments: readonly ChainSegment[], lsn: bigint, from = 0, to = segments.length, sorted = true): number {
  if (!sorted) {
    let found = -1;
    for (let i = from; i < to; i++) if ((segments[i] as ChainSegment).startLsn <= lsn) found = i;
    return found;
  }
  let [low, high] = [from, to];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((segments[middle] as ChainSegment).startLsn <= lsn) low = middle + 1;
    else high = middle;
  }
  return low > from ? low - 1 : -1;
}

/** `chainFrom` of a full on an indexed line: the same chain, found in logarithmic time. */
function chainOnLine<S extends ChainSegment>(full: FullBase, indexed: IndexedLine<S>, coverage: StreamCoverage): Chain<S> {
  const first = lastStartingBy(indexed.line, full.endLsn, 0, indexed.line.length, indexed.sortedByStart);
  if (first < 0) return finishChain(full, [], full.time);
  const { line } = indexed;
  const last = indexed.runEnd[first] as number;
  const reach = indexed.reach[first] as number;
  let end = reach > full.time.getTime() ? new Date(reach) : full.time;
  if (last === line.length - 1 && coversEnd(coverage, line[last] as S)) end = later(end, coverage.coveredUntil as Date);
  return finishChain(full, () => line.slice(first, last + 1), end);
}

/** `chainFrom` of every full, each line filtered and indexed once. */
export function chainsFrom<S extends ChainSegment>(fulls: FullBase[], best: S[], coverage: StreamCoverage): Array<Chain<S>> {
  const lines = new Map<string, IndexedLine<S>>();
  return fulls.map((full) => {
    const id = `${full.timeline}/${full.chainId ?? ''}`;
    let indexed = lines.get(id);
    if (!indexed) lines.set(id, (indexed = indexLine(best.filter(onLineOf(full)))));
    return chainOnLine(full, indexed, coverage);
  });
}

/** The streamer's coverage extends a chain's end when it names a position inside the chain's last segment, on its timeline. */
function coversEnd(coverage: StreamCoverage, last: ChainSegment): boolean {
  if (!coverage.coveredUntil || coverage.coveredLsn === undefined) return false;
  if (coverage.coveredTimeline !== undefined && coverage.coveredTimeline !== last.timeline) return false;
  return coverage.coveredLsn >= last.startLsn && coverage.coveredLsn <= last.endLsn;
}

/** A hole in one line of the change log: `before` does not start where `after` ends, or `after` is only a partial upload. */
export interface ChainHole<S extends ChainSegment = SegmentRow> {
  after: S;
  before: S;
}

/** Holes in the segments of each timeline: a segment that does not start where the one before it ended. */
function findHoles<S extends ChainSegment>(best: S[]): Array<ChainHole<S>> {
  const holes: Array<ChainHole<S>> = [];
  for (let i = 1; i < best.length; i++) {
    const [prev, next] = [best[i - 1] as S, best[i] as S];
    if (prev.timeline !== next.timeline || prev.chainId !== next.chainId) continue;
    if (prev.partial || next.startLsn !== prev.endLsn) holes.push({ after: prev, before: next });
  }
  return holes;
}

function mergeWindows(chains: Array<Chain<ChainSegment>>): Window[] {
  const spans = chains.filter((c) => c.opens).map((c) => [c.full.time, c.end] as const).sort((a, b) => a[0].getTime() - b[0].getTime());
  const merged: Array<[Date, Date]> = [];
  for (const [from, to] of spans) {
    const last = merged.at(-1);
    if (last && from <= last[1]) last[1] = later(last[1], to);
    else merged.push([from, to]);
  }
  return merged.map(([from, to]) => ({ from: from.toISOString(), to: to.toISOString() }));
}

export function analyzeChain<S extends ChainSegment>(fulls: FullBase[], rows: S[], coverage: StreamCoverage): ChainReport<S> {
  const best = bestSegments(rows);
  const chains = chainsFrom(fulls, best, coverage);
  const holes = findHoles(best);
  const report: ChainReport<S> = { chains, windows: mergeWindows(chains), gaps: holes.length, holes, chainBroken: false, segments: best.length, ...(best.at(-1) ? { newest: best.at(-1) } : {}) };
  const newestFull = [...fulls].sort((a, b) => b.time.getTime() - a.time.getTime())[0];
  if (!newestFull) return report;
  const chain = chains[fulls.indexOf(newestFull)] as Chain<S>;
  const system = (chainId: string | undefined) => (chainId ? systemOfChain(chainId) : undefined);
  const otherCluster = newestFull.chainId ? best.find((s) => s.chainId && system(s.chainId) !== system(newestFull.chainId) && (s.lastMs ?? s.firstMs ?? 0) > newestFull.time.getTime()) : undefined;
  if (otherCluster) {
    return { ...report, chainBroken: true, brokenReason: `the server behind the endpoint is another cluster (system ${system(otherCluster.chainId)}, the newest full's ${system(newestFull.chainId)}); the next full backup starts a new chain`, brokenSince: chain.end };
  }
  const newerTimeline = best.find((s) => s.timeline > newestFull.timeline && (!newestFull.chainId || !s.chainId || system(s.chainId) === system(newestFull.chainId)));
  const onLine = best.filter((s) => onLineOf(newestFull)(s) && s.endLsn > newestFull.endLsn);
  const lastUsed = chain.segments.at(-1);
  if (newerTimeline) {
    return { ...report, chainBroken: true, brokenReason: `the server moved to timeline ${newerTimeline.timeline} (a failover or a restore in place); the next full backup starts a new chain`, brokenSince: chain.end };
  }
  // The streamer's own finding (WAL gone from the server) says more than the hole it leaves in the store.
  if (coverage.brokenReason && coverage.brokenAt && coverage.brokenAt > newestFull.time) {
    return { ...report, chainBroken: true, brokenReason: coverage.brokenReason, brokenSince: chain.end };
  }
  if (onLine.length && lastUsed !== onLine.at(-1)) {
    const missingAfter = lastUsed ?? undefined;
    const what = missingAfter ? `the segment after ${missingAfter.name}` : `the segment holding the end of backup ${newestFull.id}`;
    return { ...report, chainBroken: true, brokenReason: `${what} is missing from the store; restores before ${chain.end.toISOString()} still work`, brokenSince: chain.end };
  }
  return report;
}

export interface PlanChoice<S extends ChainSegment = SegmentRow> {
  chain: Chain<ChainSegment>;
  segments: S[];
  /** Replay every segment given (no commit after `at` is in them) instead of stopping at a time. */
  toEnd: boolean;
}

/**
 * The newest full before `at` whose chain reaches it, and the segments up to the first commit after `at`. Times
 * are kept to the millisecond while commits have microseconds: a commit in the same millisecond as `at` may come
 * after it, so it counts as after (the replay then stops at `at` itself). `latest` replays every segment.
 */
export function chooseChain<S extends ChainSegment>(report: ChainReport<S>, at: Date | 'latest'): PlanChoice<S> | undefined {
  const time = at === 'latest' ? new Date(Math.max(...report.chains.filter((c) => c.opens).map((c) => c.end.getTime()))) : at;
  const chain = report.chains.filter((c) => c.opens && c.full.time <= time && c.end >= time).sort((a, b) => b.full.time.getTime() - a.full.time.getTime())[0];
  if (!chain) return undefined;
  if (at === 'latest') return { chain, segments: chain.segments, toEnd: true };
  const after = (s: S) => s.lastMs !== null && s.lastMs >= at.getTime();
  const segments: S[] = [];
  for (const segment of chain.segments) {
    segments.push(segment);
    if (after(segment)) break;
  }
  return { chain, segments, toEnd: !segments.some(after) };
}
