import { describe, expect, it } from 'vitest';
import { historyRange, WINDOW_END_SLACK_MS } from '../src/components/timeline/fragment.ts';

const now = Date.parse('2026-11-28T12:00:00Z');
const iso = (at: number) => new Date(at).toISOString();
const H = 3_600_000;

describe('the range of a target’s whole history', () => {
  it('ends at now (the answer’s end), not a margin past it', () => {
    const range = historyRange({ from: iso(now - 24 * H), to: iso(now), windows: [{ to: iso(now - 3000) }] });
    expect(range.to).toBe(now);
    // A margin before the start, so the oldest mark is not on the edge.
    expect(range.from).toBeLessThan(now - 24 * H);
  });

  it('reaches a window that ends a moment after now, by a few seconds at most', () => {
    expect(historyRange({ from: iso(now - H), to: iso(now), windows: [{ to: iso(now + 2000) }, { to: iso(now - H / 2) }] }).to).toBe(now + 2000);
    expect(historyRange({ from: iso(now - H), to: iso(now), windows: [{ to: iso(now + 10 * 60_000) }] }).to).toBe(now + WINDOW_END_SLACK_MS);
    expect(WINDOW_END_SLACK_MS).toBeLessThanOrEqual(10_000);
  });

  it('ends at now without windows', () => {
    expect(historyRange({ from: iso(now - H), to: iso(now) }).to).toBe(now);
    expect(historyRange({ from: iso(now - H), to: iso(now), windows: [] }).to).toBe(now);
  });
});
