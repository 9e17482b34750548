/**
 * The `Processor` on the official `stripe` SDK. The same code talks to the real processor (no host given) or to the
 * local one (`@sigil/local-processor`, by host, port and protocol): only the configuration differs. Prices are found by
 * lookup key (`price-catalog.ts`), once, and remembered; what each call sends is listed in docs/billing.md ("What the
 * processor adapter sends").
 */
import { AppError } from '@sigil/kit/errors';
import Stripe from 'stripe';
import { PLANS } from '../plans/catalog.ts';
import { ADD_ON_KEYS, METER_EVENT_NAMES, planOfLookupKey, planPriceKeys, processorPriceSpecs } from './price-catalog.ts';
import type { MeterReport, PaidPlanId, PaymentMethodSummary, Processor, ProcessorEvent, ProcessorSubscription } from './processor.ts';
import { cardSummary, idOf, readSubscription, subscriptionPlan } from './stripe-subscription.ts';
import { verifyProcessorWebhook, type StripeEvent } from './webhook-signature.ts';

export interface StripeProcessorOptions {
  secretKey: string;
  webhookSecret: string;
  /** The API's host, port and protocol; none: the real processor's. */
  host?: string;
  port?: number;
  protocol?: 'http' | 'https';
}

/** Each request's bound; the SDK retries connection failures, 409s and 5xx (POSTs under one idempotency key). */
const REQUEST_TIMEOUT_MS = 10_000;
const MAX_NETWORK_RETRIES = 2;
/** The most lookup keys one `prices.list` accepts. */
const LOOKUP_KEYS_PER_LIST = 10;

export function createStripeProcessor(options: StripeProcessorOptions): Processor {
  const stripe = new Stripe(options.secretKey, {
    maxNetworkRetries: MAX_NETWORK_RETRIES,
    timeout: REQUEST_TIMEOUT_MS,
    telemetry: false,
    appInfo: { name: 'sigil-billing' },
    ...(options.host ? { host: options.host } : {}),
    ...(options.port ? { port: options.port } : {}),
    ...(options.protocol ? { protocol: options.protocol } : {}),
  });
  const priceId = priceBook(stripe);

  /** The card that pays: the subscription's own, else its customer's default for invoices. */
  async function paymentMethodOf(subscription: Stripe.Subscription): Promise<PaymentMethodSummary | null> {
    const own = subscription.default_payment_method;
    if (own) return cardSummary(typeof own === 'string' ? await stripe.paymentMethods.retrieve(own) : own);
    const customer = await stripe.customers.retrieve(idOf(subscription.customer)!, { expand: ['invoice_settings.default_payment_method'] });
    if (customer.deleted) return null;
    const fallback = customer.invoice_settings.default_payment_method;
    if (!fallback) return null;
    return cardSummary(typeof fallback === 'string' ? await stripe.paymentMethods.retrieve(fallback) : fallback);
  }

  const read = async (subscription: Stripe.Subscription): Promise<ProcessorSubscription> => readSubscription(subscription, await paymentMethodOf(subscription));

  /** The subscription's items changed to the plan's prices: base and envelopes replaced in place, add-ons kept. */
  async function itemsFor(subscription: Stripe.Subscription, plan: PaidPlanId): Promise<Stripe.SubscriptionUpdateParams.Item[]> {
    const wanted = planPriceKeys(plan);
    const items = subscription.items.data;
    const planItem = (suffix: string) => items.find((item) => planOfLookupKey(item.price.lookup_key) && item.price.lookup_key!.endsWith(suffix));
    const changes: Stripe.SubscriptionUpdateParams.Item[] = [];
    const base = planItem('_base');
    if (wanted.base) {
      const price = await priceId(wanted.base);
      if (base?.price.id !== price) changes.push(base ? { id: base.id, price, quantity: 1 } : { price, quantity: 1 });
    } else if (base) changes.push({ id: base.id, deleted: true });
    const envelopes = planItem('_envelopes');
    const envelopesPrice = await priceId(wanted.envelopes);
    if (envelopes?.price.id !== envelopesPrice) changes.push(envelopes ? { id: envelopes.id, price: envelopesPrice } : { price: envelopesPrice });
    for (const addOn of PLANS[plan].addOns) {
      const price = await priceId(ADD_ON_KEYS[addOn]);
      if (!items.some((item) => item.price.id === price)) changes.push({ price });
    }
    return changes;
  }

  async function toProcessorEvent(event: StripeEvent): Promise<ProcessorEvent> {
    const created = new Date(event.created * 1000);
    const ignored: ProcessorEvent = { kind: 'ignored', id: event.id, created, type: event.type };
    if (event.type === 'checkout.session.completed') {
      const session = event.data.object;
      const customerId = idOf(session.customer);
      if (!customerId) return ignored;
      const organizationId = session.metadata?.organization || session.client_reference_id || undefined;
      return { kind: 'checkout.completed', id: event.id, created, organizationId, customerId, subscriptionId: idOf(session.subscription) };
    }
    if (event.type === 'customer.subscription.created' || event.type === 'customer.subscription.updated' || event.type === 'customer.subscription.deleted') {
      const subscription = event.data.object;
      // The account may sell more than Sigil: a subscription on none of its plans is not ours to read.
      if (!subscriptionPlan(subscription)) return ignored;
      return { kind: 'subscription', id: event.id, created, deleted: event.type === 'customer.subscription.deleted', subscription: await read(subscription) };
    }
    return ignored;
  }

  return {
    createCustomer: ({ organizationId, email, name }) =>
      guard('create the customer', async () => (await stripe.customers.create({ ...(email ? { email } : {}), ...(name ? { name } : {}), metadata: { organization: organizationId } })).id),

    createCheckout: ({ customerId, organizationId, plan, successUrl, cancelUrl }) =>
      guard('start a checkout', async () => {
        const metadata = { organization: organizationId, plan };
        const session = await stripe.checkout.sessions.create({
          mode: 'subscription',
          customer: customerId,
          client_reference_id: organizationId,
          line_items: await checkoutLineItems(plan, priceId),
          success_url: successUrl,
          cancel_url: cancelUrl,
          // Pay-as-you-go keeps Free's calendar months: its first period ends on the 1st of next month (UTC), unbilled.
          subscription_data: plan === 'payg' ? { metadata, billing_cycle_anchor: firstOfNextMonth(new Date()), proration_behavior: 'none' } : { metadata },
          metadata,
        });
        if (!session.url) throw new AppError('bad-gateway', `The payment processor answered checkout session ${session.id} without a page to open.`);
        return { id: session.id, url: session.url };
      }),

    switchPlan: (subscriptionId, plan) =>
      guard('change the plan', async () => {
        const current = await stripe.subscriptions.retrieve(subscriptionId, { expand: ['default_payment_method'] });
        const items = await itemsFor(current, plan);
        if (items.length === 0 && current.metadata?.plan === plan) return read(current);
        const updated = await stripe.subscriptions.update(subscriptionId, { items, metadata: { plan }, proration_behavior: 'create_prorations', expand: ['default_payment_method'] });
        return read(updated);
      }),

    createPortal: ({ customerId, returnUrl }) =>
      guard('open the billing portal', async () => ({ url: (await stripe.billingPortal.sessions.create({ customer: customerId, return_url: returnUrl })).url })),

    retrieveSubscription: (subscriptionId) => guard('read the subscription', async () => read(await stripe.subscriptions.retrieve(subscriptionId, { expand: ['default_payment_method'] }))),

    reportUsage: (report) => guard('record usage', () => reportMeterEvent(stripe, report)),

    async parseWebhook(rawBody, signatureHeader, now) {
      const check = verifyProcessorWebhook(rawBody, signatureHeader, options.webhookSecret, now.getTime());
      if (!check.ok) throw new AppError('validation-failed', check.reason, { errors: [{ pointer: '/header/processor-signature', detail: check.reason }] });
      return guard('read the webhook event', () => toProcessorEvent(check.event));
    },
  };
}

/** Checkout's lines: the base price (one), then the metered envelopes and add-ons (no quantity: their meters count). */
async function checkoutLineItems(plan: PaidPlanId, priceId: (lookupKey: string) => Promise<string>): Promise<Stripe.Checkout.SessionCreateParams.LineItem[]> {
  const keys = planPriceKeys(plan);
  const lines: Stripe.Checkout.SessionCreateParams.LineItem[] = keys.base ? [{ price: await priceId(keys.base), quantity: 1 }] : [];
  lines.push({ price: await priceId(keys.envelopes) });
  for (const addOn of PLANS[plan].addOns) lines.push({ price: await priceId(ADD_ON_KEYS[addOn]) });
  return lines;
}

async function reportMeterEvent(stripe: Stripe, report: MeterReport): Promise<void> {
  if (!Number.isInteger(report.quantity) || report.quantity < 1) throw new Error(`A meter report counts a whole number above 0, not ${report.quantity} (${report.identifier}).`);
  try {
    await stripe.billing.meterEvents.create({
      event_name: METER_EVENT_NAMES[report.meter],
      payload: { stripe_customer_id: report.customerId, value: String(report.quantity) },
      identifier: report.identifier,
      timestamp: Math.floor(report.at.getTime() / 1000),
    });
  } catch (error) {
    // A repeat of an identifier the processor already holds is what deduplication is for: the usage is recorded.
    if (error instanceof Stripe.errors.StripeInvalidRequestError && /identifier/i.test(error.message) && /already exists|duplicate/i.test(error.message)) return;
    throw error;
  }
}

/**
 * Prices by lookup key: every key Sigil uses listed once (`prices.list`, ten keys a call) and remembered. A key the
 * processor lacks is a 502 naming it, and the next call lists again (an operator may have just created it).
 */
function priceBook(stripe: Stripe): (lookupKey: string) => Promise<string> {
  let loading: Promise<Map<string, string>> | undefined;
  async function load(): Promise<Map<string, string>> {
    const keys = processorPriceSpecs().map((spec) => spec.lookupKey);
    const found = new Map<string, string>();
    for (let from = 0; from < keys.length; from += LOOKUP_KEYS_PER_LIST) {
      const page = await stripe.prices.list({ lookup_keys: keys.slice(from, from + LOOKUP_KEYS_PER_LIST), active: true, limit: 100 });
      for (const price of page.data) if (price.lookup_key) found.set(price.lookup_key, price.id);
    }
    return found;
  }
  return async (lookupKey) => {
    const current = (loading ??= load());
    let prices: Map<string, string>;
    try {
      prices = await current;
    } catch (error) {
      if (loading === current) loading = undefined;
      throw error;
    }
    const id = prices.get(lookupKey);
    if (id) return id;
    if (loading === current) loading = undefined;
    throw new AppError('bad-gateway', `The payment processor has no active price with lookup key ${lookupKey}. Create it as docs/billing.md ("What the processor adapter sends") lists.`);
  };
}

/** The processor's failures in our words: unreachable is 503, a missing object 404, any other refusal 502. */
async function guard<T>(action: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof Stripe.errors.StripeError)) throw error;
    if (error instanceof Stripe.errors.StripeConnectionError) throw new AppError('service-unavailable', `The payment processor did not answer when Sigil tried to ${action}. Try again in a moment.`, { cause: error });
    if (error.statusCode === 404) throw new AppError('not-found', `The payment processor could not ${action}: ${error.message}`, { cause: error });
    throw new AppError('bad-gateway', `The payment processor refused to ${action}: ${error.message}`, { cause: error });
  }
}

/** The 1st of the next calendar month at 00:00 UTC, in unix seconds. */
export function firstOfNextMonth(now: Date): number {
  return Math.floor(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) / 1000);
}
