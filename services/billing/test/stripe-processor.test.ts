/**
 * The processor adapter (the official SDK) against the local processor: customers, checkout paid and declined on the
 * hosted page's form, signed webhooks read back into our events, plan switches, the portal, metered usage and the
 * webhook signature's refusals.
 */
import { AppError } from '@sigil/kit/errors';
import { signWebhookPayload } from '@sigil/local-processor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processorPriceSpecs } from '../src/processor/price-catalog.ts';
import type { PaidPlanId, ProcessorEvent } from '../src/processor/processor.ts';
import { createStripeProcessor, firstOfNextMonth } from '../src/processor/stripe-processor.ts';
import { payCheckout, startHarness, WEBHOOK_SECRET, type Harness, type ReceivedWebhook } from './processor-harness.ts';

let harness: Harness;
const organizationId = 'org_processor_test';
const successUrl = () => `${harness.receiver.url}/billing/success?session={CHECKOUT_SESSION_ID}`;

beforeAll(async () => {
  harness = await startHarness();
});
afterAll(async () => {
  await harness?.stop();
});

/**
 * How many webhooks arrived once every one sent so far is settled: the processor sends them in order, one at a time,
 * so the next ones counted from here are the next test step's.
 */
async function settledWebhookCount(): Promise<number> {
  await harness.processor.webhooksSettled();
  return harness.receiver.webhooks.length;
}

/** Waits (bounded) until `count` webhooks arrived after `from`, and answers them. */
async function webhooksAfter(from: number, count: number): Promise<ReceivedWebhook[]> {
  await expect.poll(() => harness.receiver.webhooks.length, { timeout: 10_000, message: `${count} webhooks after the first ${from}` }).toBeGreaterThanOrEqual(from + count);
  return harness.receiver.webhooks.slice(from, from + count);
}

const parse = (webhook: ReceivedWebhook, now = new Date()): Promise<ProcessorEvent> =>
  harness.adapter.parseWebhook(webhook.body, webhook.headers['processor-signature'] as string | undefined, now);

async function checkoutFor(plan: PaidPlanId): Promise<{ customerId: string; url: string; id: string }> {
  const customerId = await harness.adapter.createCustomer({ organizationId, email: 'billing@example.com', name: 'Example Ltd' });
  const checkout = await harness.adapter.createCheckout({ customerId, organizationId, plan, successUrl: successUrl(), cancelUrl: `${harness.receiver.url}/billing/cancel` });
  return { customerId, ...checkout };
}

/** A paid subscription to `plan`, its two webhooks arrived. */
async function subscribe(plan: PaidPlanId): Promise<{ customerId: string; subscriptionId: string; checkoutId: string }> {
  const { customerId, url, id } = await checkoutFor(plan);
  const from = await settledWebhookCount();
  expect((await payCheckout(url, '4242 4242 4242 4242')).status).toBe(303);
  const [completed] = await webhooksAfter(from, 2);
  const event = await parse(completed!);
  if (event.kind !== 'checkout.completed' || !event.subscriptionId) throw new Error(`expected checkout.completed, got ${JSON.stringify(event)}`);
  return { customerId, subscriptionId: event.subscriptionId, checkoutId: id };
}

describe('the local processor and the catalog', () => {
  it("holds every price the adapter asks for under its lookup key, as the plan catalog prices it", async () => {
    const specs = processorPriceSpecs();
    const meters = new Map((await harness.stripe.billing.meters.list()).data.map((meter) => [meter.id, meter.event_name]));
    const prices = (await harness.stripe.prices.list({ lookup_keys: specs.map((spec) => spec.lookupKey), limit: 100, expand: ['data.tiers'] })).data;
    const seen = prices.map((price) => ({
      lookupKey: price.lookup_key,
      usage: price.recurring?.usage_type,
      ...(price.recurring?.meter ? { meter: meters.get(price.recurring.meter) } : {}),
      ...(price.billing_scheme === 'tiered' ? { tiers: price.tiers!.map((tier) => ({ upTo: tier.up_to, unitAmount: tier.unit_amount })) } : { unitAmount: price.unit_amount }),
    }));
    expect(seen.sort((a, b) => a.lookupKey!.localeCompare(b.lookupKey!))).toEqual([...specs].sort((a, b) => a.lookupKey.localeCompare(b.lookupKey)));
    expect(prices.every((price) => price.currency === 'usd' && price.recurring?.interval === 'month' && price.recurring.interval_count === 1)).toBe(true);
  });
});

describe('createStripeProcessor against the local processor', () => {
  it('creates the customer and a checkout whose page shows the plan and its price', async () => {
    const { customerId, url, id } = await checkoutFor('team');
    expect(customerId).toMatch(/^cus_/);
    expect(id).toMatch(/^cs_test_/);
    expect(url).toBe(`${harness.processor.url}/checkout/${id}`);
    const session = await harness.stripe.checkout.sessions.retrieve(id);
    expect(session).toMatchObject({ mode: 'subscription', customer: customerId, status: 'open', metadata: { organization: organizationId, plan: 'team' }, client_reference_id: organizationId });
    const page = await fetch(url);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Subscribe to Sigil Team');
    expect(html).toContain('$29.00');
    expect(html).toMatch(/<label for="card">Card number<\/label>/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
  });

  it('reads a paid checkout from its signed webhooks: checkout.completed, then the subscription with plan, period and card', async () => {
    const { customerId, url, id } = await checkoutFor('team');
    const from = await settledWebhookCount();
    const before = Math.floor(Date.now() / 1000);
    const paid = await payCheckout(url, '4242 4242 4242 4242');
    expect(paid.status).toBe(303);
    expect(paid.location).toBe(`${harness.receiver.url}/billing/success?session=${id}`);

    const [completed, created] = await webhooksAfter(from, 2);
    expect(completed!.headers['processor-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const checkout = await parse(completed!);
    expect(checkout).toMatchObject({ kind: 'checkout.completed', organizationId, customerId });
    if (checkout.kind !== 'checkout.completed') throw new Error('unreachable');
    expect(checkout.subscriptionId).toMatch(/^sub_/);

    const subscription = await parse(created!);
    expect(subscription).toMatchObject({
      kind: 'subscription',
      deleted: false,
      subscription: { id: checkout.subscriptionId, customerId, organizationId, plan: 'team', status: 'active', cancelAtPeriodEnd: false, paymentMethod: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2034 } },
    });
    if (subscription.kind !== 'subscription') throw new Error('unreachable');
    const { currentPeriodStart: start, currentPeriodEnd: end } = subscription.subscription;
    expect(start.getTime() / 1000).toBeGreaterThanOrEqual(before);
    const monthLater = new Date(start);
    monthLater.setUTCMonth(start.getUTCMonth() + 1);
    if (monthLater.getUTCDate() !== start.getUTCDate()) monthLater.setUTCDate(0);
    expect(end).toEqual(monthLater);
    expect(await harness.adapter.retrieveSubscription(checkout.subscriptionId!)).toEqual(subscription.subscription);

    const again = await (await fetch(url)).text();
    expect(again).toContain('This checkout is complete');
    expect(harness.log.some((line) => line.includes('checkout.session.completed') && line.includes('delivered'))).toBe(true);
  });

  it("anchors a Pay-as-you-go subscription to the 1st of next month (UTC): Free's calendar months go on", async () => {
    const { url } = await checkoutFor('payg');
    const from = await settledWebhookCount();
    expect((await payCheckout(url, '4242 4242 4242 4242')).status).toBe(303);
    const [, created] = await webhooksAfter(from, 2);
    const subscription = await parse(created!);
    if (subscription.kind !== 'subscription') throw new Error(`expected a subscription event, got ${subscription.kind}`);
    expect(subscription.subscription.plan).toBe('payg');
    const now = new Date();
    expect(subscription.subscription.currentPeriodEnd).toEqual(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)));
    expect(firstOfNextMonth(new Date('2026-12-31T23:59:59Z'))).toBe(Date.UTC(2027, 0, 1) / 1000);
  });

  it('refuses a declined card with a 402 and its message: no subscription, no webhook', async () => {
    const { url, id } = await checkoutFor('business');
    const eventsBefore = harness.processor.events().length;
    const webhooksBefore = await settledWebhookCount();

    const declined = await payCheckout(url, '4000 0000 0000 0002');
    expect(declined.status).toBe(402);
    expect(declined.html).toMatch(/<p class="error" id="card-error" role="alert">Your card was declined\.<\/p>/);
    const invalid = await payCheckout(url, '1234 5678 9012 3456');
    expect(invalid.status).toBe(400);
    expect(invalid.html).toContain('Your card number is invalid.');

    expect(await harness.stripe.checkout.sessions.retrieve(id)).toMatchObject({ status: 'open', subscription: null, payment_status: 'unpaid' });
    expect(harness.processor.events()).toHaveLength(eventsBefore);
    await harness.processor.webhooksSettled();
    expect(harness.receiver.webhooks).toHaveLength(webhooksBefore);
  });

  it('switches plans: the items follow the plan and customer.subscription.updated says so', async () => {
    const { subscriptionId } = await subscribe('team');
    const from = await settledWebhookCount();
    const switched = await harness.adapter.switchPlan(subscriptionId, 'business');
    expect(switched).toMatchObject({ id: subscriptionId, plan: 'business', status: 'active', paymentMethod: { last4: '4242' } });
    const [updated] = await webhooksAfter(from, 1);
    expect(await parse(updated!)).toMatchObject({ kind: 'subscription', deleted: false, subscription: { id: subscriptionId, plan: 'business' } });

    await harness.adapter.switchPlan(subscriptionId, 'payg');
    const items = (await harness.stripe.subscriptions.retrieve(subscriptionId)).items.data.map((item) => item.price.lookup_key);
    expect(items.sort()).toEqual(['sigil_id_check', 'sigil_payg_envelopes', 'sigil_qes_signature', 'sigil_sms_otp']);
    expect((await harness.adapter.switchPlan(subscriptionId, 'platform')).plan).toBe('platform');
  });

  it("reads the customer's default card when the subscription has none of its own", async () => {
    const { subscriptionId } = await subscribe('team');
    await harness.stripe.subscriptions.update(subscriptionId, { default_payment_method: '' });
    expect((await harness.adapter.retrieveSubscription(subscriptionId)).paymentMethod).toEqual({ brand: 'visa', last4: '4242', expMonth: 12, expYear: 2034 });
  });

  it('opens the portal: plan, card, a way back; cancelling at the period end is a subscription update', async () => {
    const { customerId, subscriptionId } = await subscribe('team');
    const returnUrl = `${harness.receiver.url}/billing`;
    const { url } = await harness.adapter.createPortal({ customerId, returnUrl });
    expect(url).toMatch(new RegExp(`^${harness.processor.url}/portal/bps_`));
    const html = await (await fetch(url)).text();
    expect(html).toContain('Sigil Team');
    expect(html).toContain('Visa ending in 4242');
    expect(html).toContain('>Cancel subscription</button>');
    expect(html).toContain(`href="${returnUrl}">Return to Sigil</a>`);

    const from = await settledWebhookCount();
    const cancel = await fetch(`${url}/cancel`, { method: 'POST', redirect: 'manual' });
    expect(cancel.status).toBe(303);
    const [updated] = await webhooksAfter(from, 1);
    expect(await parse(updated!)).toMatchObject({ kind: 'subscription', subscription: { id: subscriptionId, cancelAtPeriodEnd: true, status: 'active' } });
    expect(await (await fetch(new URL(cancel.headers.get('location')!, url))).text()).toMatch(/Your subscription will end on \w+ \d+, \d{4}\./);
  });

  it('reports usage once per identifier', async () => {
    const { customerId } = await checkoutFor('payg');
    const at = new Date();
    const report = { customerId, meter: 'envelopes' as const, quantity: 3, identifier: `env_${customerId}`, at };
    await harness.adapter.reportUsage(report);
    await harness.adapter.reportUsage(report);
    await harness.adapter.reportUsage({ ...report, meter: 'smsOtp', quantity: 2, identifier: `sms_${customerId}` });
    const mine = harness.processor.meterEvents().filter((event) => event.payload.stripe_customer_id === customerId);
    expect(mine).toEqual([
      expect.objectContaining({ event_name: 'sigil_envelopes', identifier: `env_${customerId}`, payload: { stripe_customer_id: customerId, value: '3' }, timestamp: Math.floor(at.getTime() / 1000) }),
      expect.objectContaining({ event_name: 'sigil_sms_otp', payload: { stripe_customer_id: customerId, value: '2' } }),
    ]);
    const meter = (await harness.stripe.billing.meters.list()).data.find((candidate) => candidate.event_name === 'sigil_envelopes')!;
    const second = Math.floor(at.getTime() / 1000);
    const summaries = await harness.stripe.billing.meters.listEventSummaries(meter.id, { customer: customerId, start_time: second - 60, end_time: second + 60 });
    expect(summaries.data.map((summary) => summary.aggregated_value)).toEqual([3]);
  });

  it('refuses a webhook signed with another secret, too old, or unsigned, with a 400 saying why', async () => {
    const body = JSON.stringify(harness.processor.events()[0]);
    // A whole second, so "600 seconds off" is exact whatever the milliseconds.
    const t = Math.floor(Date.now() / 1000);
    const now = new Date(t * 1000);
    const refusal = (header: string | undefined) => harness.adapter.parseWebhook(Buffer.from(body), header, now).then(() => undefined, (error: unknown) => error);

    const wrongSecret = await refusal(signWebhookPayload(body, 'whsec_someone_else', t));
    expect(wrongSecret).toBeInstanceOf(AppError);
    expect(wrongSecret).toMatchObject({ code: 'validation-failed', status: 400, message: 'The Processor-Signature does not match the body with the webhook secret.', errors: [{ pointer: '/header/processor-signature' }] });
    expect(await refusal(signWebhookPayload(body, WEBHOOK_SECRET, t - 600))).toMatchObject({ status: 400, message: 'The Processor-Signature time is 600 seconds off; at most 300 are accepted.' });
    expect(await refusal(undefined)).toMatchObject({ status: 400, message: 'The Processor-Signature header (or Stripe-Signature) is missing.' });
    expect(await harness.adapter.parseWebhook(Buffer.from(body), signWebhookPayload(body, WEBHOOK_SECRET, t), now)).toMatchObject({ id: harness.processor.events()[0]!.id });
  });

  it('reads an event of any other type as ignored', async () => {
    const body = JSON.stringify({ id: 'evt_other', object: 'event', type: 'invoice.paid', created: 1_790_000_000, data: { object: { id: 'in_1', object: 'invoice' } }, livemode: false, api_version: '2026-10-28.endive' });
    const now = new Date();
    expect(await harness.adapter.parseWebhook(Buffer.from(body), signWebhookPayload(body, WEBHOOK_SECRET, Math.floor(now.getTime() / 1000)), now)).toEqual({ kind: 'ignored', id: 'evt_other', created: new Date(1_790_000_000_000), type: 'invoice.paid' });
  });

  it("answers the processor's refusals as errors of ours: an unknown subscription is 404, a wrong key 502", async () => {
    await expect(harness.adapter.retrieveSubscription('sub_missing')).rejects.toMatchObject({ code: 'not-found', status: 404, message: expect.stringContaining("No such subscription: 'sub_missing'") });
    const wrongKey = createStripeProcessor({ secretKey: 'sk_test_wrong_key_1234', webhookSecret: WEBHOOK_SECRET, host: '127.0.0.1', port: harness.processor.port, protocol: 'http' });
    await expect(wrongKey.createCustomer({ organizationId })).rejects.toMatchObject({ code: 'bad-gateway', status: 502, message: expect.stringContaining('Invalid API Key provided') });
  });
});
