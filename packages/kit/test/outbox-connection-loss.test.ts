import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startOutboxRelay, type OutboxRelay } from '../src/bus/outbox.ts';
import { capturingLogger, deferred, freshTestDatabase } from '../src/testing.ts';

/**
 * The relay holds a pooled connection in a transaction while JetStream acknowledges a batch. When Postgres ends that
 * connection then (a restart, an administrator's pg_terminate_backend), the process goes on: the batch fails, the
 * broken connection is discarded, and the next pass publishes the row again (JetStream drops the duplicate by its
 * Nats-Msg-Id). Before the fix, the connection's error event had no listener and ended the process (the faults test's
 * CI run lost envelopes and signing this way while Postgres restarted).
 */
const MIGRATIONS = path.join(import.meta.dirname, '../../../prisma/signing/migrations');
let databaseUrl: string;
let admin: pg.Client;
let relay: OutboxRelay | undefined;

beforeAll(async () => {
  databaseUrl = await freshTestDatabase('kit_outbox_loss', MIGRATIONS);
  admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
});
afterAll(async () => {
  await relay?.stop();
  await admin?.end();
});

it('survives its connection being ended while a batch waits on JetStream, and publishes the row on the next pass', async () => {
  await admin.query(`INSERT INTO outbox_events (id, subject, payload) VALUES ('evt_loss_1', 'sigil.events.test', '{}'::jsonb)`);
  const firstPublish = deferred();
  const letFirstFinish = deferred();
  const published: string[] = [];
  const { log, text } = capturingLogger();
  relay = await startOutboxRelay({
    databaseUrl,
    log,
    pollIntervalMs: 100,
    bus: {
      async publish(_subject, _payload, options) {
        published.push(options?.msgId ?? '');
        if (published.length === 1) {
          firstPublish.resolve();
          await letFirstFinish.promise;
        }
      },
    },
  });
  await firstPublish.promise;
  // The batch's connection is idle in its transaction (the row locked); every other connection of the relay is idle.
  const { rows } = await admin.query(`SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction' AND pid <> pg_backend_pid()`);
  expect(rows).toHaveLength(1);
  letFirstFinish.resolve();

  for (let tries = 0; tries < 100; tries++) {
    const row = await admin.query<{ published_at: Date | null }>(`SELECT published_at FROM outbox_events WHERE id = 'evt_loss_1'`);
    if (row.rows[0]?.published_at) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const row = await admin.query<{ published_at: Date | null }>(`SELECT published_at FROM outbox_events WHERE id = 'evt_loss_1'`);
  expect(row.rows[0]?.published_at, text()).toBeInstanceOf(Date);
  expect(published, 'published again after the lost batch').toEqual(['evt_loss_1', 'evt_loss_1']);
  expect(text()).toContain('database connection lost mid-batch');
});
