import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMomentInput, formatTimeOfDay, formatUtc, parseMoment, toRfc3339, zoneLabel } from '../src/pages/restores/moment.ts';

// The moments are typed in the browser's time zone: these tests pick one with summer time (Node reads TZ at once),
// and put back whatever the worker had (test files share workers).
const previousZone = process.env.TZ;
const setZone = (zone: string) => {
  process.env.TZ = zone;
};
beforeAll(() => setZone('Europe/Berlin'));
afterAll(() => {
  if (previousZone === undefined) delete process.env.TZ;
  else process.env.TZ = previousZone;
});

const at = (text: string) => {
  const parsed = parseMoment(text);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.at;
};

describe('local time typed, to the second', () => {
  it('reads a winter time as UTC+1 and a summer time as UTC+2', () => {
    expect(new Date(at('2026-11-28 14:03:07')).toISOString()).toBe('2026-11-28T13:03:07.000Z');
    expect(new Date(at('2026-07-01 00:00:59')).toISOString()).toBe('2026-06-30T22:00:59.000Z');
  });

  it('keeps milliseconds, and takes T between date and time', () => {
    expect(new Date(at('2026-11-28T14:03:07.25')).toISOString()).toBe('2026-11-28T13:03:07.250Z');
  });

  it('takes an RFC 3339 time with its own offset as it is', () => {
    expect(new Date(at('2026-11-28T13:03:07Z')).toISOString()).toBe('2026-11-28T13:03:07.000Z');
    expect(new Date(at('2026-11-28T09:03:07-04:00')).toISOString()).toBe('2026-11-28T13:03:07.000Z');
  });

  it('round-trips through the text the field shows', () => {
    for (const moment of [Date.UTC(2026, 10, 28, 13, 3, 7), Date.UTC(2026, 6, 1, 9, 0, 0, 412), Date.UTC(2027, 0, 1, 0, 0, 0)]) {
      expect(at(formatMomentInput(moment))).toBe(moment);
    }
    expect(formatMomentInput(Date.UTC(2026, 10, 28, 13, 3, 7))).toBe('2026-11-28 14:03:07');
    expect(formatMomentInput(Date.UTC(2026, 6, 1, 9, 0, 0, 412))).toBe('2026-07-01 11:00:00.412');
    expect(formatTimeOfDay(Date.UTC(2026, 10, 28, 13, 3, 7))).toBe('14:03:07');
  });

  it('refuses what is not a moment, saying what is wrong', () => {
    const problem = (text: string) => {
      const parsed = parseMoment(text);
      return parsed.ok ? '' : parsed.problem;
    };
    expect(problem('')).toMatch(/YYYY-MM-DD HH:MM:SS/);
    expect(problem('28/11/2026 14:03')).toMatch(/Write it as YYYY-MM-DD HH:MM:SS/);
    expect(problem('2026-11-28 14:03')).toMatch(/Write it as/);
    expect(problem('2026-02-29 10:00:00')).toBe('2026-02-29 is not a date.');
    expect(problem('2028-02-29 10:00:00')).toBe('');
    expect(problem('2026-11-28 24:00:00')).toBe('24:00:00 is not a time of day.');
    expect(problem('2026-11-28 14:60:00')).toBe('14:60:00 is not a time of day.');
  });

  it('says a time the clocks skipped does not exist', () => {
    const parsed = parseMoment('2026-03-29 02:30:00');
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.problem).toMatch(/does not exist .* clocks moved forward/);
  });

  it('takes the earlier of a time that happens twice, and names the later one', () => {
    const parsed = parseMoment('2026-10-25 02:30:00');
    expect(parsed.ok && new Date(parsed.at).toISOString()).toBe('2026-10-25T00:30:00.000Z');
    expect(parsed.ok && parsed.laterTwin !== undefined && new Date(parsed.laterTwin).toISOString()).toBe('2026-10-25T01:30:00.000Z');
    const plain = parseMoment('2026-10-25 04:30:00');
    expect(plain.ok && plain.laterTwin).toBeUndefined();
  });

  it('follows another time zone', () => {
    setZone('America/New_York');
    try {
      expect(new Date(at('2026-11-28 08:03:07')).toISOString()).toBe('2026-11-28T13:03:07.000Z');
      expect(zoneLabel(Date.UTC(2026, 10, 28))).toMatch(/^America\/New_York/);
    } finally {
      setZone('Europe/Berlin');
    }
  });
});

describe('the UTC side', () => {
  it('shows UTC to the second, milliseconds only when there are some', () => {
    expect(formatUtc(Date.UTC(2026, 10, 28, 13, 3, 7))).toBe('2026-11-28 13:03:07 UTC');
    expect(formatUtc(Date.UTC(2026, 10, 28, 13, 3, 7, 5))).toBe('2026-11-28 13:03:07.005 UTC');
  });

  it('sends RFC 3339 in UTC, without a fraction unless the moment has one', () => {
    expect(toRfc3339(at('2026-11-28 14:03:07'))).toBe('2026-11-28T13:03:07Z');
    expect(toRfc3339(Date.UTC(2026, 10, 28, 13, 3, 7, 412))).toBe('2026-11-28T13:03:07.412Z');
  });

  it('names the browser time zone', () => {
    expect(zoneLabel(Date.UTC(2026, 10, 28))).toMatch(/^Europe\/Berlin/);
  });
});
