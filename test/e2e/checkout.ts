import { expect } from 'vitest';
import { call, until } from './stack.ts';

/** Fills the local processor's hosted checkout form as a person would, and posts it. */
export async function payAtCheckout(url: string, card: string): Promise<Response> {
  const page = await (await fetch(url)).text();
  const form = /<form[^>]*action="([^"]*)"/.exec(page);
  const action = new URL(form?.[1]?.replace(/&amp;/g, '&') ?? url, url);
  const fields = new URLSearchParams();
  for (const match of page.matchAll(/<input[^>]*name="([^"]+)"[^>]*>/g)) {
    const name = match[1] as string;
    const value = /value="([^"]*)"/.exec(match[0])?.[1] ?? '';
    fields.set(name, name === 'card' ? card : /exp/i.test(name) ? '12 / 34' : /cvc/i.test(name) ? '123' : /name/i.test(name) ? 'Ada Lovelace' : value);
  }
  return fetch(action, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: fields.toString() });
}

/** The owner (by session cookie) pays for Team through billing's real flow; resolves once `GET /v1/billing` says team. */
export async function upgradeToTeam(base: string, cookie: string): Promise<void> {
  const checkout = await call(base, 'POST', '/v1/billing/checkout', { headers: { cookie }, body: { plan: 'team' } });
  expect(checkout.status, JSON.stringify(checkout.body)).toBe(200);
  expect((await payAtCheckout(checkout.body.url, '4242 4242 4242 4242')).status).toBe(303);
  await until(() => call(base, 'GET', '/v1/billing', { headers: { cookie } }), (r) => r.body.plan === 'team', 15_000);
}
