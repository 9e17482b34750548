/**
 * A processor subscription read into our words: the plan (metadata `plan`, else the lookup key of its base or
 * envelopes price), the organization (metadata `organization`), the period (on the items in the API versions the SDK
 * pins, on the subscription itself in older ones) and the card.
 */
import { AppError } from '@sigil/kit/errors';
import type Stripe from 'stripe';
import { PAID_PLAN_IDS, planOfLookupKey } from './price-catalog.ts';
import type { PaidPlanId, PaymentMethodSummary, ProcessorSubscription, SubscriptionStatus } from './processor.ts';

const STATUSES: readonly SubscriptionStatus[] = ['active', 'trialing', 'past_due', 'canceled', 'incomplete', 'incomplete_expired', 'unpaid', 'paused'];

/** Where API versions before the period moved onto items kept it. */
interface SubscriptionWithOwnPeriod {
  current_period_start?: number;
  current_period_end?: number;
}

export const idOf = (value: string | { id: string } | null | undefined): string | undefined => (typeof value === 'string' ? value : value?.id);

/** The Sigil plan a subscription is on; undefined when it is not one of Sigil's. */
export function subscriptionPlan(subscription: Stripe.Subscription): PaidPlanId | undefined {
  const fromMetadata = PAID_PLAN_IDS.find((plan) => plan === subscription.metadata?.plan);
  return fromMetadata ?? subscription.items.data.map((item) => planOfLookupKey(item.price.lookup_key)).find((plan) => plan !== undefined);
}

/** The current period: the plan's item's (any item's when none is the plan's), else the subscription's own. */
export function subscriptionPeriod(subscription: Stripe.Subscription): { start: Date; end: Date } | undefined {
  const items = subscription.items.data;
  const item = items.find((candidate) => planOfLookupKey(candidate.price.lookup_key) !== undefined) ?? items[0];
  const legacy = subscription as unknown as SubscriptionWithOwnPeriod;
  const start = item?.current_period_start ?? legacy.current_period_start;
  const end = item?.current_period_end ?? legacy.current_period_end;
  return start === undefined || end === undefined ? undefined : { start: new Date(start * 1000), end: new Date(end * 1000) };
}

export function cardSummary(paymentMethod: Stripe.PaymentMethod | null | undefined): PaymentMethodSummary | null {
  const card = paymentMethod?.card;
  return card ? { brand: card.brand, last4: card.last4, expMonth: card.exp_month, expYear: card.exp_year } : null;
}

/** The subscription in our words; refused when it names no Sigil plan or has no period. */
export function readSubscription(subscription: Stripe.Subscription, paymentMethod: PaymentMethodSummary | null): ProcessorSubscription {
  const plan = subscriptionPlan(subscription);
  if (!plan) throw new AppError('bad-gateway', `The processor's subscription ${subscription.id} is on no Sigil plan (no metadata plan, no sigil_<plan>_base or _envelopes price).`);
  const period = subscriptionPeriod(subscription);
  if (!period) throw new AppError('bad-gateway', `The processor's subscription ${subscription.id} has no current period.`);
  const status = STATUSES.find((known) => known === subscription.status);
  if (!status) throw new AppError('bad-gateway', `The processor's subscription ${subscription.id} has the status ${subscription.status}, which Sigil does not know.`);
  return {
    id: subscription.id,
    customerId: idOf(subscription.customer)!,
    organizationId: subscription.metadata?.organization || undefined,
    plan,
    status,
    currentPeriodStart: period.start,
    currentPeriodEnd: period.end,
    cancelAtPeriodEnd: subscription.cancel_at_period_end,
    paymentMethod,
  };
}
