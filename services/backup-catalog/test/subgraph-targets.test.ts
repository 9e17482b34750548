// The console's target pages through the catalog's subgraph over HTTP: the list's health and chain fields, a target's
// conditions, its timeline and its segments, the Target entity, and who may see them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strataPrincipal } from '@sigil/kit/testing';
import type { StrataPrincipal } from '@sigil/proto/strata';
import { Prisma } from '../src/generated/prisma/client.ts';
import { FAILED, FULL_1, FULL_2, PITR, SEGMENT, SEGMENTS, graph as graphOf, iso, startConsoleGraph, type ConsoleGraph } from './console-graph-fixtures.ts';

const VIEWER = strataPrincipal('viewer');
const ACME_SHOP = strataPrincipal('viewer', { orgs: ['acme'], projects: ['shop'] });
const OTHER_ORG = strataPrincipal('viewer', { orgs: ['other'] });

let c: ConsoleGraph;
const graph = (principal: StrataPrincipal | undefined, query: string, variables: Record<string, unknown> = {}) => graphOf(c.h, principal, query, variables);

beforeAll(async () => {
  c = await startConsoleGraph('graph_targets');
});
afterAll(async () => c?.h.close());

const TARGET_FIELDS = `namespace name health pitr windows { from to } gaps segmentCount chainBroken chainBrokenReason chainBrokenSince
  lastVerification lastVerificationPassed running onlyInStore replicationDenied replicationFix`;

describe('the targets list and a target', () => {
  it("carries the chain's windows, holes and broken reason, the last verification and what replication lacks", async () => {
    const body = await graph(VIEWER, `{ strataTargets { ${TARGET_FIELDS} } }`);
    expect(body.errors).toBeUndefined();
    const byName = new Map((body.data?.strataTargets as Array<{ name: string }>).map((t) => [t.name, t]));
    expect(byName.get(PITR.name)).toEqual({
      namespace: 'default', name: PITR.name, health: 'suspended', pitr: true,
      windows: [{ from: iso(1), to: iso(30) }, { from: iso(61), to: iso(86) }], gaps: 2, segmentCount: SEGMENTS.length,
      chainBroken: true, chainBrokenReason: `the segment after ${SEGMENT(7)} is missing from the store; restores before ${iso(86)} still work`, chainBrokenSince: iso(86),
      lastVerification: iso(95), lastVerificationPassed: false, running: '', onlyInStore: false, replicationDenied: '', replicationFix: '',
    });
    expect(byName.get('pg-denied')).toMatchObject({ pitr: false, windows: [], gaps: 0, segmentCount: 0, chainBroken: false, chainBrokenReason: '', chainBrokenSince: null, lastVerification: null, lastVerificationPassed: null, replicationDenied: 'role app has no REPLICATION attribute', replicationFix: 'ALTER ROLE "app" REPLICATION;' });
  });

  it('says what GET /targets says, field for field', async () => {
    const rest = await c.h.call('viewer', 'get', '/api/v1/targets');
    const body = await graph(VIEWER, `{ strataTargets { ${TARGET_FIELDS} } }`);
    for (const target of rest.body.targets as Array<Record<string, unknown>>) {
      const node = (body.data?.strataTargets as Array<Record<string, unknown>>).find((t) => t.name === target.name);
      expect(node).toMatchObject({ health: target.health, pitr: target.pitr, windows: target.windows, gaps: target.gaps, segmentCount: target.segments, chainBroken: target.chainBroken, running: target.running, onlyInStore: target.onlyInStore });
    }
  });

  it('filters by org, project, env and health like the console API', async () => {
    const body = await graph(VIEWER, `{
      acme: strataTargets(org: "acme") { name } shop: strataTargets(project: "shop") { name } prod: strataTargets(env: "prod") { name }
      suspended: strataTargets(health: suspended) { name } none: strataTargets(org: "acme", env: "staging") { name } }`);
    const names = (key: string) => (body.data?.[key] as Array<{ name: string }>).map((t) => t.name).sort();
    expect([names('acme'), names('shop'), names('prod'), names('suspended'), names('none')]).toEqual([['pg-denied', PITR.name], [PITR.name], ['pg-other', PITR.name], [PITR.name], []]);
  });

  it("has the resource's status conditions, as GET /targets/{ns}/{name} has them", async () => {
    const rest = await c.h.call('viewer', 'get', `/api/v1/targets/default/${PITR.name}`);
    const body = await graph(VIEWER, `{ strataTarget(namespace: "default", name: "${PITR.name}") { conditions { type status reason message lastTransitionTime } } }`);
    const conditions = (body.data?.strataTarget as { conditions: unknown[] }).conditions;
    expect(conditions).toEqual((rest.body.status.conditions as Array<Record<string, unknown>>).map(({ type, status, reason, message, lastTransitionTime }) => ({ type, status, reason, message, lastTransitionTime })));
    expect(conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'False', reason: 'Suspended' }));
  });
});

const TIMELINE = `windows { from to } backups { id time completed phase mode verified verifyFailed pinned storedBytes }
  verifications { backupID restore at passed rtoSeconds message } segmentSpans { firstTime lastTime segments commits bytes partial firstSeq lastSeq } breaks { kind from to reason }`;

async function timeline(args: string, principal: StrataPrincipal = VIEWER) {
  const body = await graph(principal, `{ strataTarget(namespace: "default", name: "${PITR.name}") { timeline${args} { from to ${TIMELINE} } } }`);
  expect(body.errors).toBeUndefined();
  return (body.data?.strataTarget as { timeline: Record<string, unknown> & { segmentSpans: Array<Record<string, unknown>> } }).timeline;
}

describe("a target's timeline", () => {
  it('holds the windows, every run, the verifications, the segments as spans and the breaks of the range', async () => {
    const line = await timeline(`(from: "${iso(0)}", to: "${iso(120)}", maxSpans: 12)`);
    const seqs = (await c.h.runtime.db.segment.findMany({ where: { missing: false }, orderBy: { startLsn: 'asc' }, select: { seq: true } })).map((s) => Number(s.seq));
    expect(line).toEqual({
      from: iso(0), to: iso(120),
      windows: [{ from: iso(1), to: iso(30) }, { from: iso(61), to: iso(86) }],
      backups: [
        { id: FULL_1, time: iso(1), completed: iso(1), phase: 'Succeeded', mode: 'physical', verified: false, verifyFailed: false, pinned: false, storedBytes: 3_000_000 },
        { id: FULL_2, time: iso(61), completed: iso(61), phase: 'Succeeded', mode: 'physical', verified: false, verifyFailed: false, pinned: false, storedBytes: 3_000_000 },
        { id: FAILED, time: iso(91), completed: null, phase: 'Failed', mode: 'logical', verified: false, verifyFailed: false, pinned: false, storedBytes: 0 },
      ],
      verifications: [
        { backupID: FULL_1, restore: 'pg-pitr-verify-1', at: iso(40), passed: true, rtoSeconds: 300, message: 'restored and checked' },
        { backupID: FULL_2, restore: 'pg-pitr-verify-2', at: iso(95), passed: false, rtoSeconds: 180, message: 'checks failed' },
      ],
      // A 10-minute step: segments 1–3 touch each other, 5–7 too, and 14 minutes pass between 7 (covered to 86) and 9.
      segmentSpans: [
        { firstTime: iso(0), lastTime: iso(30), segments: 3, commits: 30, bytes: 1001 + 1002 + 1003, partial: false, firstSeq: seqs[0], lastSeq: seqs[2] },
        { firstTime: iso(60), lastTime: iso(86), segments: 3, commits: 30, bytes: 1005 + 1006 + 1007, partial: true, firstSeq: seqs[3], lastSeq: seqs[5] },
        { firstTime: iso(100), lastTime: iso(110), segments: 1, commits: 10, bytes: 1009, partial: false, firstSeq: seqs[6], lastSeq: seqs[6] },
      ],
      breaks: [
        { kind: 'gap', from: iso(30), to: iso(60), reason: `the segments between ${SEGMENT(3)} and ${SEGMENT(5)} are not in the store` },
        { kind: 'gap', from: iso(86), to: iso(100), reason: `${SEGMENT(7)} is in the store only as a partial upload: the rest of that file is missing before ${SEGMENT(9)}` },
        { kind: 'chain', from: iso(86), to: null, reason: `the segment after ${SEGMENT(7)} is missing from the store; restores before ${iso(86)} still work` },
      ],
    });
  });

  it('merges more as fewer spans are asked for, and never answers more spans than maxSpans', async () => {
    const spans = async (maxSpans: number) => (await timeline(`(from: "${iso(0)}", to: "${iso(120)}", maxSpans: ${maxSpans})`)).segmentSpans;
    // 20-minute step: the 14 minutes before segment 9 merge, the 30-minute hole after segment 3 does not.
    expect((await spans(6)).map((s) => [s.firstTime, s.lastTime, s.segments, s.partial])).toEqual([[iso(0), iso(30), 3, false], [iso(60), iso(110), 4, true]]);
    expect((await spans(1)).map((s) => [s.firstTime, s.lastTime, s.segments, s.commits, s.partial])).toEqual([[iso(0), iso(110), 7, 70, true]]);
    for (const maxSpans of [1, 2, 3, 4, 5]) expect((await spans(maxSpans)).length).toBeLessThanOrEqual(maxSpans);
  });

  it('answers spans read again from what the segments are now: a segment written in between counts at once', async () => {
    const db = c.h.runtime.db;
    const counts = async (args: string) => (await timeline(args)).segmentSpans.map((s) => s.segments);
    const range = `(from: "${iso(0)}", to: "${iso(120)}", maxSpans: 1)`;
    expect(await counts(range)).toEqual([7]);
    expect(await counts('(maxSpans: 1)')).toEqual([7]);
    const first = await db.segment.findFirstOrThrow({ where: { missing: false }, orderBy: { startLsn: 'asc' } });
    try {
      await db.segment.update({ where: { seq: first.seq }, data: { missing: true } });
      expect(await counts(range)).toEqual([6]);
      expect(await counts('(maxSpans: 1)')).toEqual([6]);
    } finally {
      await db.segment.update({ where: { seq: first.seq }, data: { missing: false } });
    }
    expect(await counts(range)).toEqual([7]);
  });

  it('keeps to the range: a zoom on one hour shows what overlaps it', async () => {
    const line = await timeline(`(from: "${iso(65)}", to: "${iso(95)}")`);
    expect(line.windows).toEqual([{ from: iso(61), to: iso(86) }]);
    expect((line.backups as Array<{ id: string }>).map((b) => b.id)).toEqual([FAILED]);
    expect((line.verifications as Array<{ restore: string }>).map((v) => v.restore)).toEqual(['pg-pitr-verify-2']);
    expect(line.segmentSpans.map((s) => [s.firstTime, s.lastTime, s.segments])).toEqual([[iso(60), iso(86), 3]]);
    expect((line.breaks as Array<{ kind: string; from: string }>).map((b) => [b.kind, b.from])).toEqual([['gap', iso(86)], ['chain', iso(86)]]);
  });

  it("places a run where its manifest says as it is now: a manifest written again moves it and changes its mode", async () => {
    const db = c.h.runtime.db;
    const runOf = async () => ((await timeline(`(from: "${iso(0)}", to: "${iso(120)}")`)).backups as Array<{ id: string; time: string; mode: string }>).find((b) => b.id === FAILED);
    try {
      await db.backup.update({ where: { id: FAILED }, data: { manifest: { mode: 'physical', consistentAt: iso(92) } } });
      expect(await runOf()).toMatchObject({ time: iso(92), mode: 'physical' });
      await db.backup.update({ where: { id: FAILED }, data: { manifest: { mode: 'logical', consistentAt: iso(93) } } });
      expect(await runOf()).toMatchObject({ time: iso(93), mode: 'logical' });
    } finally {
      // As seeded: a failed run without a manifest.
      await db.backup.update({ where: { id: FAILED }, data: { manifest: Prisma.DbNull } });
    }
    expect(await runOf()).toMatchObject({ time: iso(91), mode: 'logical' });
  });

  it('runs from the oldest run or window to now without a range', async () => {
    const line = await timeline('');
    expect([line.from, line.to]).toEqual([iso(1), iso(200)]);
  });

  it('refuses a range that ends before it starts, an unreadable time and maxSpans out of bounds', async () => {
    for (const args of [`(from: "${iso(50)}", to: "${iso(40)}")`, '(from: "yesterday")', '(maxSpans: 0)', '(maxSpans: 5001)']) {
      const body = await graph(VIEWER, `{ strataTarget(namespace: "default", name: "${PITR.name}") { timeline${args} { from } } }`);
      expect(body.errors?.[0]?.extensions.code, args).toBe('BAD_USER_INPUT');
    }
  });
});

describe("a target's segments", () => {
  it('lists those overlapping a range in upload order, the lost one too, at most limit, as GET .../segments shows them', async () => {
    const body = await graph(VIEWER, `{ strataTarget(namespace: "default", name: "${PITR.name}") {
      zoom: segments(from: "${iso(15)}", to: "${iso(75)}") { seq name timeline chainID startPos endPos firstTime lastTime commits size rawSize partial uploadedAt explanation }
      first: segments(limit: 2) { name } } }`);
    expect(body.errors).toBeUndefined();
    const { zoom, first } = body.data?.strataTarget as { zoom: Array<Record<string, unknown>>; first: Array<{ name: string }> };
    expect(zoom.map((s) => s.name)).toEqual([SEGMENT(2), SEGMENT(3), SEGMENT(4), SEGMENT(5), SEGMENT(6)]);
    expect(zoom[2]?.explanation).toBe('the object is missing from the store');
    const rest = await c.h.call('viewer', 'get', `/api/v1/targets/default/${PITR.name}/segments`);
    const listed = (rest.body.segments as Array<Record<string, unknown>>).find((s) => s.name === SEGMENT(2));
    expect(zoom[0]).toEqual({
      seq: listed?.seq, name: SEGMENT(2), timeline: 1, chainID: listed?.chainID, startPos: listed?.startPos, endPos: listed?.endPos, firstTime: iso(10), lastTime: iso(20),
      commits: 10, size: 1002, rawSize: Number(16n * 1024n * 1024n), partial: false, uploadedAt: iso(21), explanation: null,
    });
    expect(first.map((s) => s.name)).toEqual([SEGMENT(1), SEGMENT(2)]);
  });

  it('refuses a limit above 1000', async () => {
    const body = await graph(VIEWER, `{ strataTarget(namespace: "default", name: "${PITR.name}") { segments(limit: 1001) { name } } }`);
    expect(body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
  });
});

describe('the Target entity and scoping', () => {
  it('resolves a Target reference with its new fields', async () => {
    const body = await graph(VIEWER, 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Target { name gaps chainBrokenReason conditions { type } timeline(from: "2026-03-01T00:00:00Z", to: "2026-03-01T02:00:00Z", maxSpans: 1) { segmentSpans { segments } } } } }', {
      r: [{ __typename: 'Target', ...PITR }, { __typename: 'Target', namespace: 'default', name: 'nope' }],
    });
    expect(body.errors).toBeUndefined();
    expect(body.data?._entities).toEqual([{ name: PITR.name, gaps: 2, chainBrokenReason: expect.stringContaining(SEGMENT(7)), conditions: expect.arrayContaining([{ type: 'Ready' }]), timeline: { segmentSpans: [{ segments: 7 }] } }, null]);
  });

  it("hides another org's target with its timeline, and shows a project member its own", async () => {
    const hidden = await graph(OTHER_ORG, `query($r: [_Any!]!) { strataTargets { name } strataTarget(namespace: "default", name: "${PITR.name}") { timeline { from } segments { name } } _entities(representations: $r) { ... on Target { name } } }`, { r: [{ __typename: 'Target', ...PITR }] });
    expect(hidden.errors).toBeUndefined();
    expect(hidden.data).toEqual({ strataTargets: [{ name: 'pg-other' }], strataTarget: null, _entities: [null] });
    const member = await graph(ACME_SHOP, '{ strataTargets { name segmentCount } }');
    expect(member.data).toEqual({ strataTargets: [{ name: PITR.name, segmentCount: SEGMENTS.length }] });
  });

  it('answers UNAUTHENTICATED without a principal', async () => {
    const body = await graph(undefined, `query($r: [_Any!]!) { _entities(representations: $r) { ... on Target { timeline { from } } } }`, { r: [{ __typename: 'Target', ...PITR }] });
    expect(body.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
  });
});
