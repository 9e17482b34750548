import type pg from 'pg';
import { createEvent, eventSubject, jobSubject, validateEvent, type DomainEvent, type EventPayloads, type EventType } from '@sigil/proto/events';
import type { Bus } from './types.ts';
import type { SqlClient } from '../db/sql.ts';
import { listenToChannel } from '../db/listen.ts';
import type { Logger } from '../log.ts';

const NOTIFY_CHANNEL = 'outbox_events';

export interface NewEvent<T extends EventType> {
  type: T;
  organizationId: string;
  data: EventPayloads[T];
}

/**
 * Records a domain event in the caller's transaction. It reaches JetStream after commit
 * through the relay; a rolled-back transaction publishes nothing.
 */
export async function enqueueEvent<T extends EventType>(tx: SqlClient, event: NewEvent<T>): Promise<DomainEvent<T>> {
  const full = createEvent(event.type, event.organizationId, event.data);
  // A payload that breaks its schema is a bug of the publisher: fail its transaction rather than every consumer.
  const check = validateEvent(full);
  if (!check.ok) throw new Error(`${event.type} does not match its schema: ${check.errors.join('; ')}`);
  await tx.$executeRawUnsafe(
    `INSERT INTO outbox_events (id, subject, payload) VALUES ($1, $2, $3::jsonb)`,
    full.id,
    eventSubject(event.type),
    JSON.stringify(full),
  );
  await tx.$executeRawUnsafe(`SELECT pg_notify('${NOTIFY_CHANNEL}', '')`);
  return full;
}

/**
 * Records a job (work that must survive a crash: render a PDF, deliver a webhook) in the caller's transaction, for the
 * jobs stream (`sigil.jobs.<name>`). `id` is the job's identity: the relay publishes it as `Nats-Msg-Id`, so a job
 * enqueued twice under one id runs once; the payload carries it as `id` for idempotent consumers.
 */
export async function enqueueJob(tx: SqlClient, job: { name: string; id: string; data: Record<string, unknown> }): Promise<void> {
  await tx.$executeRawUnsafe(
    `INSERT INTO outbox_events (id, subject, payload) VALUES ($1, $2, $3::jsonb) ON CONFLICT (id) DO NOTHING`,
    job.id,
    jobSubject(job.name),
    JSON.stringify({ ...job.data, id: job.id }),
  );
  await tx.$executeRawUnsafe(`SELECT pg_notify('${NOTIFY_CHANNEL}', '')`);
}

export interface OutboxRelayOptions {
  databaseUrl: string;
  /** Where rows go (a NATS or memory bus). */
  bus: Pick<Bus, 'publish'>;
  log: Logger;
  /** Fallback poll when no notification arrives (another replica's insert, a lost LISTEN). */
  pollIntervalMs?: number;
  batchSize?: number;
  /** Published rows are kept this long for inspection, then deleted. */
  retainPublishedHours?: number;
}

export interface OutboxRelay {
  /** Publishes everything pending now; resolves when the outbox is empty or a publish failed. */
  drain(): Promise<number>;
  stop(): Promise<void>;
}

interface OutboxRow {
  id: string;
  subject: string;
  payload: unknown;
}

/**
 * Moves committed outbox rows to JetStream. The event id is the Nats-Msg-Id, so a row published
 * twice (crash between publish and mark) is dropped by the stream's duplicate window.
 * Rows are locked with SKIP LOCKED so several replicas share the work.
 */
export async function startOutboxRelay(options: OutboxRelayOptions): Promise<OutboxRelay> {
  const { log, pollIntervalMs = 1000, batchSize = 100, retainPublishedHours = 72 } = options;
  const publish: Publish = (subject, payload, msgId) => options.bus.publish(subject, payload, { msgId });
  // Loaded here: processes that publish no events of their own (the gateway) never load the Postgres driver.
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 2 });
  // An idle connection the server closes (Postgres restarting) is an error event: without a listener it ends the process.
  pool.on('error', (error) => log.warn({ err: error }, 'outbox relay: idle database connection lost'));
  let stopped = false;
  let running: Promise<number> | undefined;
  let rerun = false;

  const drainOnce = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      const published = await publishBatch(pool, publish, batchSize, log);
      total += published;
      if (published < batchSize) return total;
    }
  };

  const drain = (): Promise<number> => {
    if (running) {
      rerun = true;
      return running;
    }
    running = (async () => {
      let total = 0;
      do {
        rerun = false;
        total += await drainOnce();
      } while (rerun && !stopped);
      return total;
    })().finally(() => {
      running = undefined;
    });
    return running;
  };

  const kick = () => {
    if (!stopped) drain().catch((error) => log.warn({ err: error }, 'outbox relay drain failed'));
  };

  // Re-made after the database restarts; the poll covers the notifications missed meanwhile.
  const listener = await listenToChannel(options.databaseUrl, NOTIFY_CHANNEL, kick, log);
  const poll = setInterval(kick, pollIntervalMs);
  const cleanup = setInterval(() => {
    pool
      .query(`DELETE FROM outbox_events WHERE published_at < now() - make_interval(hours => $1)`, [retainPublishedHours])
      .catch((error) => log.warn({ err: error }, 'outbox cleanup failed'));
  }, 60 * 60 * 1000);
  kick();

  return {
    drain,
    async stop() {
      stopped = true;
      clearInterval(poll);
      clearInterval(cleanup);
      await running?.catch(() => undefined);
      await listener.stop();
      await pool.end();
    },
  };
}

type Publish = (subject: string, payload: unknown, msgId: string) => Promise<void>;

async function publishBatch(pool: pg.Pool, publish: Publish, batchSize: number, log: Logger): Promise<number> {
  const client = await pool.connect();
  // A checked-out client has no pool listener: a connection the server ends while the batch waits on JetStream
  // (Postgres restarting) is an error event here, which would otherwise end the process. The batch then fails at its
  // next statement; its rows stay unpublished (or are published again, dropped as duplicates by their Nats-Msg-Id).
  let lost: Error | undefined;
  const onLost = (error: Error) => {
    lost = error;
    log.warn({ err: error }, 'outbox relay: database connection lost mid-batch');
  };
  client.on('error', onLost);
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<OutboxRow>(
      `SELECT id, subject, payload FROM outbox_events WHERE published_at IS NULL
       ORDER BY position LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [batchSize],
    );
    const published: string[] = [];
    for (const row of rows) {
      try {
        await publish(row.subject, row.payload, row.id);
        published.push(row.id);
      } catch (error) {
        log.warn({ err: error, eventId: row.id }, 'outbox publish failed; will retry');
        await client.query(`UPDATE outbox_events SET attempts = attempts + 1, last_error = $2 WHERE id = $1`, [row.id, String(error)]);
        break;
      }
    }
    if (published.length > 0) {
      await client.query(`UPDATE outbox_events SET published_at = now(), attempts = attempts + 1 WHERE id = ANY($1)`, [published]);
    }
    await client.query('COMMIT');
    return published.length === rows.length ? rows.length : published.length;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.removeListener('error', onLost);
    // A broken connection is discarded, not handed to the next batch.
    client.release(lost);
  }
}
