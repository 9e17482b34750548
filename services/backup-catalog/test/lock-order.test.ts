import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nightlyPostgresTargets, startOfflineCatalog, until, type CatalogHarness } from './helpers.ts';

/**
 * Every writer takes a target's row lock before the catalog version's. A report handler does (status, then version),
 * and so does `backup-now`; the scheduler's pass must too, for every target it passes over, or the two wait on each
 * other in a circle and Postgres aborts one of them. With two targets due, the pass queues billing's run first: had
 * queueing bumped the version then, the pass would hold the version while it waits for orders' row (the CI failure of
 * 82d2672: `strata backup-now` answered 500 while the pass a pin had kicked was running).
 */
let h: CatalogHarness;

beforeAll(async () => {
  h = await startOfflineCatalog('lockorder', nightlyPostgresTargets(['billing', 'orders']));
});
afterAll(async () => h?.close());

/** Backends of the test's database other than `client`'s, in a transaction or running a statement. */
async function othersBusy(client: pg.Client): Promise<number> {
  const { rows } = await client.query(
    `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')`,
  );
  return Number(rows[0].n);
}

/** Backends waiting for a lock `client`'s transaction holds. */
async function waitingForTarget(client: pg.Client): Promise<number> {
  const { rows } = await client.query(
    `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
       AND pg_backend_pid() = ANY(pg_blocking_pids(pid))`,
  );
  return Number(rows[0].n);
}

describe('lock order', () => {
  it('a pass that queued one target\'s run waits for a writer holding the next target, and neither is aborted as a deadlock', async () => {
    const writer = new pg.Client({ connectionString: h.databaseUrl });
    await writer.connect();
    try {
      // The pass the apply kicked at start-up is over: the pass below is the only one.
      await until(() => othersBusy(writer), (busy) => busy === 0);
      // The writer holds orders' row, as a report handler does while it updates the status.
      await writer.query('BEGIN');
      await writer.query(`SELECT 1 FROM resources WHERE kind = 'BackupTarget' AND namespace = 'default' AND name = 'orders' FOR UPDATE`);
      const slot = new Date(Date.now() + 2 * 86_400_000);
      slot.setUTCHours(3, 1, 0, 0); // a minute after a 03:00 UTC slot: both runs are due
      h.setNow(slot);
      const pass = h.runtime.tick();
      pass.catch(() => {});
      // The pass has queued billing's run and now waits for orders' row.
      await until(() => waitingForTarget(writer), (waiting) => waiting > 0);
      // Then the writer bumps the catalog version, as a report handler does last.
      await writer.query('UPDATE catalog_state SET version = version + 1 WHERE id = 1');
      await writer.query('COMMIT');
      await pass;
    } finally {
      await writer.end();
      h.setNow(new Date());
    }
    const scheduled = await h.runtime.db.backup.findMany({ where: { reason: 'scheduled' }, select: { targetName: true } });
    expect(scheduled.map((b) => b.targetName).sort()).toEqual(['billing', 'orders']);
  });
});
