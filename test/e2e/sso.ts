import { deflateSync, crc32 } from 'node:zlib';
import { expect } from 'vitest';
import type { Page } from 'playwright-core';
import { payAtCheckout } from './checkout.ts';
import { call, until } from './stack.ts';

/**
 * What the SSO, SCIM and branding end-to-end test does besides the dashboard: the plan paid for through billing's real
 * flow, the identity provider's sign-in form filled as a person would, SCIM requests as an identity provider sends them,
 * and the stack's inbox.
 */

/**
 * The owner (by session cookie) moves to a paid `plan`: the processor's hosted checkout when nothing is paid yet, a
 * switch of the subscription in force otherwise; resolves once `GET /v1/billing` says so.
 */
export async function upgradeTo(base: string, cookie: string, plan: 'team' | 'business'): Promise<void> {
  const checkout = await call(base, 'POST', '/v1/billing/checkout', { headers: { cookie }, body: { plan } });
  expect(checkout.status, JSON.stringify(checkout.body)).toBe(200);
  if (checkout.body.url) expect((await payAtCheckout(checkout.body.url, '4242 4242 4242 4242')).status).toBe(303);
  await until(() => call(base, 'GET', '/v1/billing', { headers: { cookie } }), (r) => r.body.plan === plan, 15_000);
}

/** The local identity provider's sign-in form (open in `page`): who the person is; the IdP then posts back to Sigil. */
export async function signInAtIdp(page: Page, email: string, name: string): Promise<void> {
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Name').fill(name);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

export interface InboxMessage {
  to: string[];
  subject: string;
  html?: string;
  text: string;
  receivedAt: string;
}

/** The first message of the stack's inbox to `to` received since `since` that `matches`, waited for. */
export async function mailTo(inboxUrl: string, to: string, since: string, matches: (m: InboxMessage) => boolean = () => true): Promise<InboxMessage> {
  const wanted = (m: InboxMessage) => m.to.includes(to) && m.receivedAt >= since && matches(m);
  const messages = await until(async () => (await (await fetch(`${inboxUrl}/messages`)).json()) as InboxMessage[], (all) => all.some(wanted), 30_000);
  return messages.find(wanted) as InboxMessage;
}

/** A SCIM 2.0 request through the gateway with the organization's bearer token, as an identity provider sends it. */
export async function scim(base: string, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: { id?: string } & Record<string, unknown> }> {
  const res = await fetch(`${base}/scim/v2${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, accept: 'application/scim+json', ...(body ? { 'content-type': 'application/scim+json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** A `width`×`height` PNG of one colour with a darker band: a logo that shows in the pictures. */
export function pngLogo(width = 160, height = 48, rgb: [number, number, number] = [67, 56, 202]): Buffer {
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    const band = y > height / 3 && y < (2 * height) / 3;
    for (let x = 0; x < width; x++) row.set(band ? rgb.map((c) => Math.round(c / 2)) : rgb, 1 + x * 3);
    rows.push(row);
  }
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typed));
    return Buffer.concat([length, typed, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.concat(rows))), chunk('IEND', Buffer.alloc(0))]);
}
