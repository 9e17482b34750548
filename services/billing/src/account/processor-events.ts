/**
 * The processor's webhook events, applied once each (by event id) and in the processor's order per organization: a
 * subscription state older than the one applied last changes nothing, so events that arrive out of order leave the
 * newest state in force.
 */
import type { Db } from '../db.ts';
import type { ProcessorEvent, ProcessorSubscription } from '../processor/processor.ts';
import { endSubscription, firstDelivery, keepCustomer, lockAccount, organizationOfCustomer, writeSubscription } from './store.ts';

export interface AppliedEvent {
  /** false when the event id had been handled before. */
  fresh: boolean;
  /** The organization whose plan may have changed (to notify), if any. */
  organizationId?: string;
}

export async function applyProcessorEvent(db: Db, event: ProcessorEvent, now: Date): Promise<AppliedEvent> {
  return db.$transaction(async (tx) => {
    if (!(await firstDelivery(tx, event.id, event.kind))) return { fresh: false };
    if (event.kind === 'ignored') return { fresh: true };
    if (event.kind === 'checkout.completed') {
      const organizationId = event.organizationId ?? (await organizationOfCustomer(tx, event.customerId));
      if (!organizationId) return { fresh: true };
      await keepCustomer(tx, organizationId, event.customerId, now);
      return { fresh: true };
    }
    const organizationId = await organizationOf(db, event.subscription);
    if (!organizationId) return { fresh: true };
    const account = await lockAccount(tx, organizationId, now);
    if (account.stateAt && event.created.getTime() < account.stateAt.getTime()) return { fresh: true };
    // Another subscription of the same customer ending (one replaced by checkout) leaves the one in force alone.
    if (event.deleted && account.subscriptionId && account.subscriptionId !== event.subscription.id) return { fresh: true };
    if (event.deleted) await endSubscription(tx, organizationId, event.created, now);
    else await writeSubscription(tx, organizationId, event.subscription, event.created, now);
    return { fresh: true, organizationId };
  });
}

/**
 * Applies a subscription state the processor answered directly (a plan switch), as of this second: the processor's
 * event times are whole seconds, and its own event for this change (or a later one in the same second) still applies.
 */
export async function applySubscriptionState(db: Db, organizationId: string, subscription: ProcessorSubscription, now: Date): Promise<void> {
  const asOf = new Date(Math.floor(now.getTime() / 1000) * 1000);
  await db.$transaction(async (tx) => {
    const account = await lockAccount(tx, organizationId, now);
    if (account.stateAt && asOf.getTime() < account.stateAt.getTime()) return;
    await writeSubscription(tx, organizationId, subscription, asOf, now);
  });
}

async function organizationOf(db: Db, subscription: ProcessorSubscription): Promise<string | undefined> {
  return subscription.organizationId ?? (await organizationOfCustomer(db, subscription.customerId));
}
