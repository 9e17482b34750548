/**
 * What the local processor's operations share: the store, the clock, its own address (pages' URLs) and `emit`, which
 * turns a change into an event object (kept, and handed to the webhook sender).
 */
import type { ProcessorEventObject } from './objects.ts';
import { newObjectId, type Store } from './store.ts';
import type { WebhookSender } from './webhooks.ts';

/** The API version the events say they were rendered with: the one the SDK this repository uses pins. */
export const API_VERSION = '2026-10-28.endive';

export interface ProcessorContext {
  store: Store;
  clock: () => Date;
  baseUrl(): string;
  emit(type: string, object: object, previousAttributes?: Record<string, unknown>): ProcessorEventObject;
}

export function createContext(options: { store: Store; clock: () => Date; baseUrl: () => string; webhooks: WebhookSender; events: ProcessorEventObject[] }): ProcessorContext {
  const { store, clock, baseUrl, webhooks, events } = options;
  return {
    store,
    clock,
    baseUrl,
    emit(type, object, previousAttributes) {
      const event: ProcessorEventObject = {
        id: newObjectId('evt'),
        object: 'event',
        api_version: API_VERSION,
        created: store.now(),
        // A snapshot: the object as it was when this happened, not as it is when the webhook leaves.
        data: { object: structuredClone(object), ...(previousAttributes ? { previous_attributes: structuredClone(previousAttributes) } : {}) },
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type,
      };
      events.push(event);
      webhooks.send(event);
      return event;
    },
  };
}

/** The same day of the next month at the same time (UTC), the last day when the next month is shorter. */
export function oneMonthLater(unixSeconds: number): number {
  const start = new Date(unixSeconds * 1000);
  const year = start.getUTCFullYear();
  const month = start.getUTCMonth() + 1;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const end = Date.UTC(year, month, Math.min(start.getUTCDate(), lastDay), start.getUTCHours(), start.getUTCMinutes(), start.getUTCSeconds());
  return Math.floor(end / 1000);
}
