/**
 * `chainsFrom` (every full's chain from lines indexed once) must find exactly what `chainFrom` finds walking each
 * full's line: checked over random histories of several lines, with holes, partial and missing uploads, fulls of
 * known and unknown servers, dumps and the streamer's coverage.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyzeChain, bestSegments, chainFrom, chainsFrom, type FullBase, type SegmentRow, type StreamCoverage } from '../src/change-capture/chain.ts';
import { formatLsn } from '../src/change-capture/chain-inputs.ts';

const MB16 = 16n * 1024n * 1024n;
const T0 = Date.UTC(2026, 0, 1);
const t = (minutes: number) => new Date(T0 + minutes * 60_000);
const LINES = [{ timeline: 1, chainId: 'sysA-1' }, { timeline: 1, chainId: 'sysB-1' }, { timeline: 1 }, { timeline: 2, chainId: 'sysA-2' }];

/** A line's uploads in file order: mostly one after another, now and then a file skipped (a hole). */
const lineArb = fc.array(
  fc.record({
    skip: fc.constantFrom(0, 0, 0, 0, 1, 2),
    first: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }),
    length: fc.integer({ min: 0, max: 60 }),
    covered: fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }),
    partial: fc.constantFrom(false, false, false, true),
    // A partial upload that reached its file's end: the walk must still stop at it.
    partialReachesEnd: fc.boolean(),
    missing: fc.constantFrom(false, false, false, false, true),
  }),
  { maxLength: 20 },
);
const historyArb = fc.tuple(...LINES.map(() => lineArb)).map((lines) =>
  lines.flatMap((uploads, l) => {
    let n = 0;
    return uploads.map((upload) => ({ ...upload, line: LINES[l]!, n: (n += 1 + upload.skip) }));
  }),
);

interface SegmentSpec {
  line: { timeline: number; chainId?: string };
  n: number;
  first?: number;
  length: number;
  covered?: number;
  partial: boolean;
  partialReachesEnd?: boolean;
  missing: boolean;
}

function rowOf(s: SegmentSpec, index: number): SegmentRow {
  const start = BigInt(s.n) * MB16;
  const last = s.first === undefined ? undefined : s.first + s.length;
  return {
    key: `k${index}`,
    ...(s.line.chainId ? { chainId: s.line.chainId } : {}),
    name: `${s.line.timeline}-${s.n}`,
    timeline: s.line.timeline,
    startLsn: start,
    endLsn: s.partial && !s.partialReachesEnd ? start + 1000n + BigInt(index) : start + MB16,
    endPos: formatLsn(s.partial && !s.partialReachesEnd ? start + 1000n + BigInt(index) : start + MB16),
    firstMs: s.first === undefined ? null : t(s.first).getTime(),
    lastMs: last === undefined ? null : t(last).getTime(),
    coveredUntilMs: s.covered === undefined || last === undefined ? null : t(last + s.covered).getTime(),
    partial: s.partial,
    missing: s.missing,
    sha256: 'a'.repeat(64),
    size: 100n,
    compression: 'zstd',
  };
}

const fullArb = fc.record({
  line: fc.constantFrom(...LINES),
  n: fc.integer({ min: -1, max: 50 }),
  offset: fc.bigInt({ min: 0n, max: MB16 - 1n }),
  minute: fc.integer({ min: 0, max: 400 }),
  dump: fc.boolean(),
});

const coverageArb = fc.option(
  fc.record({ minute: fc.integer({ min: 0, max: 500 }), n: fc.integer({ min: 0, max: 31 }), timeline: fc.option(fc.constantFrom(1, 2), { nil: undefined }) }),
  { nil: undefined },
);

describe('every full\'s chain at once', () => {
  it('equals the chain walked from each full, on random histories', () => {
    fc.assert(
      fc.property(historyArb, fc.array(fullArb, { minLength: 1, maxLength: 12 }), coverageArb, (segments, fullSpecs, cov) => {
        const rows = segments.map(rowOf);
        const fulls: FullBase[] = fullSpecs.map((f, i) => ({
          id: `f${i}`,
          time: t(f.minute),
          endLsn: BigInt(f.n) * MB16 + f.offset,
          timeline: f.line.timeline,
          storedBytes: 1,
          ...(f.line.chainId && !f.dump ? { chainId: f.line.chainId } : {}),
          ...(f.dump ? { needsChangeLog: true, wholeSeconds: true } : {}),
        }));
        const coverage: StreamCoverage = cov ? { coveredUntil: t(cov.minute), coveredLsn: BigInt(cov.n) * MB16 + 500n, ...(cov.timeline ? { coveredTimeline: cov.timeline } : {}) } : {};
        const best = bestSegments(rows);
        const walked = fulls.map((full) => chainFrom(full, best, coverage));
        const indexed = chainsFrom(fulls, best, coverage);
        expect(indexed.map((c) => ({ ...c, segments: c.segments }))).toEqual(walked);
        expect(analyzeChain(fulls, rows, coverage).chains.map((c) => c.segments.map((s) => s.key))).toEqual(walked.map((c) => c.segments.map((s) => s.key)));
      }),
      { numRuns: 400 },
    );
  });

  it('lists the holes it counts, each between the segments around it', () => {
    const line = { timeline: 1, chainId: 'sysA-1' };
    const rows = [0, 1, 3, 4].map((n, i) => rowOf({ line, n, first: n * 10, length: 9, partial: false, missing: false }, i));
    rows.push(rowOf({ line, n: 5, first: 50, length: 5, partial: true, missing: false }, 9), rowOf({ line, n: 6, first: 60, length: 5, partial: false, missing: false }, 10));
    const report = analyzeChain([], rows, {});
    expect(report.gaps).toBe(2);
    expect(report.holes.map((h) => [h.after.name, h.before.name])).toEqual([['1-1', '1-3'], ['1-5', '1-6']]);
  });
});
