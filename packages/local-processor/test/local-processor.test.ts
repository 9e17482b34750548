/**
 * The local processor on the wire, as the SDK and a browser meet it: form-encoded parameters with brackets, `expand`,
 * idempotent replays, the API's error bodies, periods from the injected clock, the card checks, and webhooks signed
 * by the scheme and retried until the receiver takes them.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCard } from '../src/cards.ts';
import { oneMonthLater } from '../src/context.ts';
import { startLocalProcessor, type LocalProcessor } from '../src/index.ts';
import type { CheckoutSession, Customer, Subscription } from '../src/objects.ts';

const SECRET_KEY = 'sk_test_package';
const WEBHOOK_SECRET = 'whsec_package';
const auth = { authorization: `Bearer ${SECRET_KEY}` };
const form = { ...auth, 'content-type': 'application/x-www-form-urlencoded' };

/** A receiver that answers the statuses it is told, in turn (200 once they run out). */
let answers: number[] = [];
const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
let receiver: Server;
let receiverUrl: string;
let now = new Date(Date.UTC(2027, 0, 31, 9, 30, 0));
const log: string[] = [];
let processor: LocalProcessor;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(answers.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  processor = await startLocalProcessor({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET, webhookUrl: receiverUrl, clock: () => now, log: (line) => log.push(line) });
});

afterAll(async () => {
  await processor?.stop();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

/** One call; `T` is what the test expects the answer to hold (the assertions check it). */
async function api<T = Record<string, unknown>>(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; json: T; headers: Headers }> {
  const response = await fetch(`${processor.url}${path}`, { method, headers: { ...(body === undefined ? auth : form), ...headers }, ...(body === undefined ? {} : { body }) });
  return { status: response.status, json: (await response.json()) as T, headers: response.headers };
}

async function priceId(lookupKey: string): Promise<string> {
  return (await api<{ data: Array<{ id: string }> }>('GET', `/v1/prices?lookup_keys[0]=${lookupKey}`)).json.data[0]!.id;
}

/** A paid Team subscription, through the API and the checkout form. */
async function teamSubscription(): Promise<Subscription> {
  const customer = (await api<Customer>('POST', '/v1/customers', 'email=a%40example.com&metadata[organization]=org_1')).json;
  const lines = `line_items[0][price]=${await priceId('sigil_team_base')}&line_items[0][quantity]=1&line_items[1][price]=${await priceId('sigil_team_envelopes')}`;
  const session = (await api<CheckoutSession>('POST', '/v1/checkout/sessions', `mode=subscription&customer=${customer.id}&success_url=http%3A%2F%2F127.0.0.1%2Fdone&${lines}&subscription_data[metadata][plan]=team`)).json;
  const paid = await fetch(session.url!, { method: 'POST', body: new URLSearchParams({ card: '4242424242424242', expiry: '01/27', cvc: '123', name: 'Ada' }), redirect: 'manual' });
  expect(paid.status).toBe(303);
  return (await api<{ subscription: Subscription }>('GET', `/v1/checkout/sessions/${session.id}?expand[0]=subscription`)).json.subscription;
}

describe('the API', () => {
  it('creates customers from form parameters, replays an idempotency key, and expands ids', async () => {
    const first = await api<Customer>('POST', '/v1/customers', 'name=Ada%20Lovelace&metadata[organization]=org_1', { 'idempotency-key': 'key-1' });
    expect(first.json).toMatchObject({ object: 'customer', name: 'Ada Lovelace', metadata: { organization: 'org_1' }, invoice_settings: { default_payment_method: null } });
    expect(first.json.id).toMatch(/^cus_[0-9A-Za-z]{24}$/);
    const replay = await api('POST', '/v1/customers', 'name=Ada%20Lovelace&metadata[organization]=org_1', { 'idempotency-key': 'key-1' });
    expect(replay.json).toEqual(first.json);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');

    const subscription = await teamSubscription();
    expect(subscription).toMatchObject({ object: 'subscription', status: 'active', metadata: { plan: 'team' } });
    const expanded = await api<{ invoice_settings: { default_payment_method: unknown } }>('GET', `/v1/customers/${subscription.customer}?expand[0]=invoice_settings.default_payment_method`);
    expect(expanded.json.invoice_settings.default_payment_method).toMatchObject({ object: 'payment_method', card: { brand: 'visa', last4: '4242', exp_month: 1, exp_year: 2027 } });
  });

  it('dates a subscription from the clock: one month, the last day of a shorter month', async () => {
    const subscription = await teamSubscription();
    const start = Math.floor(now.getTime() / 1000);
    expect(subscription.items.data.map((item) => [item.current_period_start, item.current_period_end])).toEqual([
      [start, Date.UTC(2027, 1, 28, 9, 30) / 1000],
      [start, Date.UTC(2027, 1, 28, 9, 30) / 1000],
    ]);
    expect(oneMonthLater(Date.UTC(2027, 2, 15, 12) / 1000)).toBe(Date.UTC(2027, 3, 15, 12) / 1000);
    expect(oneMonthLater(Date.UTC(2027, 11, 31) / 1000)).toBe(Date.UTC(2028, 0, 31) / 1000);
  });

  it('updates items as the SDK encodes them: one deleted, one swapped, one added, metadata merged', async () => {
    const subscription = await teamSubscription();
    const [base, envelopes] = subscription.items.data;
    const body = [
      `items[0][id]=${base!.id}`,
      'items[0][deleted]=true',
      `items[1][id]=${envelopes!.id}`,
      `items[1][price]=${await priceId('sigil_payg_envelopes')}`,
      `items[2][price]=${await priceId('sigil_sms_otp')}`,
      'metadata[plan]=payg',
      'metadata[note]=',
      'proration_behavior=create_prorations',
      'expand[0]=default_payment_method',
    ].join('&');
    const updated = await api<Omit<Subscription, 'default_payment_method'> & { default_payment_method: unknown }>('POST', `/v1/subscriptions/${subscription.id}`, body);
    expect(updated.status).toBe(200);
    expect(updated.json.items.data.map((item) => item.price.lookup_key)).toEqual(['sigil_payg_envelopes', 'sigil_sms_otp']);
    expect(updated.json.items.data[1]!.current_period_end).toBe(subscription.items.data[0]!.current_period_end);
    expect(updated.json.metadata).toEqual({ plan: 'payg' });
    expect(updated.json.default_payment_method).toMatchObject({ object: 'payment_method' });
    const event = processor.events().at(-1)!;
    expect(event).toMatchObject({ type: 'customer.subscription.updated', data: { object: { id: subscription.id }, previous_attributes: { metadata: { plan: 'team' } } } });
  });

  it("answers the API's errors: 401 without the key, 404 for an unknown object, 400 naming the parameter", async () => {
    const anonymous = await fetch(`${processor.url}/v1/customers/cus_x`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: { type: 'invalid_request_error', message: expect.stringContaining('You did not provide an API key') } });
    expect((await api('GET', '/v1/customers/cus_x', undefined, { authorization: 'Bearer sk_test_other' })).status).toBe(401);
    expect(await api('GET', '/v1/customers/cus_missing')).toMatchObject({ status: 404, json: { error: { type: 'invalid_request_error', code: 'resource_missing', message: "No such customer: 'cus_missing'", param: 'id' } } });
    const metered = await api('POST', '/v1/checkout/sessions', `mode=subscription&success_url=http%3A%2F%2Fx.test%2F&line_items[0][price]=${await priceId('sigil_sms_otp')}&line_items[0][quantity]=2`);
    expect(metered).toMatchObject({ status: 400, json: { error: { param: 'line_items[0][quantity]', message: expect.stringContaining('Quantity should not be specified where usage_type is `metered`') } } });
    expect(await api('POST', '/v1/checkout/sessions', 'mode=subscription')).toMatchObject({ status: 400, json: { error: { code: 'parameter_missing', param: 'success_url' } } });
    expect((await api<{ error: { message: string } }>('GET', '/v1/charges')).json.error.message).toContain('Unrecognized request URL (GET: /v1/charges)');
  });

  it('expires an unpaid checkout after a day, as the API does', async () => {
    const customer = (await api<Customer>('POST', '/v1/customers', '')).json;
    const session = (await api<CheckoutSession>('POST', '/v1/checkout/sessions', `mode=subscription&customer=${customer.id}&success_url=http%3A%2F%2Fx.test%2F&cancel_url=http%3A%2F%2Fx.test%2Fback&line_items[0][price]=${await priceId('sigil_payg_envelopes')}`)).json;
    const before = now;
    now = new Date(before.getTime() + 24 * 60 * 60 * 1000);
    try {
      expect(await (await fetch(session.url!)).text()).toContain('This checkout has expired');
      expect((await api('GET', `/v1/checkout/sessions/${session.id}`)).json).toMatchObject({ status: 'expired', url: null });
      expect(processor.events().at(-1)).toMatchObject({ type: 'checkout.session.expired' });
    } finally {
      now = before;
    }
  });
});

describe('the card form', () => {
  it('names the field at fault in the processor’s words', () => {
    const today = new Date(Date.UTC(2027, 0, 31));
    const card = { card: '4242 4242 4242 4242', expiry: '12 / 30', cvc: '123', name: 'Ada' };
    expect(checkCard(card, today)).toEqual({ ok: true, card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030, name: 'Ada' } });
    expect(checkCard({ ...card, expiry: '01/27' }, today).ok).toBe(true);
    expect(checkCard({ ...card, expiry: '12/26' }, today)).toMatchObject({ ok: false, status: 400, field: 'expiry', message: "Your card's expiration date is in the past." });
    expect(checkCard({ ...card, expiry: '13/30' }, today)).toMatchObject({ field: 'expiry', message: "Your card's expiration date is incomplete." });
    expect(checkCard({ ...card, cvc: '12' }, today)).toMatchObject({ field: 'cvc', message: "Your card's security code is incomplete." });
    expect(checkCard({ ...card, name: ' ' }, today)).toMatchObject({ field: 'name' });
    expect(checkCard({ ...card, card: '4000-0000-0000-0002' }, today)).toEqual({ ok: false, status: 402, field: 'card', message: 'Your card was declined.' });
    expect(checkCard({ ...card, card: '4242 4242 4242 4241' }, today)).toMatchObject({ status: 400, field: 'card', message: 'Your card number is invalid.' });
  });
});

describe('webhooks', () => {
  it('signs each delivery by the scheme and retries a failing receiver until it takes the event', async () => {
    await processor.webhooksSettled();
    received.length = 0;
    answers = [500, 503];
    const subscription = await teamSubscription();
    await api('POST', `/v1/subscriptions/${subscription.id}`, 'cancel_at_period_end=true');
    await expect.poll(() => received.filter((delivery) => delivery.body.includes('"customer.subscription.updated"')).length, { timeout: 10_000 }).toBe(1);

    const first = received[0]!;
    expect(JSON.parse(first.body)).toMatchObject({ object: 'event', type: 'checkout.session.completed', livemode: false, api_version: '2026-10-28.endive' });
    expect(received.slice(0, 3).map((delivery) => delivery.body)).toEqual([first.body, first.body, first.body]);
    expect(received.map((delivery) => JSON.parse(delivery.body).type).slice(2)).toEqual(['checkout.session.completed', 'customer.subscription.created', 'customer.subscription.updated']);
    for (const delivery of received) {
      const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(delivery.headers['processor-signature'] as string)!;
      expect(Number(t)).toBe(Math.floor(now.getTime() / 1000));
      expect(v1).toBe(createHmac('sha256', WEBHOOK_SECRET).update(`${t}.${delivery.body}`).digest('hex'));
    }
    expect(log.filter((line) => line.includes('checkout.session.completed')).slice(-3).map((line) => line.replace(/^.*: /, ''))).toEqual(['answered 500 (attempt 1)', 'answered 503 (attempt 2)', 'delivered (attempt 3)']);
  });
});
