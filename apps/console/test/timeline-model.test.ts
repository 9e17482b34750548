import { describe, expect, it } from 'vitest';
import { gapsOf, isRestorable, keyStep, panned, ticksOf, zoomed } from '../src/components/timeline/model.ts';

const H = 3_600_000;

describe('the timeline model', () => {
  it('finds what no window covers, windows in any order and overlapping', () => {
    const range = { from: 0, to: 10 * H };
    expect(gapsOf(range, [{ from: 6 * H, to: 8 * H }, { from: 1 * H, to: 3 * H }, { from: 2 * H, to: 4 * H }])).toEqual([
      { from: 0, to: 1 * H },
      { from: 4 * H, to: 6 * H },
      { from: 8 * H, to: 10 * H },
    ]);
    expect(gapsOf(range, [{ from: -H, to: 11 * H }])).toEqual([]);
    expect(gapsOf(range, [])).toEqual([range]);
  });

  it('says a moment is restorable inside a window, ends included', () => {
    const windows = [{ from: 1000, to: 2000 }];
    expect([999, 1000, 1500, 2000, 2001].map((at) => isRestorable(at, windows))).toEqual([false, true, true, true, false]);
  });

  it('zooms around the anchor, never past the history nor below a minute, and pans inside it', () => {
    const limit = { from: 0, to: 100 * H };
    expect(zoomed({ from: 0, to: 100 * H }, 0.5, 50 * H, limit)).toEqual({ from: 25 * H, to: 75 * H });
    expect(zoomed({ from: 0, to: 10 * H }, 0.5, 0, limit)).toEqual({ from: 0, to: 5 * H });
    expect(zoomed({ from: 0, to: 50 * H }, 4, 25 * H, limit)).toEqual(limit);
    const tiny = zoomed({ from: 0, to: 2 * 60_000 }, 0.01, 60_000, limit);
    expect(tiny.to - tiny.from).toBe(60_000);
    expect(panned({ from: 90 * H, to: 99 * H }, 5 * H, limit)).toEqual({ from: 91 * H, to: 100 * H });
    expect(panned({ from: 2 * H, to: 12 * H }, -5 * H, limit)).toEqual({ from: 0, to: 10 * H });
  });

  it('ticks round moments across the range, about as many as asked', () => {
    const from = Date.parse('2026-11-28T00:00:30Z');
    const ticks = ticksOf({ from, to: from + 6 * H }, 6);
    expect(ticks.length).toBeGreaterThanOrEqual(5);
    expect(ticks.length).toBeLessThanOrEqual(7);
    expect(ticks.every((t) => t.at >= from && t.at <= from + 6 * H)).toBe(true);
    expect(new Set(ticks.map((t, i) => (i ? t.at - ticks[i - 1]!.at : 0)).slice(1)).size).toBe(1);
  });

  it('steps the keyboard by about a pixel, in seconds when zoomed in', () => {
    expect(keyStep({ from: 0, to: 600_000 }, 1000)).toBe(1000);
    expect(keyStep({ from: 0, to: 24 * H }, 1000)).toBe(5 * 60_000);
    expect(keyStep({ from: 0, to: 1000 * H }, 100)).toBe(H);
  });
});
