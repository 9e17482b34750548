import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payAtCheckout } from './checkout.ts';
import { bearer, call, createKey, signUp, publishOneRoleTemplate, startTestStack, until, type TestStack } from './stack.ts';

/**
 * The "done means", through the gateway: a new organization on Free sends live envelopes until the 101st is
 * refused with 402 and an upgrade link, adds a card through the local processor's checkout (a declined card first),
 * sends again, and sees its usage and upcoming invoice move.
 */
let stack: TestStack;
let cookie: string;
let organizationId: string;
let live: Record<string, string>;
let templateId: string;


const send = () =>
  call(stack.gatewayUrl, 'POST', '/v1/envelopes', { headers: live, body: { template: templateId, recipients: [{ role: 'client', name: 'Ada Lovelace', email: 'ada@example.com' }] } });

/** Sends a live envelope and signs it through a signing session: it completes. */
async function sendAndComplete(): Promise<string> {
  const created = await send();
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = created.body.id as string;
  const sent = await until(() => call(stack.gatewayUrl, 'GET', `/v1/envelopes/${id}`, { headers: live }), (r) => r.body.status === 'sent');
  const minted = await call(stack.gatewayUrl, 'POST', `/v1/envelopes/${id}/sessions`, { headers: live, body: { recipient: sent.body.recipients[0].id } });
  expect(minted.status, JSON.stringify(minted.body)).toBe(201);
  const exchanged = await call(stack.gatewayUrl, 'POST', '/v1/signing/exchange', { body: { token: minted.body.token } });
  expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
  const signed = await call(stack.gatewayUrl, 'POST', '/v1/signing/submit', { headers: bearer(exchanged.body.accessToken), body: { fields: { signature: { kind: 'typed', text: 'Ada Lovelace' } }, consent: true } });
  expect(signed.status, JSON.stringify(signed.body)).toBe(200);
  await until(() => call(stack.gatewayUrl, 'GET', `/v1/envelopes/${id}`, { headers: live }), (r) => r.body.status === 'completed');
  return id;
}

const billing = () => call(stack.gatewayUrl, 'GET', '/v1/billing', { headers: { cookie } });

beforeAll(async () => {
  stack = await startTestStack();
  ({ cookie, organizationId } = await signUp(stack.gatewayUrl, `billing-${Date.now()}@example.com`, 'Billing Test Co'));
  live = bearer((await createKey(stack.gatewayUrl, cookie, { name: 'sender', mode: 'live' })).secret);
  templateId = await publishOneRoleTemplate(stack.gatewayUrl, live, 'Order form', 'client');
}, 120_000);
afterAll(async () => stack?.stop());

describe('a new organization on Free', () => {
  it('starts on Free: no invoice, nothing used, and an API key cannot read billing', async () => {
    const overview = await billing();
    expect(overview.status, JSON.stringify(overview.body)).toBe(200);
    expect(overview.body).toMatchObject({ object: 'billing', plan: 'free', status: 'active', sendingBlocked: false, hasPaymentMethod: false, upcomingInvoice: null });
    expect(overview.body.usage).toMatchObject({ completedEnvelopes: 0, included: 100, overage: 0 });
    const refused = await call(stack.gatewayUrl, 'GET', '/v1/usage', { headers: live });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('billing:manage');
  });

  it('sends live envelopes until the 101st is refused with 402 and the upgrade link', async () => {
    // Ten at a time: each completion is a render and a signature.
    for (let done = 0; done < 100; done += 10) await Promise.all(Array.from({ length: 10 }, () => sendAndComplete()));
    const refused = await send();
    expect(refused.status, JSON.stringify(refused.body)).toBe(402);
    expect(refused.body).toMatchObject({ type: expect.stringContaining('payment-required'), upgradeUrl: `${stack.gatewayUrl}/app/settings/billing` });
    expect(refused.body.detail).toContain('100 included envelopes');
    // Test mode is never counted or blocked.
    const testKey = bearer((await createKey(stack.gatewayUrl, cookie, { name: 'tests', mode: 'test' })).secret);
    const inTestMode = await call(stack.gatewayUrl, 'POST', '/v1/envelopes', { headers: testKey, body: { template: templateId, recipients: [{ role: 'client', name: 'Ada Lovelace', email: 'ada@example.com' }] } });
    expect(inTestMode.status, JSON.stringify(inTestMode.body)).toBe(201);
    const overview = await until(billing, (r) => r.body.usage?.completedEnvelopes === 100);
    expect(overview.body).toMatchObject({ sendingBlocked: true, upcomingInvoice: null });
  }, 300_000);

  it('adds a card through the hosted checkout (a declined card first) and is on Pay-as-you-go within seconds', async () => {
    const checkout = await call(stack.gatewayUrl, 'POST', '/v1/billing/checkout', { headers: { cookie }, body: { plan: 'payg' } });
    expect(checkout.status, JSON.stringify(checkout.body)).toBe(200);
    expect(checkout.body.object).toBe('billing_checkout');
    const declined = await payAtCheckout(checkout.body.url, '4000 0000 0000 0002');
    expect(declined.status).toBe(402);
    expect(await declined.text()).toContain('Your card was declined.');
    expect((await billing()).body.plan).toBe('free');

    const paid = await payAtCheckout(checkout.body.url, '4242 4242 4242 4242');
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(`${stack.gatewayUrl}/app/settings/billing?checkout=success`);
    const upgraded = await until(billing, (r) => r.body.plan === 'payg', 10_000);
    expect(upgraded.body).toMatchObject({ status: 'active', hasPaymentMethod: true, sendingBlocked: false, paymentMethod: { brand: 'visa', last4: '4242' } });
    expect(upgraded.body.entitlements).toMatchObject({ plan: 'payg', overageAllowed: true, features: { sms: true } });
  });

  it('sends again, and the usage and the upcoming invoice count the overage', async () => {
    // The envelopes service drops its cached entitlements when billing tells it the plan changed (at most 5 s).
    const created = await until(send, (r) => r.status !== 402, 6_000);
    expect(created.status).toBe(201);
    await sendAndComplete();
    const overview = await until(billing, (r) => r.body.usage?.completedEnvelopes === 101);
    expect(overview.body.usage).toMatchObject({ included: 100, overage: 1 });
    expect(overview.body.upcomingInvoice).toMatchObject({ currency: 'usd', total: 20, subtotal: 20 });
    expect(overview.body.upcomingInvoice.lines).toEqual(expect.arrayContaining([expect.objectContaining({ quantity: 1, unitAmount: 20, amount: 20 })]));

    const month = overview.body.usage.periodStart.slice(0, 7);
    const usage = await call(stack.gatewayUrl, 'GET', `/v1/usage?period=${month}`, { headers: { cookie } });
    expect(usage.status).toBe(200);
    expect(usage.body).toMatchObject({ object: 'usage', period: month, completedEnvelopes: 101, overage: 1 });
    expect(usage.body.daily.reduce((sum: number, day: { completedEnvelopes: number }) => sum + day.completedEnvelopes, 0)).toBe(101);

    const graph = await call(stack.gatewayUrl, 'POST', '/graphql', {
      headers: { cookie },
      body: { query: `query { organization { id billing { plan planName usage { completedEnvelopes overage daily { date completedEnvelopes } } upcomingInvoice { total lines { description amount } } plans { id current } } } }` },
    });
    expect(graph.status, JSON.stringify(graph.body)).toBe(200);
    expect(graph.body.errors).toBeUndefined();
    expect(graph.body.data.organization).toMatchObject({ id: organizationId, billing: { plan: 'payg', planName: 'Pay-as-you-go', usage: { completedEnvelopes: 101, overage: 1 }, upcomingInvoice: { total: 20 } } });
    expect(graph.body.data.organization.billing.plans.filter((p: { current: boolean }) => p.current).map((p: { id: string }) => p.id)).toEqual(['payg']);
  }, 60_000);
});
