import { describe, expect, it } from 'vitest';
import { changeRange, newestUploads, totalTables } from '../src/change-capture/change-summaries.ts';

const now = new Date('2026-03-01T12:00:00.000Z');

describe('the range of a change summary', () => {
  it('defaults to the last day, reads a duration before now, a time, and latest', () => {
    expect(changeRange(undefined, undefined, now)).toEqual({ from: new Date('2026-02-28T12:00:00.000Z'), to: now });
    expect(changeRange('2h', 'latest', now)).toEqual({ from: new Date('2026-03-01T10:00:00.000Z'), to: now });
    expect(changeRange('2026-03-01T09:00:00Z', '2026-03-01T10:00:00Z', now)).toEqual({ from: new Date('2026-03-01T09:00:00.000Z'), to: new Date('2026-03-01T10:00:00.000Z') });
    expect(changeRange(undefined, '2026-03-01T10:00:00Z', now).from).toEqual(new Date('2026-02-28T10:00:00.000Z'));
  });

  it('refuses what is not a time, and a range that ends before it starts', () => {
    expect(() => changeRange('yesterday', undefined, now)).toThrow(/since: "yesterday" is not an RFC 3339 time/);
    expect(() => changeRange('2x', undefined, now)).toThrow(/neither an RFC 3339 time nor a duration/);
    expect(() => changeRange(undefined, 'soon', now)).toThrow(/until: "soon" is not an RFC 3339 time .* or latest/);
    expect(() => changeRange('2026-03-02T00:00:00Z', undefined, now)).toThrow(/is after until/);
    // Times the database cannot hold (a fuzzed since of 25 million days gave a 500).
    expect(() => changeRange('25000000d', undefined, now)).toThrow(/since: "25000000d" is outside the years 0001 to 9999/);
    expect(() => changeRange('0000-06-01T00:00:00Z', undefined, now)).toThrow(/outside the years 0001 to 9999/);
  });
});

describe('the segments of a change summary', () => {
  const segment = (name: string, endPos: string, partial: boolean, inserts: number) => ({ chainID: 'c-1', timeline: 1, name, endPos, partial, tables: { 'shop.orders': { inserts, updates: 0, deletes: 0, truncates: 0 } } });

  it("keeps each file's newest upload: the finished one, else the partial that reached furthest", () => {
    const uploads = [
      segment('mariadb-bin.000004', 'mariadb-bin.000004:900', true, 1),
      segment('mariadb-bin.000004', 'mariadb-bin.000005:0', false, 3),
      segment('mariadb-bin.000005', 'mariadb-bin.000005:1200', true, 2),
      segment('mariadb-bin.000005', 'mariadb-bin.000005:800', true, 1),
      segment('000000010000000000000003', '0/3004C18', true, 1),
      segment('000000010000000000000003', '0/301B348', true, 5),
    ];
    const kept = newestUploads(uploads as never);
    expect(kept.map((s) => s.endPos)).toEqual(['mariadb-bin.000005:0', 'mariadb-bin.000005:1200', '0/301B348']);
    expect(totalTables(kept)).toEqual({ 'shop.orders': { inserts: 10, updates: 0, deletes: 0, truncates: 0 } });
  });
});
