import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nightlyPostgresTargets, startOfflineCatalog, type CatalogHarness } from './helpers.ts';

/**
 * `backup-now` commits the queued run, then starts what the limits allow. When that start fails (here the job cannot
 * be written: a trigger refuses it, as a database going away would), the request has still done what it asked: it
 * answers 202 with the run, which stays Queued until the scheduler's next pass starts it. Before, it answered 500 and
 * a second try was refused as a conflict with the run the first had queued.
 */
let h: CatalogHarness;

beforeAll(async () => {
  h = await startOfflineCatalog('nowdispatch', nightlyPostgresTargets(['orders']));
});
afterAll(async () => h?.close());

describe('backup-now when the dispatch after it fails', () => {
  it('answers 202 with the queued run, and the next scheduler pass starts it', async () => {
    await h.runtime.db.$executeRawUnsafe(`CREATE FUNCTION refuse_jobs() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'jobs refused by the test'; END $$`);
    await h.runtime.db.$executeRawUnsafe(`CREATE TRIGGER refuse_jobs BEFORE INSERT ON outbox_events FOR EACH ROW EXECUTE FUNCTION refuse_jobs()`);
    const res = await h.call('operator', 'post', '/api/v1/targets/default/orders/backup-now', { reason: 'before a release' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const queued = await h.runtime.db.backup.findMany({ where: { targetName: 'orders' } });
    expect(queued.map((b) => [b.name, b.phase])).toEqual([[res.body.name, 'Queued']]);

    await h.runtime.db.$executeRawUnsafe('DROP TRIGGER refuse_jobs ON outbox_events');
    await h.runtime.tick();
    const started = await h.runtime.db.backup.findUniqueOrThrow({ where: { id: queued[0]!.id } });
    expect(started.phase).toBe('Running');
  });
});
