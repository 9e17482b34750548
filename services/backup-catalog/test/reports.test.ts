import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strataEventSubject } from '@sigil/proto/strata-jobs';
import type { ConsoleEvent } from '../src/console/events.ts';
import { recordSegment } from '../src/change-capture/segments.ts';
import { nightlyPostgresTargets, startOfflineCatalog, until, type CatalogHarness } from './helpers.ts';

/** No mover runs here: the test plays the mover and sends its reports. */
let h: CatalogHarness;

beforeAll(async () => {
  h = await startOfflineCatalog('reports', nightlyPostgresTargets(['main', 'marker']));
});
afterAll(async () => h?.close());

describe("the mover's reports", () => {
  it('drops a report that does not match its schema: the run it names is left as it was', async () => {
    const running = async (targetName: string) => {
      expect((await h.call('operator', 'post', `/api/v1/targets/default/${targetName}/backup-now`, {})).status).toBe(202);
      return (await until(() => h.runtime.db.backup.findFirst({ where: { targetName } }), (row) => row?.phase === 'Running'))!;
    };
    const main = await running('main');
    const marker = await running('marker');
    const subject = strataEventSubject('backup.failed', h.cell);
    const finishedAt = new Date().toISOString();
    // Report ids are message ids: unique, or the stream's duplicate window drops them.
    const failed = (data: Record<string, unknown>) => {
      const id = randomUUID();
      return h.bus.publish(subject, { id, type: 'backup.failed', occurredAt: finishedAt, data }, { msgId: id });
    };
    // Would apply cleanly if it were not checked: one field more than proto/jobs/backup.failed.schema.json allows.
    await failed({ backupId: main.id, message: 'INVALID', finishedAt, exitCode: 1 });
    // The same consumer takes reports in order: once the marker's report is applied, the one before it was handled.
    await failed({ backupId: marker.id, message: 'pg_dump: could not connect', finishedAt });
    await until(() => h.runtime.db.backup.findUnique({ where: { id: marker.id } }), (row) => row?.phase === 'Failed');
    expect(await h.runtime.db.backup.findUnique({ where: { id: main.id } })).toMatchObject({ phase: 'Running', message: 'handed to a mover' });
  });

  it("records no partial upload whose report comes after its file's complete one (that object is gone)", async () => {
    const name = '000000010000000000000007';
    const segment = (partial: boolean) => ({
      chainID: '7312345678901234567-1', timeline: 1, name, startPos: '0/7000000', endPos: partial ? '0/7000400' : '0/8000000',
      key: `default/main/wal/00000001/${name}${partial ? '.partial.0-7000400' : ''}.zst.age`, firstTime: '2026-11-24T09:00:00.000Z', lastTime: '2026-11-24T09:00:59.000Z',
      commits: 3, sha256: 'a'.repeat(64), size: 100, rawSize: 16_777_216, partial, compression: 'zstd', uploadedAt: new Date().toISOString(),
    });
    const uploaded = (data: Record<string, unknown>) => {
      const id = randomUUID();
      return h.bus.publish(strataEventSubject('segment.uploaded', h.cell), { id, type: 'segment.uploaded', occurredAt: new Date().toISOString(), data }, { msgId: id });
    };
    await uploaded({ streamId: 'st_1', namespace: 'default', name: 'main', segment: segment(false) });
    await uploaded({ streamId: 'st_1', namespace: 'default', name: 'main', segment: segment(true) });
    // The same consumer takes reports in order: once the marker's segment is in, both reports above were handled.
    await uploaded({ streamId: 'st_2', namespace: 'default', name: 'marker', segment: { ...segment(false), key: 'default/marker/wal/x.zst.age' } });
    await until(() => h.runtime.db.segment.findFirst({ where: { targetName: 'marker' } }), (row) => row !== null);
    expect((await h.runtime.db.segment.findMany({ where: { targetName: 'main', name } })).map((row) => row.partial)).toEqual([false]);
  });

  it('takes the same upload reported again (a streamer that took over read the file again) as known: no write, no event', async () => {
    const events: ConsoleEvent[] = [];
    const deps = { ...h.runtime.deps, notify: (event: ConsoleEvent) => void events.push(event) };
    const name = '000000010000000000000009';
    const report = {
      streamId: 'st_1', namespace: 'default', name: 'main',
      segment: {
        chainID: '7312345678901234567-1', timeline: 1, name, startPos: '0/9000000', endPos: '0/A000000', key: `default/main/wal/7312345678901234567-1/${name}.zst.age`,
        commits: 1, sha256: 'b'.repeat(64), size: 100, rawSize: 16_777_216, partial: false, compression: 'zstd' as const, uploadedAt: new Date().toISOString(),
      },
    };
    const record = (data: typeof report) => h.runtime.db.$transaction((tx) => recordSegment(deps, tx, data));
    await record(report);
    expect(events.map((e) => e.message)).toEqual([expect.stringContaining(`segment ${name} uploaded`)]);
    await record({ ...report, streamId: 'st_2' });
    expect(events).toHaveLength(1);
    // Another upload under the same key (other bytes) is recorded.
    await record({ ...report, segment: { ...report.segment, sha256: 'c'.repeat(64), uploadedAt: new Date(Date.now() + 1000).toISOString() } });
    expect(events).toHaveLength(2);
    expect((await h.runtime.db.segment.findUnique({ where: { key: report.segment.key } }))?.sha256).toBe('c'.repeat(64));
  });
});
