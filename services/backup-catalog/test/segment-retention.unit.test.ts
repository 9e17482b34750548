/**
 * Change-log retention: which segments expire once the kept fulls are chosen. Examples (a timeline switch, a hole,
 * partial uploads), then properties over random histories of several lines: every kept full's chain and the windows
 * are the same without the expired segments, and on a simple line exactly what lies before the oldest kept full goes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyzeChain, bestSegments, chainFrom, type FullBase, type SegmentRow, type StreamCoverage } from '../src/change-capture/chain.ts';
import { formatLsn } from '../src/change-capture/chain-inputs.ts';
import { expiredSegments } from '../src/lifecycle/segment-retention.ts';

const MB16 = 16n * 1024n * 1024n;
const T0 = Date.UTC(2026, 0, 1);
const t = (minutes: number) => new Date(T0 + minutes * 60_000);

interface Line {
  timeline: number;
  chainId?: string;
}
interface Seg {
  first?: number;
  last?: number;
  covered?: number;
  partialEnd?: bigint;
  missing?: boolean;
}

/** Segment n of a line (it starts at n × 16 MiB), its times in minutes after T0. */
function seg(line: Line, n: number, s: Seg = {}): SegmentRow {
  const start = BigInt(n) * MB16;
  const suffix = s.partialEnd !== undefined ? `.partial.${s.partialEnd}` : s.missing ? '.missing' : '';
  return {
    key: `wal/${line.chainId ?? '-'}/${line.timeline}/${n}${suffix}`,
    ...(line.chainId ? { chainId: line.chainId } : {}),
    name: `${line.timeline.toString(16).padStart(8, '0')}${n.toString(16).padStart(16, '0')}`,
    timeline: line.timeline,
    startLsn: start,
    endLsn: s.partialEnd ?? start + MB16,
    endPos: formatLsn(s.partialEnd ?? start + MB16),
    firstMs: s.first !== undefined ? t(s.first).getTime() : null,
    lastMs: s.last !== undefined ? t(s.last).getTime() : null,
    coveredUntilMs: s.covered !== undefined ? t(s.covered).getTime() : null,
    partial: s.partialEnd !== undefined,
    missing: s.missing ?? false,
    sha256: 'a'.repeat(64),
    size: 100n,
    compression: 'zstd',
  };
}

/** A full on a line whose end lies `offset` bytes into segment n, consistent at minute `minute`. */
const full = (id: string, line: Line, n: number, minute: number, offset = 100n): FullBase => ({ id, time: t(minute), endLsn: BigInt(n) * MB16 + offset, timeline: line.timeline, storedBytes: 1, ...(line.chainId ? { chainId: line.chainId } : {}) });
/** Consecutive segments from..to of a line, segment n holding minutes 10n to 10n + 9. */
const run = (line: Line, from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => seg(line, from + i, { first: (from + i) * 10, last: (from + i) * 10 + 9 }));
const keys = (rows: SegmentRow[]) => rows.map((r) => r.key).sort();
const sorted = (set: Set<string>) => [...set].sort();
const without = (rows: SegmentRow[], expired: Set<string>) => rows.filter((r) => !expired.has(r.key));

const TL1: Line = { timeline: 1, chainId: 'sysA-1' };
const TL2: Line = { timeline: 2, chainId: 'sysA-2' };

describe('change-log retention, by hand', () => {
  it('lets go of the segments before the oldest kept full, with their partial uploads, and keeps its window whole', () => {
    const rows = [...run(TL1, 0, 6), seg(TL1, 1, { last: 12, partialEnd: MB16 + 300n }), seg(TL1, 7, { first: 70, last: 72, partialEnd: 7n * MB16 + 50n })];
    const fulls = [full('old', TL1, 0, 5), full('mid', TL1, 2, 25), full('new', TL1, 5, 55)];
    const expired = expiredSegments(fulls.slice(1), rows);
    expect(sorted(expired)).toEqual(keys([rows[0]!, rows[1]!, rows[7]!]));
    const remaining = without(rows, expired);
    expect(analyzeChain(fulls.slice(1), remaining, {}).windows).toEqual([{ from: t(25).toISOString(), to: t(72).toISOString() }]);
    expect(expiredSegments(fulls, rows)).toEqual(new Set());
  });

  it('keeps the segments after a hole: a late upload may still fill it', () => {
    const rows = [...run(TL1, 0, 2), seg(TL1, 3, { missing: true }), ...run(TL1, 4, 5)];
    expect(sorted(expiredSegments([full('f1', TL1, 1, 15)], rows))).toEqual(['wal/sysA-1/1/0']);
    // A kept full past the hole: everything before it goes, the row saying segment 3 is missing too.
    expect(sorted(expiredSegments([full('f4', TL1, 4, 45)], rows))).toEqual(['wal/sysA-1/1/0', 'wal/sysA-1/1/1', 'wal/sysA-1/1/2', 'wal/sysA-1/1/3.missing']);
  });

  it('keeps the line a failover moved to until a full is taken on it, then retires the old line', () => {
    const rows = [...run(TL1, 0, 5), seg(TL1, 5, { first: 50, last: 53, partialEnd: 5n * MB16 + 10n }), ...run(TL2, 5, 9)];
    const a = full('a', TL1, 1, 15);
    expect(sorted(expiredSegments([a], rows))).toEqual(['wal/sysA-1/1/0']);
    const b = full('b', TL2, 7, 75);
    expect(sorted(expiredSegments([a, b], rows))).toEqual(['wal/sysA-1/1/0', 'wal/sysA-2/2/5', 'wal/sysA-2/2/6']);
    // Once only b is kept, the old timeline holds nothing after b: it goes whole, its partial upload with it.
    const expired = expiredSegments([b], rows);
    expect(sorted(expired)).toEqual(keys([...rows.filter((r) => r.timeline === 1), ...rows.filter((r) => r.timeline === 2 && r.startLsn < 7n * MB16)]));
    expect(chainFrom(b, bestSegments(without(rows, expired)), {})).toEqual(chainFrom(b, bestSegments(rows), {}));
  });

  it('keeps a line it cannot date, and everything when no full is kept', () => {
    const silent = [seg(TL2, 5), seg(TL2, 6)];
    const rows = [...run(TL1, 0, 3), ...silent];
    expect(sorted(expiredSegments([full('f', TL1, 2, 100)], rows))).toEqual(['wal/sysA-1/1/0', 'wal/sysA-1/1/1']);
    expect(expiredSegments([], rows)).toEqual(new Set());
  });

  it("a full of an unknown server follows every chain of its timeline, as chainFrom does", () => {
    const other: Line = { timeline: 1, chainId: 'sysB-1' };
    const rows = [...run(TL1, 0, 3), ...run(other, 0, 3)];
    const unknown: FullBase = { ...full('u', TL1, 2, 25) };
    delete unknown.chainId;
    // Its chain starts in sysB's segment 2 (the last of the line by chainFrom's order): sysA's line is no longer
    // needed by it, but it holds moments after the full and stays.
    const expired = expiredSegments([unknown], rows);
    expect(sorted(expired)).toEqual(['wal/sysB-1/1/0', 'wal/sysB-1/1/1']);
    expect(chainFrom(unknown, bestSegments(without(rows, expired)), {})).toEqual(chainFrom(unknown, bestSegments(rows), {}));
    // Its chain runs on from the rows without a server into sysA's: those are needed whole, though older than it.
    const crossing = [...run({ timeline: 1 }, 0, 2), ...run(TL1, 3, 4)];
    const late = { ...unknown, time: t(60) };
    expect(sorted(expiredSegments([late], crossing))).toEqual(['wal/-/1/0', 'wal/-/1/1']);
    expect(chainFrom(late, bestSegments(crossing), {}).segments).toHaveLength(3);
  });
});

// ---- Random histories of several lines. ----

const LINES: Line[] = [TL1, TL2, { timeline: 1 }, { timeline: 1, chainId: 'sysB-1' }, { timeline: 3, chainId: 'sysA-3' }];
const kind = fc.constantFrom('complete', 'complete', 'complete', 'with-partial', 'partial-only', 'missing', 'hole', 'silent');
const lineHistory = fc.record({ line: fc.constantFrom(...LINES), from: fc.integer({ min: 0, max: 4 }), kinds: fc.array(kind, { maxLength: 12 }), startMinute: fc.integer({ min: 0, max: 200 }) });
const fullSpec = fc.record({ line: fc.constantFrom(...LINES), n: fc.integer({ min: 0, max: 16 }), offset: fc.oneof(fc.constantFrom(0n, MB16 - 1n), fc.bigInt({ min: 0n, max: MB16 - 1n })), minute: fc.integer({ min: 0, max: 400 }), anonymous: fc.boolean(), needsChangeLog: fc.boolean(), wholeSeconds: fc.boolean(), kept: fc.boolean() });
const coverage = fc.option(fc.record({ minute: fc.integer({ min: 0, max: 500 }), n: fc.integer({ min: 0, max: 16 }), timeline: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }) }), { nil: undefined });

function rowsOf({ line, from, kinds, startMinute }: { line: Line; from: number; kinds: string[]; startMinute: number }): SegmentRow[] {
  return kinds.flatMap((k, i) => {
    const n = from + i;
    const times = { first: startMinute + i * 10, last: startMinute + i * 10 + 9 };
    const partial = seg(line, n, { first: times.first, last: times.first + 3, partialEnd: BigInt(n) * MB16 + 4096n });
    if (k === 'hole') return [];
    if (k === 'silent') return [seg(line, n)];
    if (k === 'missing') return [seg(line, n, { ...times, missing: true })];
    if (k === 'partial-only') return [partial];
    return k === 'with-partial' ? [partial, seg(line, n, times)] : [seg(line, n, times)];
  });
}

const history = fc
  .record({ lines: fc.uniqueArray(lineHistory, { minLength: 1, maxLength: 3, selector: (h) => `${h.line.chainId}/${h.line.timeline}` }), fulls: fc.array(fullSpec, { minLength: 1, maxLength: 6 }), coverage })
  .map(({ lines, fulls, coverage: c }) => {
    const built = fulls.map((f, i) => {
      const base = full(`f${i}`, f.line, f.n, f.minute, f.offset);
      if (f.anonymous) delete base.chainId;
      return { full: { ...base, needsChangeLog: f.needsChangeLog, wholeSeconds: f.wholeSeconds }, kept: f.kept };
    });
    const cov: StreamCoverage = c ? { coveredUntil: t(c.minute), coveredLsn: BigInt(c.n) * MB16 + 7n, ...(c.timeline ? { coveredTimeline: c.timeline } : {}) } : {};
    return { rows: lines.flatMap(rowsOf), kept: built.filter((f) => f.kept).map((f) => f.full), coverage: cov };
  });

describe('change-log retention, as properties of random histories', () => {
  it("leaves every kept full's chain as it was: the same segments and the same end", () => {
    fc.assert(
      fc.property(history, ({ rows, kept, coverage: cov }) => {
        const remaining = without(rows, expiredSegments(kept, rows));
        for (const f of kept) expect(chainFrom(f, bestSegments(remaining), cov)).toEqual(chainFrom(f, bestSegments(rows), cov));
      }),
      { numRuns: 500 },
    );
  });

  it("keeps every moment inside a kept full's window restorable: the windows are the same", () => {
    fc.assert(
      fc.property(history, ({ rows, kept, coverage: cov }) => {
        const remaining = without(rows, expiredSegments(kept, rows));
        expect(analyzeChain(kept, remaining, cov).windows).toEqual(analyzeChain(kept, rows, cov).windows);
      }),
      { numRuns: 500 },
    );
  });

  it('expires a file with all its rows, and only keys of the rows given', () => {
    fc.assert(
      fc.property(history, ({ rows, kept }) => {
        const expired = expiredSegments(kept, rows);
        const fileOf = (r: SegmentRow) => `${r.chainId}/${r.timeline}/${r.name}`;
        const expiredFiles = new Set(rows.filter((r) => expired.has(r.key)).map(fileOf));
        for (const r of rows) expect(expired.has(r.key)).toBe(expiredFiles.has(fileOf(r)));
        for (const key of expired) expect(rows.some((r) => r.key === key)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('on a single line, lets go of exactly the files before the first segment the oldest kept full needs', () => {
    const single = fc.record({ kinds: fc.array(kind, { minLength: 1, maxLength: 12 }), from: fc.integer({ min: 0, max: 4 }), fulls: fc.array(fc.record({ n: fc.integer({ min: 0, max: 16 }), minute: fc.integer({ min: 0, max: 300 }), offset: fc.constantFrom(0n, 100n) }), { minLength: 1, maxLength: 4 }) });
    fc.assert(
      fc.property(single, ({ kinds, from, fulls }) => {
        const rows = rowsOf({ line: TL1, from, kinds, startMinute: 0 });
        const kept = fulls.map((f, i) => full(`f${i}`, TL1, f.n, f.minute, f.offset));
        const best = bestSegments(rows);
        // Reference: the segment each full's chain starts with; none (the full lies before every segment) keeps all.
        const starts = kept.map((f) => best.filter((s) => s.startLsn <= f.endLsn).at(-1)?.startLsn ?? -1n);
        const cutoff = starts.reduce((a, b) => (b < a ? b : a));
        expect(sorted(expiredSegments(kept, rows))).toEqual(keys(rows.filter((r) => r.startLsn < cutoff)));
      }),
      { numRuns: 300 },
    );
  });
});
