import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordSegment } from '../src/change-capture/segments.ts';
import { nightlyPostgresTargets, startOfflineCatalog, type CatalogHarness } from './helpers.ts';

/** No mover runs here: the test plays the mover and records the segments it would report, with their summaries. */
let h: CatalogHarness;

beforeAll(async () => {
  h = await startOfflineCatalog('segment_summaries', nightlyPostgresTargets(['main']));
});
afterAll(async () => h?.close());

const chainID = '7312345678901234567-1';
function report(name: string, start: string, end: string, partial: boolean, extra: Record<string, unknown>) {
  return {
    streamId: 'st_1', namespace: 'default', name: 'main',
    segment: {
      chainID, timeline: 1, name, startPos: start, endPos: end, key: `default/main/wal/${chainID}/${name}${partial ? `.partial.${end}` : ''}.zst.age`,
      commits: 2, sha256: 'b'.repeat(64), size: 100, rawSize: 16_777_216, partial, compression: 'zstd' as const,
      firstTime: new Date(Date.now() - 60_000).toISOString(), lastTime: new Date(Date.now() - 30_000).toISOString(), uploadedAt: new Date().toISOString(), ...extra,
    },
  };
}

describe('segment summaries in the catalog', () => {
  it('keeps the summary with the segment, says when there is none, and totals a range by each file\'s newest upload', async () => {
    const record = (data: ReturnType<typeof report>) => h.runtime.db.$transaction((tx) => recordSegment(h.runtime.deps, tx, data));
    const orders = (inserts: number) => ({ 'shop.public.orders': { inserts, updates: 5, deletes: 2, truncates: 0 } });
    await record(report('000000010000000000000003', '0/3000000', '0/3004C18', true, { summary: { tables: orders(1), ddl: [], schemaChanges: 1, explanation: 'schema changed in 1 transaction; 5 updates to shop.orders; …' } }));
    await record(report('000000010000000000000003', '0/3000000', '0/301B348', true, { summary: { tables: orders(12), ddl: [], schemaChanges: 2, explanation: 'schema changed in 2 transactions; 12 inserts into shop.orders; 5 updates to shop.orders; 2 deletes from shop.orders' } }));
    await record(report('000000010000000000000004', '0/4000000', '0/4000100', true, { summaryError: 'the change summary could not be made: connection refused' }));

    const listed = (await h.call('viewer', 'get', '/api/v1/targets/default/main/segments')).body.segments;
    expect(listed).toHaveLength(3);
    expect(listed[2]).toMatchObject({ tables: {}, ddl: [], summaryError: 'the change summary could not be made: connection refused', explanation: 'no change summary' });

    const res = await h.call('viewer', 'get', '/api/v1/targets/default/main/changes?since=1h');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.tables).toEqual(orders(12));
    expect(res.body.segments.map((s: { endPos: string }) => s.endPos)).toEqual(['0/301B348', '0/4000100']);
    expect(res.body.segments[0]).toMatchObject({ target: 'default/main', commits: 2, tables: orders(12), ddl: [], schemaChanges: 2, explanation: expect.stringMatching(/^schema changed in 2 transactions; 12 inserts/) });
    expect(res.body.segments[0].summaryError).toBeUndefined();

    const before = await h.call('viewer', 'get', `/api/v1/targets/default/main/changes?since=${new Date(Date.now() - 7_200_000).toISOString()}&until=${new Date(Date.now() - 3_600_000).toISOString()}`);
    expect(before.body).toMatchObject({ tables: {}, segments: [] });
  });
});
