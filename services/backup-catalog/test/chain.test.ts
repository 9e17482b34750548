import { describe, expect, it } from 'vitest';
import { analyzeChain, chooseChain, type FullBase, type SegmentRow } from '../src/change-capture/chain.ts';
import { formatLsn } from '../src/change-capture/chain-inputs.ts';

const MB16 = 16n * 1024n * 1024n;
const t = (seconds: number) => new Date(Date.UTC(2026, 10, 25, 12, 0, seconds));

/** Segment n (0/n000000) of timeline 1; complete unless an end inside it is given. */
function segment(n: number, times: { first?: number; last?: number; covered?: number } = {}, partialEnd?: bigint): SegmentRow {
  const start = BigInt(n) * MB16;
  return {
    key: `wal/${n}${partialEnd ? `.partial.${partialEnd}` : ''}`,
    name: `00000001000000000000000${n.toString(16).toUpperCase()}`,
    timeline: 1,
    startLsn: start,
    endLsn: partialEnd ?? start + MB16,
    endPos: formatLsn(partialEnd ?? start + MB16),
    firstMs: times.first !== undefined ? t(times.first).getTime() : null,
    lastMs: times.last !== undefined ? t(times.last).getTime() : null,
    coveredUntilMs: times.covered !== undefined ? t(times.covered).getTime() : null,
    partial: partialEnd !== undefined,
    missing: false,
    sha256: 'a'.repeat(64),
    size: 100n,
    compression: 'zstd',
  };
}

const full: FullBase = { id: 'f1', time: t(10), endLsn: 2n * MB16 + 500n, timeline: 1, storedBytes: 1000 };

describe('the change-capture chain', () => {
  it('runs from a full through consecutive segments to the newest partial one, and its window ends where that one covers', () => {
    const rows = [segment(2, { first: 5, last: 12 }), segment(3, { first: 13, last: 20 }), segment(4, { first: 21, last: 25, covered: 30 }, 4n * MB16 + 900n)];
    const report = analyzeChain([full], rows, {});
    expect(report).toMatchObject({ windows: [{ from: t(10).toISOString(), to: t(30).toISOString() }], gaps: 0, chainBroken: false, segments: 3 });
  });

  it('a complete segment replaces its partial uploads, and the streamer\'s coverage extends an idle end', () => {
    const rows = [segment(2, { last: 12, covered: 14 }, 2n * MB16 + 800n), segment(2, { first: 5, last: 12 }), segment(3, { last: 15, covered: 16 }, 3n * MB16 + 100n)];
    const report = analyzeChain([full], rows, { coveredUntil: t(40), coveredLsn: 3n * MB16 + 100n });
    expect(report.segments).toBe(2);
    expect(report.windows).toEqual([{ from: t(10).toISOString(), to: t(40).toISOString() }]);
    // Coverage of a position the segments do not reach yet does not count.
    expect(analyzeChain([full], rows, { coveredUntil: t(40), coveredLsn: 3n * MB16 + 200n }).windows[0]!.to).toBe(t(16).toISOString());
  });

  it('a missing segment ends the window, counts as a gap and breaks the newest full\'s chain with the reason', () => {
    const rows = [segment(2, { last: 12 }), { ...segment(3, { last: 20 }), missing: true }, segment(4, { last: 28 }), segment(5, { last: 33, covered: 35 }, 5n * MB16 + 10n)];
    const report = analyzeChain([full], rows, {});
    expect(report.windows).toEqual([{ from: t(10).toISOString(), to: t(12).toISOString() }]);
    expect(report).toMatchObject({ gaps: 1, chainBroken: true, brokenSince: t(12) });
    expect(report.brokenReason).toMatch(/after 000000010000000000000002 is missing from the store/);
    // A newer full past the hole starts a new chain and a new window.
    const second: FullBase = { id: 'f2', time: t(29), endLsn: 5n * MB16 + 5n, timeline: 1, storedBytes: 10 };
    const healed = analyzeChain([full, second], rows, {});
    expect(healed.chainBroken).toBe(false);
    expect(healed.windows).toEqual([{ from: t(10).toISOString(), to: t(12).toISOString() }, { from: t(29).toISOString(), to: t(35).toISOString() }]);
  });

  it('a new timeline breaks the chain until a full is taken on it', () => {
    const rows = [segment(2, { last: 12 }), { ...segment(3, { last: 20 }), timeline: 2 }];
    expect(analyzeChain([full], rows, {})).toMatchObject({ chainBroken: true, brokenReason: expect.stringMatching(/timeline 2/) });
  });

  it('a restore takes the newest full whose chain reaches the time and the segments up to the first commit after it', () => {
    const rows = [segment(2, { first: 5, last: 12 }), segment(3, { first: 13, last: 20 }), segment(4, { first: 21, last: 25, covered: 30 }, 4n * MB16 + 900n)];
    const report = analyzeChain([full], rows, {});
    const mid = chooseChain(report, t(14))!;
    expect(mid.segments.map((s) => s.name)).toEqual(['000000010000000000000002', '000000010000000000000003']);
    expect(mid.toEnd).toBe(false);
    // After the last commit but inside the covered end: replay everything, no target time to wait for.
    const idle = chooseChain(report, t(28))!;
    expect(idle.segments).toHaveLength(3);
    expect(idle.toEnd).toBe(true);
    expect(chooseChain(report, t(9))).toBeUndefined();
    expect(chooseChain(report, t(31))).toBeUndefined();
    expect(chooseChain(report, 'latest')).toMatchObject({ toEnd: true, segments: report.chains[0]!.segments });
  });

  it("a dump's chain opens a window only once its binlogs reach past the dump's completion", () => {
    const dump: FullBase = { ...full, needsChangeLog: true };
    expect(analyzeChain([dump], [], {}).windows).toEqual([]);
    expect(chooseChain(analyzeChain([dump], [], {}), t(10))).toBeUndefined();
    const behind = [segment(2, { first: 5, last: 8, covered: 9 }, 2n * MB16 + 400n)];
    expect(analyzeChain([dump], behind, {}).windows).toEqual([]);
    const past = [segment(2, { first: 5, last: 12, covered: 13 }, 2n * MB16 + 900n)];
    expect(analyzeChain([dump], past, {}).windows).toEqual([{ from: t(10).toISOString(), to: t(13).toISOString() }]);
    // A physical base restores its own end without any segment.
    expect(analyzeChain([full], [], {}).windows).toEqual([{ from: t(10).toISOString(), to: t(10).toISOString() }]);
  });

  it('a binlog chain ends at the last second it holds whole: a restore replays to the end of the second asked', () => {
    const dump: FullBase = { ...full, needsChangeLog: true, wholeSeconds: true };
    const rows = [segment(2, { first: 5, last: 12 }), { ...segment(3, { first: 13, last: 20 }, 3n * MB16 + 900n), coveredUntilMs: t(21).getTime() + 300 }];
    expect(analyzeChain([dump], rows, {}).windows).toEqual([{ from: t(10).toISOString(), to: new Date(t(21).getTime() - 1).toISOString() }]);
  });

  it('another cluster behind the endpoint (same WAL file names) neither extends nor replaces the chain, and breaks it', () => {
    const ours: FullBase = { ...full, chainId: 'A-1' };
    const a = [segment(2, { first: 5, last: 12 }), segment(3, { first: 13, last: 20, covered: 21 }, 3n * MB16 + 900n)].map((s) => ({ ...s, chainId: 'A-1' }));
    const b = [segment(2, { first: 40, last: 45 }), segment(3, { first: 46, last: 50, covered: 55 }, 3n * MB16 + 100n)].map((s) => ({ ...s, key: `${s.key}-b`, chainId: 'B-1' }));
    const report = analyzeChain([ours], [...a, ...b], {});
    expect(report.windows).toEqual([{ from: t(10).toISOString(), to: t(21).toISOString() }]);
    expect(report.chains[0]!.segments.map((s) => s.chainId)).toEqual(['A-1', 'A-1']);
    expect(report).toMatchObject({ gaps: 0, chainBroken: true, brokenReason: expect.stringMatching(/another cluster \(system B, the newest full's A\)/) });
    expect(analyzeChain([ours], a, {}).chainBroken).toBe(false);
  });

  it('a commit in the same millisecond as the time asked counts as after it: the replay stops at the time itself', () => {
    // 12:00:25.123456 is kept as .123; asked for .1234, recovery must still stop before it.
    const last = new Date(t(25).getTime() + 123);
    const rows = [segment(2, { first: 5, last: 12 }), { ...segment(3, { first: 13, covered: 30 }, 3n * MB16 + 900n), lastMs: last.getTime() }];
    const choice = chooseChain(analyzeChain([full], rows, {}), new Date(last))!;
    expect(choice.toEnd).toBe(false);
    expect(choice.segments).toHaveLength(2);
  });
});
