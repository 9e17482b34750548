import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { DomainEvent } from '@sigil/proto';
import type { Bus } from './nats.ts';
import type { Logger } from '../log.ts';
import type { SqlClient, TransactionalSqlClient } from '../db/sql.ts';

export interface ConsumerOptions<Tx extends SqlClient> {
  bus: Bus;
  stream: string;
  /** Durable name: one per logical consumer; replicas with the same name share the work. */
  durable: string;
  filterSubjects: string[];
  db: TransactionalSqlClient<Tx>;
  log: Logger;
  /** Runs inside the transaction that records the message as processed. */
  handle: (event: DomainEvent, tx: Tx) => Promise<void>;
  maxDeliver?: number;
  ackWaitMs?: number;
}

export interface RunningConsumer {
  stop(): Promise<void>;
  /** Resolves when the consumer has no pending or unacknowledged messages (for tests and drains). */
  idle(timeoutMs?: number): Promise<void>;
}

const RETRY_DELAYS_MS = [1_000, 5_000, 30_000, 120_000, 600_000];

/**
 * A durable, explicitly acknowledged JetStream consumer whose effects are idempotent:
 * the message id is recorded in `processed_messages` in the same transaction as the handler's writes,
 * so a redelivery after a crash is skipped.
 */
export async function startConsumer<Tx extends SqlClient>(options: ConsumerOptions<Tx>): Promise<RunningConsumer> {
  // One durable per subject: multi-filter consumers need nats-server 2.10, Debian ships 2.9.
  const parts = await Promise.all(options.filterSubjects.map((subject) => startSubjectConsumer(options, subject)));
  return {
    async stop() {
      await Promise.all(parts.map((part) => part.stop()));
    },
    async idle(timeoutMs) {
      await Promise.all(parts.map((part) => part.idle(timeoutMs)));
    },
  };
}

export function durableNameFor(durable: string, subject: string): string {
  return `${durable}__${subject.replace(/[.*>]/g, '_')}`;
}

async function startSubjectConsumer<Tx extends SqlClient>(options: ConsumerOptions<Tx>, subject: string): Promise<RunningConsumer> {
  const { bus, stream, durable, db, log, handle, maxDeliver = 20, ackWaitMs = 30_000 } = options;
  const name = durableNameFor(durable, subject);
  const config = {
    durable_name: name,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: subject,
    max_deliver: maxDeliver,
    ack_wait: ackWaitMs * 1e6,
  };
  try {
    await bus.jsm.consumers.info(stream, name);
    await bus.jsm.consumers.update(stream, name, { max_deliver: maxDeliver, ack_wait: config.ack_wait });
  } catch {
    await bus.jsm.consumers.add(stream, config);
  }
  const consumer = await bus.js.consumers.get(stream, name);
  const messages: ConsumerMessages = await consumer.consume({ max_messages: 64 });

  const process = async (msg: JsMsg): Promise<void> => {
    let event: DomainEvent;
    try {
      event = msg.json<DomainEvent>();
    } catch (error) {
      log.error({ err: error, subject: msg.subject }, 'dropping undecodable message');
      msg.term('undecodable');
      return;
    }
    try {
      await db.$transaction(async (tx) => {
        // The logical durable name, not the per-subject one: idempotency spans all of the consumer's subjects.
        const fresh = await tx.$executeRawUnsafe(
          `INSERT INTO processed_messages (consumer, message_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
          durable,
          event.id,
        );
        if (fresh === 1) await handle(event, tx);
      });
      msg.ack();
    } catch (error) {
      const attempt = msg.info.deliveryCount;
      const delay = RETRY_DELAYS_MS[Math.min(attempt - 1, RETRY_DELAYS_MS.length - 1)];
      log.warn({ err: error, eventId: event.id, attempt }, 'event handler failed; will retry');
      msg.nak(delay);
    }
  };

  const loop = (async () => {
    for await (const msg of messages) await process(msg);
  })();

  return {
    async stop() {
      await messages.close();
      await loop.catch(() => undefined);
    },
    async idle(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const info = await bus.jsm.consumers.info(stream, name);
        if (info.num_pending === 0 && info.num_ack_pending === 0) return;
        if (Date.now() > deadline) throw new Error(`consumer ${name} still busy after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}
