import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nightlyPostgresTargets, startOfflineCatalog, until, type CatalogHarness } from './helpers.ts';

/**
 * Every writer takes a target's row lock before the catalog version's. A report handler does (status, then version);
 * the scheduler's pass must too, or the two wait on each other in a circle and Postgres aborts one of them.
 */
let h: CatalogHarness;

beforeAll(async () => {
  h = await startOfflineCatalog('lockorder', nightlyPostgresTargets(['orders']));
});
afterAll(async () => h?.close());

describe('lock order', () => {
  it('a scheduled run waits for a writer holding the target, and neither is aborted as a deadlock', async () => {
    const writer = new pg.Client({ connectionString: h.databaseUrl });
    await writer.connect();
    try {
      // The writer holds the target's row, as a report handler does while it updates the status.
      await writer.query('BEGIN');
      await writer.query(`SELECT 1 FROM resources WHERE kind = 'BackupTarget' AND namespace = 'default' AND name = 'orders' FOR UPDATE`);
      const slot = new Date(Date.now() + 2 * 86_400_000);
      slot.setUTCHours(3, 1, 0, 0); // a minute after a 03:00 UTC slot: the run is due
      h.setNow(slot);
      const pass = h.runtime.tick();
      pass.catch(() => {});
      // The pass is now waiting on the target's row.
      await until(
        async () => Number((await writer.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows[0].n),
        (waiting) => waiting > 0,
      );
      // Then the writer bumps the catalog version, as a report handler does last.
      await writer.query('UPDATE catalog_state SET version = version + 1 WHERE id = 1');
      await writer.query('COMMIT');
      await pass;
    } finally {
      await writer.end();
      h.setNow(new Date());
    }
    const scheduled = await h.runtime.db.backup.findMany({ where: { targetName: 'orders', reason: 'scheduled' } });
    expect(scheduled).toHaveLength(1);
  });
});
