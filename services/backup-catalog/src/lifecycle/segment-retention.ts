/**
 * Which change-log segments (WAL files, binlogs) retention lets go once it has chosen the fulls to keep. A segment
 * stays while a kept full's chain may use it: the guarantee is that every kept full's `chainFrom` (its segments and
 * its end), and so the target's windows, are the same with or without the expired segments. Pure: the caller loads
 * the rows and marks or deletes what this returns.
 *
 * A line is one server history: a timeline, and the server's chain id when known (the grouping `bestSegments`
 * uses). On each line:
 * - With a kept full on it (a full matches a line as `chainFrom` matches segments: same timeline, same chain id when
 *   both are known): every segment from the one `chainFrom` starts with (the last one starting at or before the
 *   full's end position) onward is kept, across holes too, since a late upload may still fill a hole. The segments
 *   before the oldest kept full's start expire.
 * - With no kept full: the line's segments expire only once the line is retired, that is when a kept full is newer
 *   than every moment the line's segments hold (a newer full means the server had left the line when it was
 *   taken). The line a server moved to after a failover has no full yet and holds moments after the newest one: it
 *   stays whole until a full is taken on it, then what lies before that full expires by the rule above. A line
 *   whose segments hold no moment at all (no commit, no coverage) cannot be dated and stays.
 *
 * A file expires with all its rows: the complete upload, its partial uploads and rows marked missing.
 */
import { bestSegments, lastStartingBy, type ChainSegment, type FullBase } from '../change-capture/chain.ts';

/** A segment row as retention reads it: what the chain reads, and the row's key. */
type SegmentRow = ChainSegment & { key: string };

/** The keys of the rows of every segment file no kept full needs. */
export function expiredSegments(keptFulls: FullBase[], rows: SegmentRow[]): Set<string> {
  const best = bestSegments(rows);
  const cutoffs = neededFrom(keptFulls, best, rows);
  const expired = new Set<string>();
  for (const [id, line] of linesOf(rows)) {
    const expires = expiryOf(line, cutoffs.get(id), keptFulls);
    for (const file of line.files.values()) if (expires(file)) for (const row of file.rows) expired.add(row.key);
  }
  return expired;
}

/**
 * The segments a full's chain may run on, as `chainFrom` filters them: its timeline, and its server's chain when both
 * are known. Many fulls share a filter (`filterId`); each is worked out once.
 */
const onLineOf = (full: FullBase) => (s: SegmentRow) => s.timeline === full.timeline && (!full.chainId || !s.chainId || s.chainId === full.chainId);
const filterId = (full: FullBase) => `${full.timeline}/${full.chainId ?? ''}`;

/** One line (`lineId`) within a full's filtered segments: where it lies there, and whether its starts rise. */
interface Block {
  lineId: string;
  from: number;
  to: number;
  sorted: boolean;
}

/** The segments a filter lets through, cut into their lines (`bestSegments` orders by timeline, chain, then start). */
interface FilteredLine {
  segments: SegmentRow[];
  blocks: Block[];
  /** The lines of every row the filter lets through (missing and superseded uploads too). */
  rowLines: Set<string>;
}

function filterLine(full: FullBase, best: SegmentRow[], rows: SegmentRow[]): FilteredLine {
  const segments = best.filter(onLineOf(full));
  const blocks: Block[] = [];
  segments.forEach((segment, i) => {
    const block = blocks.at(-1);
    if (block && block.lineId === lineId(segment)) {
      block.to = i;
      if ((segments[i - 1] as SegmentRow).startLsn > segment.startLsn) block.sorted = false;
    } else blocks.push({ lineId: lineId(segment), from: i, to: i, sorted: true });
  });
  return { segments, blocks, rowLines: new Set(rows.filter(onLineOf(full)).map(lineId)) };
}

/**
 * Per line, the position from which the kept fulls need its files: each full needs its line from the segment its
 * chain starts with (the last one starting at or before the full's end) to the end, and the whole line when its end
 * lies before every segment. A line after that first needed segment in `chainFrom`'s order (a full of an unknown
 * server matches several) is needed whole. Lines missing from the map are needed by no kept full. One binary
 * search per full: a target keeps thousands of fulls over tens of thousands of segments.
 */
function neededFrom(keptFulls: FullBase[], best: SegmentRow[], rows: SegmentRow[]): Map<string, bigint> {
  const cutoffs = new Map<string, bigint>();
  const need = (line: string, from: bigint) => cutoffs.set(line, min(cutoffs.get(line) ?? from, from));
  const filtered = new Map<string, FilteredLine>();
  for (const full of keptFulls) {
    let line = filtered.get(filterId(full));
    if (!line) filtered.set(filterId(full), (line = filterLine(full, best, rows)));
    // The last block holding a segment that starts by the full's end holds the chain's first segment.
    let startBlock = -1;
    let first = -1;
    for (let b = line.blocks.length - 1; b >= 0 && first < 0; b--) {
      const block = line.blocks[b] as Block;
      first = lastStartingBy(line.segments, full.endLsn, block.from, block.to + 1, block.sorted);
      if (first >= 0) startBlock = b;
    }
    if (first < 0) {
      for (const id of line.rowLines) need(id, -1n);
      continue;
    }
    const block = line.blocks[startBlock] as Block;
    need(block.lineId, (line.segments[first] as SegmentRow).startLsn);
    for (const later of line.blocks.slice(startBlock + 1)) need(later.lineId, -1n);
  }
  return cutoffs;
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);

interface SegmentFile {
  startLsn: bigint;
  rows: SegmentRow[];
}

interface Line {
  files: Map<string, SegmentFile>;
  /** The latest moment any of its rows holds, or null when none holds one. */
  lastMoment: number | null;
}

const lineId = (row: SegmentRow) => `${row.chainId ?? ''}/${row.timeline}`;
const fileId = (row: SegmentRow) => `${lineId(row)}/${row.name}`;

/** The rows grouped by line and by file (a file starts where its rows start: they are uploads of one WAL file). */
function linesOf(rows: SegmentRow[]): Map<string, Line> {
  const lines = new Map<string, Line>();
  for (const row of rows) {
    const line = lines.get(lineId(row)) ?? { files: new Map(), lastMoment: null };
    lines.set(lineId(row), line);
    const file = line.files.get(fileId(row)) ?? { startLsn: row.startLsn, rows: [] };
    line.files.set(fileId(row), file);
    file.rows.push(row);
    for (const moment of [row.firstMs, row.lastMs, row.coveredUntilMs]) if (moment !== null) line.lastMoment = Math.max(line.lastMoment ?? moment, moment);
  }
  return lines;
}

/** Which files of a line expire: those before the position the kept fulls need it from; without one, all or none. */
function expiryOf(line: Line, neededFrom: bigint | undefined, keptFulls: FullBase[]): (file: SegmentFile) => boolean {
  if (neededFrom !== undefined) return (file) => file.startLsn < neededFrom;
  const retired = line.lastMoment !== null && keptFulls.some((full) => full.time.getTime() > (line.lastMoment as number));
  return () => retired;
}
