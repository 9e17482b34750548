import { startConsumer, type Bus, type RunningConsumer } from '@sigil/kit/bus';
import { newId } from '@sigil/kit/ids';
import type { Logger } from '@sigil/kit/log';
import { EVENTS_STREAM, eventSubject, type DomainEvent } from '@sigil/proto/events';
import type { Db, Tx } from './db.ts';
import { DELIVERED_EVENTS, webhookBody } from './events.ts';

/** The Postgres channel that wakes the delivery workers of every replica when deliveries are due. */
export const DUE_CHANNEL = 'webhook_deliveries_due';

/**
 * Keeps the event as delivered and queues one delivery per subscribed endpoint of its organization and mode, in the
 * transaction that marks the event handled: exactly one set of deliveries per event, however often it arrives.
 * Endpoints registered after the event happened do not get it (a lagging consumer does not replay history to them).
 */
export async function fanOut(event: DomainEvent, tx: Tx, at: Date): Promise<number> {
  const { type, testMode, body } = webhookBody(event);
  await tx.$executeRawUnsafe(
    'INSERT INTO webhook_events (id, organization_id, test_mode, type, body, created_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING',
    event.id,
    event.organizationId,
    testMode,
    type,
    body,
    new Date(event.occurredAt),
  );
  const endpoints = await tx.$queryRawUnsafe<Array<{ id: string }>>(
    'SELECT id FROM webhook_endpoints WHERE organization_id = $1 AND test_mode = $2 AND enabled AND (cardinality(events) = 0 OR $3 = ANY(events)) AND created_at <= $4',
    event.organizationId,
    testMode,
    type,
    new Date(event.occurredAt),
  );
  if (endpoints.length === 0) return 0;
  await queueDeliveries(tx, endpoints.map((e) => e.id), { id: event.id, type }, at);
  return endpoints.length;
}

/** Deliveries due now, and a wake-up for the workers when the transaction commits. */
export async function queueDeliveries(tx: Tx | Db, endpointIds: string[], event: { id: string; type: string }, at: Date): Promise<void> {
  await tx.$executeRawUnsafe(
    "INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, status, next_attempt_at, created_at) SELECT unnest($1::text[]), unnest($2::text[]), $3, $4, 'pending', $5, $5",
    endpointIds.map(() => newId('wdq')),
    endpointIds,
    event.id,
    event.type,
    at,
  );
  await tx.$executeRawUnsafe(`SELECT pg_notify('${DUE_CHANNEL}', '')`);
}

export function startFanOut(bus: Bus, deps: { db: Db; log: Logger; clock: () => Date; prefix?: string }): Promise<RunningConsumer> {
  return startConsumer<Tx>({
    bus,
    stream: EVENTS_STREAM,
    durable: `${deps.prefix ?? ''}webhooks-fanout`,
    filterSubjects: DELIVERED_EVENTS.map((type) => eventSubject(type)),
    db: deps.db,
    log: deps.log,
    // Fan-out is a short transaction: a message a crashed replica held comes back after 10 s, not the default 30.
    ackWaitMs: 10_000,
    // A new deployment starts with the events published from then on: no endpoint existed before it to receive them.
    startAt: 'new',
    handle: async (event, tx) => void (await fanOut(event, tx, deps.clock())),
  });
}
