import type { Principal } from '@sigil/kit/auth';
import { AppError, notFound } from '@sigil/kit/errors';
import { newId } from '@sigil/kit/ids';
import { decodeCursor, toPage } from '@sigil/kit/pagination';
import type { components } from '@sigil/proto/api/sigil';
import type { Db } from './db.ts';
import { visibleTo, type EndpointService } from './endpoints.ts';
import { queueDeliveries } from './fanout.ts';
import type { WebhookAttempt } from './generated/prisma/client.ts';

export type DeliveryView = ReturnType<typeof toDeliveryView>;

type WebhookDelivery = components['schemas']['WebhookDelivery'];

/** One attempt as `GET .../deliveries` lists it (the contract's WebhookDelivery); `status` is the delivery's state after the attempt. */
export function toDeliveryView(row: WebhookAttempt) {
  return {
    id: row.id,
    object: 'webhook_delivery' as const,
    eventId: row.eventId,
    // Stored as text; only the webhook events the contract lists are delivered.
    eventType: row.eventType as WebhookDelivery['eventType'],
    attempt: row.attempt,
    status: row.status as NonNullable<WebhookDelivery['status']>,
    statusCode: row.statusCode,
    error: row.error,
    durationMs: row.durationMs,
    attemptedAt: row.attemptedAt.toISOString(),
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    createdAt: row.attemptedAt.toISOString(),
  } satisfies WebhookDelivery;
}

export type DeliveryService = ReturnType<typeof createDeliveryService>;

export function createDeliveryService(deps: { db: Db; endpoints: EndpointService; clock: () => Date; wake: () => void }) {
  const { db } = deps;
  return {
    /** Recent attempts of an endpoint, newest first, optionally of one event. */
    async list(principal: Principal, endpointId: string, input: { limit: number; cursor?: string; event?: string }) {
      const endpoint = await deps.endpoints.requireEndpoint(principal, endpointId);
      const [at, id] = input.cursor ? (decodeCursor(input.cursor, 2) as [string, string]) : [];
      const rows = await db.webhookAttempt.findMany({
        where: {
          endpointId: endpoint.id,
          ...(input.event ? { eventId: input.event } : {}),
          ...(at ? { OR: [{ attemptedAt: { lt: new Date(at) } }, { attemptedAt: new Date(at), id: { lt: id } }] } : {}),
        },
        orderBy: [{ attemptedAt: 'desc' }, { id: 'desc' }],
        take: input.limit + 1,
      });
      return toPage(rows, input.limit, toDeliveryView, (row) => [row.attemptedAt.toISOString(), row.id]);
    },

    /** A `webhook.test` event to this endpoint alone (paused or not: a test is asked for). */
    async test(principal: Principal, endpointId: string) {
      const endpoint = await deps.endpoints.requireEndpoint(principal, endpointId);
      const now = deps.clock();
      const eventId = newId('evt');
      const body = JSON.stringify({ id: eventId, type: 'webhook.test', createdAt: now.toISOString(), testMode: endpoint.testMode, data: { endpoint: endpoint.id } });
      await db.$transaction(async (tx) => {
        await tx.webhookEvent.create({ data: { id: eventId, organizationId: endpoint.organizationId, testMode: endpoint.testMode, type: 'webhook.test', body, createdAt: now } });
        await queueDeliveries(tx, [endpoint.id], { id: eventId, type: 'webhook.test' }, now);
      });
      deps.wake();
      return { object: 'webhook_delivery_queued' as const, eventId, endpointId: endpoint.id, endpointIds: [endpoint.id] };
    },

    /** The event again, with its own id and body, to one endpoint or to every endpoint subscribed to it now. */
    async redeliver(principal: Principal, eventId: string, input: { endpoint?: string }) {
      const event = await db.webhookEvent.findFirst({ where: { id: eventId, ...visibleTo(principal) } });
      if (!event) throw notFound(`Event ${eventId}`);
      let targets: string[];
      if (input.endpoint) {
        const endpoint = await deps.endpoints.requireEndpoint(principal, input.endpoint);
        if (endpoint.testMode !== event.testMode) throw new AppError('validation-failed', 'The endpoint is of another mode than the event.', { errors: [{ pointer: '/body/endpoint', detail: 'is of another mode than the event' }] });
        targets = [endpoint.id];
      } else {
        const subscribed = await db.webhookEndpoint.findMany({ where: { organizationId: event.organizationId, testMode: event.testMode, enabled: true, OR: [{ events: { isEmpty: true } }, { events: { has: event.type } }] }, select: { id: true } });
        targets = subscribed.map((e) => e.id);
        if (targets.length === 0) throw new AppError('conflict', `No enabled endpoint is subscribed to ${event.type}.`);
      }
      await queueDeliveries(db, targets, { id: event.id, type: event.type }, deps.clock());
      deps.wake();
      return { object: 'webhook_delivery_queued' as const, eventId: event.id, endpointId: targets[0] as string, endpointIds: targets };
    },
  };
}
