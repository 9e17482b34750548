// The billing API on the service: real Postgres, the real processor adapter against the local processor, whose
// webhooks reach this app over HTTP as they would through the gateway.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sigil/kit/ids';
import { PRINCIPAL_HEADER, type Principal } from '@sigil/kit/auth';
import { apiKeyPrincipal, createTestAuth, freshTestDatabase, sessionPrincipal, silentLogger, type TestAuth } from '@sigil/kit/testing';
import { signWebhookPayload, startLocalProcessor, type LocalProcessor } from '@sigil/local-processor';
import { ENTITLEMENTS_PATH } from '@sigil/proto/internal-billing';
import type { Express } from 'express';
import Stripe from 'stripe';
import { createApp } from '../src/app.ts';
import { createDb, type Db } from '../src/db.ts';
import { createStripeProcessor } from '../src/processor/stripe-processor.ts';
import { countUsage } from '../src/usage/count.ts';
import { reportMeteredUsage } from '../src/usage/meter-reporter.ts';
import { payCheckout, SECRET_KEY, WEBHOOK_SECRET } from './processor-harness.ts';

const migrationsDir = path.resolve(import.meta.dirname, '../../../prisma/billing/migrations');
const DASHBOARD = 'https://app.example.test/app';
let db: Db;
let app: Express;
let server: Server;
let auth: TestAuth;
let processor: LocalProcessor;
const notified: string[] = [];
const adapter = () => createStripeProcessor({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET, host: '127.0.0.1', port: processor.port, protocol: 'http' });

beforeAll(async () => {
  db = createDb(await freshTestDatabase('sigil_billing_test_api', migrationsDir));
  auth = await createTestAuth();
  processor = await startLocalProcessor({ host: '127.0.0.1', port: 0, secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET });
  ({ app } = await createApp({ db, log: silentLogger(), verifyPrincipal: auth.verify, processor: adapter(), dashboardUrl: DASHBOARD, notifyPlanChanged: (id) => notified.push(id) }));
  server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  processor.setWebhookUrl(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/billing/webhooks/processor`);
}, 60_000);
afterAll(async () => {
  await processor?.stop();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await db?.$disconnect();
});

const owner = () => sessionPrincipal();
const get = async (principal: Principal, url: string) => request(app).get(url).set(await auth.headers(principal));
const post = async (principal: Principal, url: string, body: object = {}) => request(app).post(url).set(await auth.headers(principal)).send(body);
const billingOf = async (principal: Principal) => (await get(principal, '/v1/billing')).body;
async function complete(organizationId: string, n: number, at = new Date()) {
  await db.$transaction(async (tx) => {
    for (let i = 0; i < n; i++) await countUsage(tx, { meter: 'envelopes', subject: newId('env'), organizationId, occurredAt: at });
  });
}
/** Waits (bounded) until the organization's billing says what `ready` wants. */
async function billingWhen(principal: Principal, ready: (billing: Record<string, unknown>) => boolean) {
  let last: Record<string, unknown> = {};
  await expect.poll(async () => ready((last = await billingOf(principal))), { timeout: 10_000 }).toBe(true);
  return last;
}
/** A paid subscription through the hosted checkout, its webhooks applied. */
async function subscribe(principal: Principal, plan: string) {
  const checkout = await post(principal, '/v1/billing/checkout', { plan });
  expect(checkout.status, JSON.stringify(checkout.body)).toBe(200);
  expect((await payCheckout(checkout.body.url, '4242 4242 4242 4242')).status).toBe(303);
  return billingWhen(principal, (b) => b.plan === plan);
}

describe('reading billing', () => {
  it('shows a new organization on Free: active, the calendar month, no invoice, Free\'s entitlements', async () => {
    const principal = owner();
    const res = await get(principal, '/v1/billing');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const now = new Date();
    expect(res.body).toMatchObject({
      object: 'billing', plan: 'free', planName: 'Free', status: 'active', cancelAtPeriodEnd: false, hasPaymentMethod: false, paymentMethod: null, sendingBlocked: false, upcomingInvoice: null,
      currentPeriodStart: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
      currentPeriodEnd: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
      entitlements: { plan: 'free', includedEnvelopes: 100, overageAllowed: false, features: { sms: false, viewersPerEnvelope: 1, ssoConnections: 0 } },
    });
    expect(res.body.usage).toMatchObject({ completedEnvelopes: 0, included: 100, overage: 0, addOns: { smsOtp: 0, idCheck: 0, qesSignature: 0 } });
    expect(res.body.usage.daily.at(-1)).toEqual({ date: now.toISOString().slice(0, 10), completedEnvelopes: 0 });
    const subscription = await get(principal, '/v1/billing/subscription');
    expect(subscription.body).toMatchObject({ object: 'billing_subscription', plan: 'free', status: 'active', usage: { included: 100 } });
  });

  it('blocks sending on Free once the 100 included envelopes completed, and counts those that complete after', async () => {
    const principal = owner();
    await complete(principal.organizationId, 99);
    expect((await billingOf(principal)).sendingBlocked).toBe(false);
    await complete(principal.organizationId, 2);
    expect(await billingOf(principal)).toMatchObject({ sendingBlocked: true, usage: { completedEnvelopes: 101, overage: 1 }, upcomingInvoice: null });
  });

  it('answers a month\'s usage with its daily series, 400 for a month that is not one, and 403 naming billing:manage', async () => {
    const principal = owner();
    await complete(principal.organizationId, 3, new Date('2024-02-10T12:00:00Z'));
    const february = await get(principal, '/v1/usage?period=2024-02');
    expect(february.status).toBe(200);
    expect(february.body).toMatchObject({ object: 'usage', period: '2024-02', periodStart: '2024-02-01T00:00:00.000Z', periodEnd: '2024-03-01T00:00:00.000Z', completedEnvelopes: 3, included: 100, overage: 0 });
    expect(february.body.daily).toHaveLength(29);
    expect(february.body.daily[9]).toEqual({ date: '2024-02-10', completedEnvelopes: 3 });
    const bad = await get(principal, '/v1/usage?period=2024-13');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].pointer).toBe('/query/period');
    const key = apiKeyPrincipal({ organizationId: principal.organizationId });
    const refused = await get(key, '/v1/usage');
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('billing:manage');
  });
});

describe('changing the plan', () => {
  it('refuses what checkout cannot do: Free, an unknown plan, a return address off the dashboard, the portal before a customer', async () => {
    const principal = owner();
    for (const [body, pointer] of [[{ plan: 'free' }, '/body/plan'], [{ plan: 'gold' }, '/body/plan'], [{ plan: 'team', successUrl: 'https://evil.example/phish' }, '/body/successUrl']] as const) {
      const res = await post(principal, '/v1/billing/checkout', body);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.errors[0].pointer).toBe(pointer);
    }
    const portal = await post(principal, '/v1/billing/portal');
    expect(portal.status).toBe(409);
    // Checkout and the portal are for dashboard sessions only.
    expect((await post(apiKeyPrincipal({ organizationId: principal.organizationId, permissions: ['billing:manage'] }), '/v1/billing/checkout', { plan: 'team' })).status).toBe(401);
  });

  it('starts Team through the hosted checkout; the webhooks make it the plan and the services are told', async () => {
    const principal = owner();
    const checkout = await post(principal, '/v1/billing/checkout', { plan: 'team' });
    expect(checkout.status).toBe(200);
    expect(checkout.body).toEqual({ object: 'billing_checkout', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/checkout\/cs_/) });
    const declined = await payCheckout(checkout.body.url, '4000 0000 0000 0002');
    expect(declined.status).toBe(402);
    expect(declined.html).toContain('Your card was declined.');
    const paid = await payCheckout(checkout.body.url, '4242 4242 4242 4242');
    expect(paid.location).toBe(`${DASHBOARD}/settings/billing?checkout=success`);
    const billing = await billingWhen(principal, (b) => b.plan === 'team');
    expect(billing).toMatchObject({ planName: 'Team', status: 'active', hasPaymentMethod: true, paymentMethod: { brand: 'visa', last4: '4242' }, entitlements: { plan: 'team', features: { signingLinks: true, viewersPerEnvelope: 5 } } });
    expect(billing.upcomingInvoice).toMatchObject({ currency: 'usd', lines: [{ description: 'Team plan, monthly', quantity: 1, unitAmount: 2900, amount: 2900 }], total: 2900 });
    expect(notified).toContain(principal.organizationId);
    const entitlements = await request(app).get(ENTITLEMENTS_PATH).set(PRINCIPAL_HEADER, await auth.sign({ kind: 'service', organizationId: principal.organizationId, actorId: 'envelopes', mode: 'live', permissions: [] }));
    expect(entitlements.status).toBe(200);
    expect(entitlements.body).toMatchObject({ organizationId: principal.organizationId, plan: 'team', planName: 'Team', includedEnvelopes: 500, overageAllowed: true, upgradeUrl: `${DASHBOARD}/settings/billing`, periodStart: billing.currentPeriodStart, periodEnd: billing.currentPeriodEnd });
  });

  it('switches a paid subscription in place (409 for the plan it is on), answering the Billing object with url null', async () => {
    const principal = owner();
    await subscribe(principal, 'team');
    expect((await post(principal, '/v1/billing/checkout', { plan: 'team' })).status).toBe(409);
    notified.length = 0;
    const switched = await post(principal, '/v1/billing/checkout', { plan: 'business' });
    expect(switched.status, JSON.stringify(switched.body)).toBe(200);
    expect(switched.body).toMatchObject({ object: 'billing_checkout', url: null, plan: 'business', planName: 'Business', entitlements: { plan: 'business', features: { scim: true } }, upcomingInvoice: { total: 14900 } });
    // Told at once (and once more when the processor's own event for the switch arrives).
    expect(new Set(notified)).toEqual(new Set([principal.organizationId]));
    // The processor's own event for the switch changes nothing more.
    await processor.webhooksSettled();
    expect((await billingOf(principal)).plan).toBe('business');
    const portal = await post(principal, '/v1/billing/portal', { returnUrl: `${DASHBOARD}/settings/billing` });
    expect(portal.status).toBe(200);
    expect(portal.body.url).toMatch(/\/portal\/bps_/);
  });

  it('applies each processor event once, keeps the newest subscription state when events arrive out of order, and refuses bad signatures', async () => {
    const principal = owner();
    await subscribe(principal, 'team');
    await post(principal, '/v1/billing/checkout', { plan: 'platform' });
    await processor.webhooksSettled();
    const events = processor.events().filter((e) => e.type.startsWith('customer.subscription') && (e.data.object as { metadata?: { organization?: string } }).metadata?.organization === principal.organizationId);
    const created = events.find((e) => e.type === 'customer.subscription.created')!;
    const hook = (event: object, at = Math.floor(Date.now() / 1000)) => {
      const body = JSON.stringify(event);
      return request(app).post('/v1/billing/webhooks/processor').set('content-type', 'application/json').set('processor-signature', signWebhookPayload(body, WEBHOOK_SECRET, at)).send(body);
    };
    // The creation (plan team) delivered again, and a copy of it under a new id arriving late: neither undoes Platform.
    expect((await hook(created)).body).toEqual({ received: true });
    expect((await hook({ ...created, id: `evt_${newId('x').slice(2)}` })).status).toBe(200);
    expect((await billingOf(principal)).plan).toBe('platform');
    // The subscription ended at the processor: its event sends the workspace back to Free, the card still on file.
    const subscriptionId = (created.data.object as { id: string }).id;
    await new Stripe(SECRET_KEY, { host: '127.0.0.1', port: processor.port, protocol: 'http' }).subscriptions.cancel(subscriptionId);
    expect(await billingWhen(principal, (b) => b.plan === 'free')).toMatchObject({ status: 'active', hasPaymentMethod: true, upcomingInvoice: null });
    await processor.webhooksSettled();
    const deleted = processor.events().find((e) => e.type === 'customer.subscription.deleted' && (e.data.object as { id: string }).id === subscriptionId)!;
    // ...and the creation arriving after it changes nothing: the processor says the subscription is over.
    expect((await hook({ ...created, id: `evt_${newId('x').slice(2)}` })).status).toBe(200);
    expect((await billingOf(principal)).plan).toBe('free');
    // A wrong secret or a time six minutes off is a 400 that says why; nothing changes.
    const body = JSON.stringify({ ...deleted, id: `evt_${newId('x').slice(2)}` });
    const wrong = await request(app).post('/v1/billing/webhooks/processor').set('content-type', 'application/json').set('processor-signature', signWebhookPayload(body, 'whsec_other', Math.floor(Date.now() / 1000))).send(body);
    expect(wrong.status).toBe(400);
    const unsigned = await request(app).post('/v1/billing/webhooks/processor').set('content-type', 'application/json').send(body);
    expect(unsigned.status).toBe(400);
    expect(unsigned.body.detail).toContain('missing');
    // The real processor's own header name is read too.
    const underItsName = await request(app).post('/v1/billing/webhooks/processor').set('content-type', 'application/json').set('stripe-signature', signWebhookPayload(body, WEBHOOK_SECRET, Math.floor(Date.now() / 1000))).send(body);
    expect(underItsName.status).toBe(200);
    const stale = await hook(JSON.parse(body), Math.floor(Date.now() / 1000) - 360);
    expect(stale.status).toBe(400);
    expect(stale.body.detail).toMatch(/\d+ s/);
  });
});

describe('metered usage to the processor', () => {
  it('reports Pay-as-you-go\'s envelopes beyond the included ones once, as the increase since the last report', async () => {
    const principal = owner();
    await complete(principal.organizationId, 100);
    await subscribe(principal, 'payg');
    await complete(principal.organizationId, 2);
    expect(await billingOf(principal)).toMatchObject({ usage: { completedEnvelopes: 102, overage: 2 }, upcomingInvoice: { total: 40 } });
    const deps = { db, processor: adapter(), clock: () => new Date(), log: silentLogger() };
    const mine = () => processor.meterEvents().filter((e) => e.identifier.startsWith(`${principal.organizationId}:`));
    await reportMeteredUsage(deps);
    await reportMeteredUsage(deps);
    expect(mine().map((e) => [e.event_name, e.payload.value])).toEqual([['sigil_envelopes', '2']]);
    await complete(principal.organizationId, 1);
    await reportMeteredUsage(deps);
    expect(mine().map((e) => e.payload.value)).toEqual(['2', '1']);
  });
});
