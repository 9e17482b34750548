import { validateEvent, type DomainEvent } from '@sigil/proto/events';
import type { Logger } from '../log.ts';
import type { SqlClient, TransactionalSqlClient } from '../db/sql.ts';
import type { Bus, RunningConsumer } from './types.ts';

export interface IdempotentConsumerOptions<E extends { id: string }, Tx extends SqlClient> {
  bus: Bus;
  stream: string;
  /** Durable name: one per logical consumer; replicas with the same name share the work. */
  durable: string;
  filterSubjects: string[];
  db: TransactionalSqlClient<Tx>;
  log: Logger;
  /** Checks a message against its contract; a throw terminates it (logged). */
  decode: (payload: unknown, subject: string) => E;
  /** Runs inside the transaction that records the message as processed. */
  handle: (event: E, tx: Tx) => Promise<void>;
  maxDeliver?: number;
  ackWaitMs?: number;
  retryDelaysMs?: readonly number[];
  startAt?: 'all' | 'new';
  /** Messages handled at once (default 1): each in its own transaction. */
  concurrency?: number;
}

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
  retryDelaysMs?: readonly number[];
  startAt?: 'all' | 'new';
  /** Messages handled at once (default 1): each in its own transaction. */
  concurrency?: number;
}

export type { RunningConsumer };

/** The bus's ack wait when a consumer names none (nats.ts). */
const DEFAULT_ACK_WAIT_MS = 30_000;

/**
 * A durable consumer of domain events whose effects are idempotent: the event id is recorded in
 * `processed_messages` in the same transaction as the handler's writes, so a redelivery after a crash is skipped.
 * Events are checked against their schema first; one that does not match is terminated and logged.
 */
export function startConsumer<Tx extends SqlClient>(options: ConsumerOptions<Tx>): Promise<RunningConsumer> {
  return startIdempotentConsumer<DomainEvent, Tx>({ ...options, decode: decodeDomainEvent });
}

/** The same for any message that carries an `id` (Strata's reports, say), checked by `decode`. */
export async function startIdempotentConsumer<E extends { id: string }, Tx extends SqlClient>(options: IdempotentConsumerOptions<E, Tx>): Promise<RunningConsumer> {
  const { db, durable, handle } = options;
  return options.bus.consume<E>({
    stream: options.stream,
    durable,
    subjects: options.filterSubjects,
    log: options.log,
    maxDeliver: options.maxDeliver,
    ackWaitMs: options.ackWaitMs,
    retryDelaysMs: options.retryDelaysMs,
    startAt: options.startAt,
    concurrency: options.concurrency,
    decode: options.decode,
    handle: async ({ data: event }) => {
      // The handler may send what cannot be taken back (an e-mail) before its records commit: the transaction gets the
      // time the broker gives the message (Prisma's default, 5 s, ran out under load and the e-mail went out twice).
      await db.$transaction(async (tx) => {
        // The logical durable name: idempotency spans all of the consumer's subjects.
        const fresh = await tx.$executeRawUnsafe(
          `INSERT INTO processed_messages (consumer, message_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
          durable,
          event.id,
        );
        if (fresh === 1) await handle(event, tx);
      }, { timeout: options.ackWaitMs ?? DEFAULT_ACK_WAIT_MS });
    },
  });
}

/** A domain event as it came off the wire, checked against the envelope and its type's payload schema. */
export function decodeDomainEvent(payload: unknown): DomainEvent {
  const result = validateEvent(payload);
  if (!result.ok) throw new Error(`not a valid domain event: ${result.errors.join('; ')}`);
  return payload as DomainEvent;
}
