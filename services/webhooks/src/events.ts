import type { components } from '@sigil/proto/api/sigil';
import { EVENT_TYPES, type DomainEvent, type EventType } from '@sigil/proto/events';

/** The event types endpoints may subscribe to (spec part 6); `acceptance.created` is reserved and never sent. */
export const WEBHOOK_EVENT_TYPES = [
  'envelope.created',
  'envelope.ready',
  'recipient.sent',
  'recipient.viewed',
  'recipient.signed',
  'recipient.declined',
  'envelope.completed',
  'envelope.sealed',
  'envelope.declined',
  'envelope.voided',
  'envelope.expired',
  'signing_link.used',
  'webhook.test',
  'acceptance.created',
] as const satisfies readonly components['schemas']['WebhookEventType'][];

// Compile-time proof that the list holds every type the contract's WebhookEventType enum names.
type Unlisted = Exclude<components['schemas']['WebhookEventType'], (typeof WEBHOOK_EVENT_TYPES)[number]>;
const everyTypeListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyTypeListed;

/** The domain events that fan out to endpoints: the webhook types the platform publishes today. */
export const DELIVERED_EVENTS = WEBHOOK_EVENT_TYPES.filter((type): type is EventType & (typeof WEBHOOK_EVENT_TYPES)[number] => (EVENT_TYPES as readonly string[]).includes(type));

/** The body every attempt sends (spec part 6): `data.envelope` at event time, `data.values` on completion only. */
export function webhookBody(event: DomainEvent): { type: string; testMode: boolean; body: string } {
  const data = event.data as { testMode: boolean; envelope?: unknown; values?: unknown };
  const body = {
    id: event.id,
    type: event.type,
    createdAt: event.occurredAt,
    testMode: data.testMode,
    data: { envelope: data.envelope, ...(event.type === 'envelope.completed' ? { values: data.values } : {}) },
  };
  return { type: event.type, testMode: data.testMode, body: JSON.stringify(body) };
}
