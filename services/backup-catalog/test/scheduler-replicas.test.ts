import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nightlyPostgresTargets, startCatalogHarness, startOfflineCatalog, type CatalogHarness } from './helpers.ts';

/**
 * Two replicas of the catalog on one database (one consumer cell, as two pods of one deployment) run their scheduler
 * passes at the same moment: each due slot queues one run per target, never two (the pass runs under an advisory
 * lock, and the slot it queued is recorded in the same transaction).
 */
let first: CatalogHarness;
let second: CatalogHarness;

beforeAll(async () => {
  first = await startOfflineCatalog('sched_replicas', nightlyPostgresTargets(['orders', 'billing', 'ledger']));
  second = await startCatalogHarness('sched_replicas_second', { databaseUrl: first.databaseUrl, cell: first.cell, secretsKey: first.secretsKey });
}, 60_000);
afterAll(async () => {
  await second?.close();
  await first?.close();
});

describe('the scheduler on two replicas', () => {
  it('queues a due slot once per target when both replicas pass at the same moment, again and again', async () => {
    const slot = new Date(Date.now() + 2 * 86_400_000);
    slot.setUTCHours(3, 1, 0, 0); // a minute after a 03:00 UTC slot: the runs are due
    first.setNow(slot);
    second.setNow(slot);
    for (let round = 0; round < 5; round++) await Promise.all([first.runtime.tick(), second.runtime.tick()]);

    const scheduled = await first.runtime.db.backup.findMany({ where: { reason: 'scheduled' }, select: { targetName: true } });
    expect(scheduled.map((b) => b.targetName).sort()).toEqual(['billing', 'ledger', 'orders']);
    // A second pass over the same slot would not queue again (a run is already queued), but it would say so on the
    // target: every target's condition is the queued run's.
    for (const name of ['billing', 'ledger', 'orders']) {
      const target = await first.call('viewer', 'get', `/api/v1/resources/BackupTarget/default/${name}`);
      const condition = (target.body.status.conditions as Array<{ type: string; reason: string }>).find((c) => c.type === 'Scheduled');
      expect(condition, JSON.stringify(target.body.status)).toMatchObject({ reason: 'RunQueued' });
    }
  });
});
