import { describe, expect, it } from 'vitest';
import { latestMoment, nearestRestorable, verdictOf } from '../src/pages/restores/restorable.ts';

const T = (hh: number, mm: number, ss = 0, ms = 0) => Date.UTC(2026, 10, 28, hh, mm, ss, ms);
// Two windows with a gap between (the change log broke at 12:00 and a new full opened one at 13:00).
const WINDOWS = [
  { from: T(13, 0), to: T(14, 3, 7, 412) },
  { from: T(9, 0), to: T(12, 0) },
];

describe('nearest restorable moment', () => {
  it('is nothing to offer for a moment inside a window (ends included)', () => {
    expect(nearestRestorable(T(10, 30), WINDOWS)).toEqual({});
    expect(nearestRestorable(T(12, 0), WINDOWS)).toEqual({});
    expect(nearestRestorable(T(14, 3, 7, 412), WINDOWS)).toEqual({});
  });

  it('offers the end of the window before and the start of the window after a moment in the gap', () => {
    expect(nearestRestorable(T(12, 30), WINDOWS)).toEqual({ before: T(12, 0), after: T(13, 0) });
  });

  it('offers the exact end of the newest window after it, milliseconds kept', () => {
    expect(nearestRestorable(T(14, 3, 8), WINDOWS)).toEqual({ before: T(14, 3, 7, 412) });
  });

  it('offers the start of the oldest window before it', () => {
    expect(nearestRestorable(T(8, 0), WINDOWS)).toEqual({ after: T(9, 0) });
  });

  it('has nothing to offer without windows', () => {
    expect(nearestRestorable(T(8, 0), [])).toEqual({});
  });
});

describe('verdict', () => {
  it('is exact inside a window, outside with neighbours otherwise', () => {
    expect(verdictOf(T(13, 30), WINDOWS, [T(9, 0)])).toEqual({ kind: 'exact' });
    expect(verdictOf(T(12, 0, 1), WINDOWS, [T(9, 0)])).toEqual({ kind: 'outside', before: T(12, 0), after: T(13, 0) });
  });

  it('without change capture restores the newest full at or before the moment', () => {
    const fulls = [T(3, 0), T(9, 0), T(15, 0)];
    expect(verdictOf(T(12, 0), [], fulls)).toEqual({ kind: 'full', backupAt: T(9, 0) });
    expect(verdictOf(T(9, 0), [], fulls)).toEqual({ kind: 'full', backupAt: T(9, 0) });
    expect(verdictOf(T(2, 0), [], fulls)).toEqual({ kind: 'outside', after: T(3, 0) });
    expect(verdictOf(T(2, 0), [], [])).toEqual({ kind: 'nothing' });
  });

  it('latest is the end of the newest window, else the newest full', () => {
    expect(latestMoment(WINDOWS, [T(15, 0)])).toBe(T(14, 3, 7, 412));
    expect(latestMoment([], [T(3, 0), T(15, 0)])).toBe(T(15, 0));
    expect(latestMoment([], [])).toBeUndefined();
  });
});
