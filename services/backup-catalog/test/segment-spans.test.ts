/**
 * The timeline's segment spans on seeded rows: the database's slices merged as `segmentSpans` does must give what
 * merging segment by segment gives (a segment joins the span before it when it starts at most (to − from) / maxSpans
 * after everything before it ended), over random segments (touching, apart, overlapping, partial, without commits)
 * and random ranges; and never more than maxSpans spans.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { freshTestDatabase } from '@sigil/kit/testing';
import { createDb, type Db } from '../src/db.ts';
import { segmentSpans, type SegmentSpan } from '../src/change-capture/segment-times.ts';
import { migrationsDir } from './helpers.ts';

const TARGET = { namespace: 'default', name: 'spans' };
const T0 = Date.UTC(2026, 5, 1);
const MINUTE = 60_000;

interface Seeded {
  seq: number;
  start: number;
  end: number;
  commits: number;
  size: number;
  partial: boolean;
}

let db: Db;
const seeded: Seeded[] = [];

/** 300 segments in a day: mostly one after another, sometimes a pause or an overlap, some partial, some without commits. */
function history(): Array<{ start: number; end: number; commits: number; size: number; partial: boolean; withCommits: boolean }> {
  return fc.sample(
    fc.array(
      fc.record({ pause: fc.constantFrom(0, 0, 0, 1, 5, 30, 90, -3), length: fc.integer({ min: 0, max: 20 }), commits: fc.integer({ min: 0, max: 50 }), size: fc.integer({ min: 1, max: 10_000 }), partial: fc.constantFrom(false, false, false, true), withCommits: fc.constantFrom(true, true, true, false) }),
      { minLength: 300, maxLength: 300 },
    ),
    { numRuns: 1, seed: 20260601 },
  )[0]!.reduce<Array<{ start: number; end: number; commits: number; size: number; partial: boolean; withCommits: boolean }>>((segments, s) => {
    const start = (segments.at(-1)?.end ?? T0) + s.pause * MINUTE;
    return [...segments, { start, end: start + s.length * MINUTE, commits: s.commits, size: s.size, partial: s.partial, withCommits: s.withCommits }];
  }, []);
}

beforeAll(async () => {
  db = createDb(await freshTestDatabase('strata_catalog_test_segment_spans', migrationsDir));
  const rows = history().map((s, i) => ({
    key: `wal/${i}`, namespace: TARGET.namespace, targetName: TARGET.name, chainId: 'S-1', timeline: 1, name: `seg-${i}`, startPos: '0/0', endPos: '0/0', startLsn: BigInt(i), endLsn: BigInt(i + 1),
    // A segment without commits is the moment the streamer covered (or, without that, the moment it was uploaded).
    firstTime: s.withCommits ? new Date(s.start) : null, lastTime: s.withCommits ? new Date(s.end) : null, coveredUntil: s.withCommits ? null : new Date(s.end),
    commits: s.commits, sha256: 'a'.repeat(64), size: BigInt(s.size), partial: s.partial, uploadedAt: new Date(s.end + MINUTE),
  }));
  await db.segment.createMany({ data: rows });
  for (const row of await db.segment.findMany({ orderBy: { seq: 'asc' } })) {
    const start = (row.firstTime ?? row.coveredUntil ?? row.uploadedAt).getTime();
    seeded.push({ seq: Number(row.seq), start, end: Math.max(start, (row.coveredUntil ?? row.lastTime ?? row.uploadedAt).getTime()), commits: row.commits, size: Number(row.size), partial: row.partial });
  }
});
afterAll(async () => db?.$disconnect());

/** The rule, segment by segment: in order of (clamped) start, a segment joins the span before it when its gap is at most `gap`. */
function reference(from: number, to: number, maxSpans: number): SegmentSpan[] {
  const gap = (to - from) / maxSpans;
  const inRange = seeded.filter((s) => s.start <= to && s.end >= from).sort((a, b) => Math.max(a.start, from) - Math.max(b.start, from));
  const spans: Array<Seeded & { reach: number; count: number; firstSeq: number; lastSeq: number }> = [];
  for (const s of inRange) {
    const span = spans.at(-1);
    if (span && Math.max(s.start, from) - span.reach <= gap) {
      Object.assign(span, { reach: Math.max(span.reach, Math.min(s.end, to)), start: Math.min(span.start, s.start), end: Math.max(span.end, s.end), count: span.count + 1, commits: span.commits + s.commits, size: span.size + s.size, partial: span.partial || s.partial, firstSeq: Math.min(span.firstSeq, s.seq), lastSeq: Math.max(span.lastSeq, s.seq) });
    } else {
      spans.push({ ...s, reach: Math.min(s.end, to), count: 1, firstSeq: s.seq, lastSeq: s.seq });
    }
  }
  return spans.map((s) => ({ firstTime: new Date(s.start).toISOString(), lastTime: new Date(s.end).toISOString(), segments: s.count, commits: s.commits, bytes: s.size, partial: s.partial, firstSeq: s.firstSeq, lastSeq: s.lastSeq }));
}

describe('segment spans', () => {
  it('merge exactly as segment by segment, over the whole history and random zooms', async () => {
    const last = Math.max(...seeded.map((s) => s.end));
    const cases: Array<[number, number, number]> = [[T0, last, 400], [T0, last, 40], [T0, last, 7], [T0, last, 1], [T0 - 60 * MINUTE, last + 60 * MINUTE, 12]];
    cases.push(...fc.sample(fc.tuple(fc.integer({ min: T0 - 100 * MINUTE, max: last }), fc.integer({ min: 1, max: 2000 * MINUTE }), fc.integer({ min: 1, max: 600 })).map(([from, length, maxSpans]) => [from, from + length, maxSpans] as [number, number, number]), { numRuns: 60, seed: 7 }));
    for (const [from, to, maxSpans] of cases) {
      const spans = await segmentSpans(db, TARGET, { from: new Date(from), to: new Date(to) }, maxSpans);
      expect(spans, `${new Date(from).toISOString()}..${new Date(to).toISOString()} in ${maxSpans}`).toEqual(reference(from, to, maxSpans));
      expect(spans.length).toBeLessThanOrEqual(maxSpans);
    }
  });

  it('merge touching segments, keep apart those further than the step, and say which span holds a partial upload', async () => {
    const target = { namespace: 'default', name: 'by-hand' };
    const at = (minutes: number) => new Date(T0 + minutes * MINUTE);
    // Minutes 0–10 and 10–20 touch; 40–50 after a 20-minute gap; 50–55 a partial upload; 100 a segment without commits.
    const rows = [[0, 10, false], [10, 20, false], [40, 50, false], [50, 55, true], [100, 100, false]] as const;
    await db.segment.createMany({
      data: rows.map(([first, last, partial], i) => ({
        key: `hand/${i}`, namespace: target.namespace, targetName: target.name, chainId: 'S-1', timeline: 1, name: `hand-${i}`, startPos: '0/0', endPos: '0/0', startLsn: BigInt(i), endLsn: BigInt(i + 1),
        firstTime: i < 4 ? at(first) : null, lastTime: i < 4 ? at(last) : null, coveredUntil: i < 4 ? null : at(last), commits: i < 4 ? 5 : 0, sha256: 'a'.repeat(64), size: 100n, partial, uploadedAt: at(last + 1),
      })),
    });
    const spans = async (maxSpans: number) => (await segmentSpans(db, target, { from: at(0), to: at(120) }, maxSpans)).map((s) => [s.firstTime, s.lastTime, s.segments, s.commits, s.partial]);
    // A 10-minute step: the touching pair merges, the 20-minute gap does not, the partial upload joins the segment it touches.
    expect(await spans(12)).toEqual([[at(0).toISOString(), at(20).toISOString(), 2, 10, false], [at(40).toISOString(), at(55).toISOString(), 2, 10, true], [at(100).toISOString(), at(100).toISOString(), 1, 0, false]]);
    // A 20-minute step: a gap of exactly the step merges; the 45 minutes before the last segment do not.
    expect(await spans(6)).toEqual([[at(0).toISOString(), at(55).toISOString(), 4, 20, true], [at(100).toISOString(), at(100).toISOString(), 1, 0, false]]);
    expect(await spans(2)).toEqual([[at(0).toISOString(), at(100).toISOString(), 5, 20, true]]);
  });
});
