/**
 * Subscriptions: started by a paid checkout, changed through the API (items swapped, metadata merged, cancellation at
 * the period's end) or the portal, each change a `customer.subscription.*` event with its `previous_attributes`.
 * Periods live on the items (`current_period_start/end`), as in the API versions the SDK pins.
 */
import { ApiError, invalidParam, missingParam, noSuch } from './api-errors.ts';
import { oneMonthLater, type ProcessorContext } from './context.ts';
import { mergeMetadata, objectList, optionalBoolean, optionalInteger, optionalString, type Params } from './form.ts';
import type { Metadata, Price, Subscription, SubscriptionItem } from './objects.ts';
import { newObjectId } from './store.ts';

export interface LineItemInput {
  price: string;
  /** Licensed prices only. */
  quantity?: number;
}

interface Period {
  start: number;
  end: number;
}

/** Checkout's `line_items`: each an active recurring price, a quantity for licensed prices and none for metered ones. */
export function lineItemInputs(context: ProcessorContext, entries: Params[], param: string): LineItemInput[] {
  const inputs = entries.map((entry, index) => {
    const name = `${param}[${index}]`;
    const priceId = optionalString(entry, 'price');
    if (!priceId) throw missingParam(`${name}[price]`);
    const price = activePrice(context, priceId, `${name}[price]`);
    const quantity = optionalInteger(entry, 'quantity');
    checkQuantity(price, quantity, name);
    if (price.recurring.usage_type === 'licensed' && quantity === undefined) throw missingParam(`${name}[quantity]`);
    return quantity === undefined ? { price: price.id } : { price: price.id, quantity };
  });
  refuseRepeatedPrices(inputs.map((input) => input.price));
  return inputs;
}

export function createSubscription(context: ProcessorContext, input: { customer: string; lineItems: LineItemInput[]; metadata: Metadata; defaultPaymentMethod: string; billingCycleAnchor?: number }): Subscription {
  const start = context.store.now();
  // An anchor ends the first period early (prorated, as the real processor does); later periods run a month from it.
  const period = { start, end: input.billingCycleAnchor && input.billingCycleAnchor > start ? input.billingCycleAnchor : oneMonthLater(start) };
  const id = newObjectId('sub');
  const items = input.lineItems.map((line) => newItem(context, id, context.store.get('price', line.price), line.quantity, period));
  return context.store.put<Subscription>({
    id,
    object: 'subscription',
    billing_cycle_anchor: period.end === input.billingCycleAnchor ? period.end : start,
    cancel_at: null,
    cancel_at_period_end: false,
    canceled_at: null,
    collection_method: 'charge_automatically',
    created: start,
    currency: 'usd',
    customer: input.customer,
    default_payment_method: input.defaultPaymentMethod,
    description: null,
    discounts: [],
    ended_at: null,
    items: { object: 'list', data: items, has_more: false, total_count: items.length, url: `/v1/subscription_items?subscription=${id}` },
    latest_invoice: null,
    livemode: false,
    metadata: { ...input.metadata },
    pending_update: null,
    schedule: null,
    start_date: start,
    status: 'active',
    trial_end: null,
    trial_start: null,
  });
}

/** `POST /v1/subscriptions/:id`: items, metadata, `cancel_at_period_end`, `default_payment_method`. */
export function updateSubscription(context: ProcessorContext, id: string, params: Params): Subscription {
  const subscription = context.store.get('subscription', id);
  const previous: Record<string, unknown> = {};
  const itemChanges = objectList(params, 'items');
  const cancelAtPeriodEnd = optionalBoolean(params, 'cancel_at_period_end');
  const paymentMethodId = optionalString(params, 'default_payment_method');
  const proration = optionalString(params, 'proration_behavior');
  if (proration !== undefined && !['create_prorations', 'none', 'always_invoice'].includes(proration)) throw invalidParam('proration_behavior', `Invalid proration_behavior: ${proration}`);
  if (subscription.status === 'canceled' && (itemChanges.length > 0 || cancelAtPeriodEnd !== undefined || paymentMethodId !== undefined)) {
    throw new ApiError(400, 'invalid_request_error', 'A canceled subscription can only update its metadata.', { code: 'subscription_canceled' });
  }
  if (itemChanges.length > 0) {
    previous.items = structuredClone(subscription.items);
    applyItemChanges(context, subscription, itemChanges);
  }
  if (params.metadata !== undefined) {
    previous.metadata = { ...subscription.metadata };
    subscription.metadata = mergeMetadata(subscription.metadata, params);
  }
  if (cancelAtPeriodEnd !== undefined && cancelAtPeriodEnd !== subscription.cancel_at_period_end) Object.assign(previous, cancelAtEnd(context, subscription, cancelAtPeriodEnd));
  if (paymentMethodId !== undefined) {
    previous.default_payment_method = subscription.default_payment_method;
    subscription.default_payment_method = paymentMethodId === '' ? null : customersPaymentMethod(context, subscription.customer, paymentMethodId);
  }
  if (Object.keys(previous).length > 0) context.emit('customer.subscription.updated', subscription, previous);
  return subscription;
}

/** The portal's "Cancel subscription" (true) and "Renew subscription" (false). */
export function setCancelAtPeriodEnd(context: ProcessorContext, id: string, cancel: boolean): Subscription {
  const subscription = context.store.get('subscription', id);
  if (subscription.status === 'canceled' || subscription.cancel_at_period_end === cancel) return subscription;
  context.emit('customer.subscription.updated', subscription, cancelAtEnd(context, subscription, cancel));
  return subscription;
}

/** The portal's "Update card": the new card charges this subscription from now on. */
export function replacePaymentMethod(context: ProcessorContext, id: string, paymentMethodId: string): Subscription {
  const subscription = context.store.get('subscription', id);
  const previous = { default_payment_method: subscription.default_payment_method };
  subscription.default_payment_method = paymentMethodId;
  context.emit('customer.subscription.updated', subscription, previous);
  return subscription;
}

/** `DELETE /v1/subscriptions/:id`: ends it now. */
export function cancelSubscription(context: ProcessorContext, id: string): Subscription {
  const subscription = context.store.get('subscription', id);
  if (subscription.status === 'canceled') return subscription;
  const now = context.store.now();
  Object.assign(subscription, { status: 'canceled', canceled_at: now, ended_at: now, cancel_at: null, cancel_at_period_end: false });
  context.emit('customer.subscription.deleted', subscription);
  return subscription;
}

export function currentPeriod(subscription: Subscription): Period | undefined {
  const item = subscription.items.data[0];
  return item ? { start: item.current_period_start, end: item.current_period_end } : undefined;
}

/** A card of the customer's (an empty value, the API's way to unset, is handled by the caller). */
function customersPaymentMethod(context: ProcessorContext, customerId: string, id: string): string {
  const paymentMethod = context.store.get('payment_method', id, 'default_payment_method');
  if (paymentMethod.customer !== customerId) throw invalidParam('default_payment_method', `The PaymentMethod ${id} does not belong to customer ${customerId}.`);
  return paymentMethod.id;
}

function cancelAtEnd(context: ProcessorContext, subscription: Subscription, cancel: boolean): Record<string, unknown> {
  const previous = { cancel_at_period_end: subscription.cancel_at_period_end, cancel_at: subscription.cancel_at, canceled_at: subscription.canceled_at };
  subscription.cancel_at_period_end = cancel;
  subscription.cancel_at = cancel ? (currentPeriod(subscription)?.end ?? null) : null;
  subscription.canceled_at = cancel ? context.store.now() : null;
  return previous;
}

function applyItemChanges(context: ProcessorContext, subscription: Subscription, changes: Params[]): void {
  const period = currentPeriod(subscription)!;
  const items = subscription.items.data;
  for (const [index, change] of changes.entries()) {
    const name = `items[${index}]`;
    const itemId = optionalString(change, 'id');
    const priceId = optionalString(change, 'price');
    const quantity = optionalInteger(change, 'quantity');
    if (!itemId) {
      if (!priceId) throw missingParam(`${name}[price]`);
      const price = activePrice(context, priceId, `${name}[price]`);
      checkQuantity(price, quantity, name);
      items.push(newItem(context, subscription.id, price, quantity ?? 1, period));
      continue;
    }
    const position = items.findIndex((item) => item.id === itemId);
    if (position < 0) throw noSuch('subscription item', itemId, `${name}[id]`);
    if (optionalBoolean(change, 'deleted')) {
      items.splice(position, 1);
      continue;
    }
    const item = items[position]!;
    const price = priceId ? activePrice(context, priceId, `${name}[price]`) : item.price;
    checkQuantity(price, quantity, name);
    items[position] = withPrice(item, price, quantity ?? item.quantity ?? 1);
  }
  if (items.length === 0) throw invalidParam('items', 'A subscription needs at least one item.');
  refuseRepeatedPrices(items.map((item) => item.price.id));
  subscription.items.total_count = items.length;
}

function newItem(context: ProcessorContext, subscriptionId: string, price: Price, quantity: number | undefined, period: Period): SubscriptionItem {
  const item: SubscriptionItem = {
    id: newObjectId('si'),
    object: 'subscription_item',
    billing_thresholds: null,
    created: context.store.now(),
    current_period_end: period.end,
    current_period_start: period.start,
    discounts: [],
    metadata: {},
    price: structuredClone(price),
    subscription: subscriptionId,
    tax_rates: [],
  };
  return withPrice(item, price, quantity ?? 1);
}

function withPrice(item: SubscriptionItem, price: Price, quantity: number): SubscriptionItem {
  const { quantity: _previousQuantity, ...rest } = item;
  const next: SubscriptionItem = { ...rest, price: structuredClone(price) };
  return price.recurring.usage_type === 'licensed' ? { ...next, quantity } : next;
}

function activePrice(context: ProcessorContext, id: string, param: string): Price {
  const price = context.store.get('price', id, param);
  if (!price.active) throw invalidParam(param, `The price ${id} is not active.`);
  return price;
}

function checkQuantity(price: Price, quantity: number | undefined, name: string): void {
  if (quantity === undefined) return;
  if (price.recurring.usage_type === 'metered') {
    throw invalidParam(`${name}[quantity]`, `Quantity should not be specified where usage_type is \`metered\`. Remove quantity from \`${name}[quantity]\`.`);
  }
  if (quantity < 1) throw invalidParam(`${name}[quantity]`, 'This value must be greater than or equal to 1.');
}

function refuseRepeatedPrices(priceIds: string[]): void {
  const repeated = priceIds.find((id, index) => priceIds.indexOf(id) !== index);
  if (repeated) throw invalidParam('items', `Cannot add multiple subscription items with the same price: ${repeated}.`);
}
