import { describe, expect, it } from 'vitest';
import { pinExpiry } from '../src/backups/pins.ts';

describe("a pin's expiry", () => {
  const now = new Date('2026-03-01T12:00:00Z');

  it('is a duration from now, an RFC 3339 time, or the start of a day (UTC)', () => {
    expect(pinExpiry('30d', now)).toEqual(new Date('2026-03-31T12:00:00Z'));
    expect(pinExpiry('2027-01-01T08:30:00Z', now)).toEqual(new Date('2027-01-01T08:30:00Z'));
    expect(pinExpiry('2027-01-01', now)).toEqual(new Date('2027-01-01T00:00:00Z'));
  });

  it('refuses what is not a time, and a time the database cannot hold', () => {
    expect(() => pinExpiry('soon', now)).toThrow(/neither a duration nor an RFC 3339 time/);
    expect(() => pinExpiry('2027-13-45', now)).toThrow(/not a valid time/);
    expect(() => pinExpiry('5000000d', now)).toThrow(/expires: "5000000d" is outside the years 0001 to 9999/);
  });
});
