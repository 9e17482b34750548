/**
 * The local processor's hosted pages in Debian's Chromium, as a person meets them from Sigil: a declined card and its
 * message, a card that pays and the way back to Sigil with the webhooks sent, then the portal (cancel, update the
 * card). axe-core checks each page at desktop and phone widths; the pictures go to .local/tmp/.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payCheckout, startHarness, type Harness } from './processor-harness.ts';

const DESKTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };
const shots = path.resolve(import.meta.dirname, '../../../.local/tmp');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const organizationId = 'org_browser_test';

let harness: Harness;
let browser: Browser;

beforeAll(async () => {
  harness = await startHarness();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  mkdirSync(shots, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await harness?.stop();
});

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** axe-core on the page at both widths (serious and critical violations fail), with a picture at each. */
async function audit(page: Page, name: string): Promise<void> {
  for (const [size, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    await page.setViewportSize(viewport);
    // Evaluated, not added as a script: the pages' CSP refuses scripts.
    if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE_SOURCE);
    const violations = (await page.evaluate(async () => {
      const { axe } = globalThis as unknown as { axe: { run: (options: object) => Promise<{ violations: unknown[] }> } };
      return (await axe.run({ resultTypes: ['violations'] })).violations;
    })) as AxeViolation[];
    const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    expect(serious, `axe on ${name} at ${size}`).toEqual([]);
    // Nothing wider than the screen: the page reads without sideways scrolling on a phone.
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), `${name} fits ${viewport.width}px`).toBe(true);
    await page.screenshot({ path: path.join(shots, `local-processor-${name}-${size}.png`), fullPage: true, animations: 'disabled', caret: 'hide' });
  }
  await page.setViewportSize(DESKTOP);
}

/** The webhooks received once every one sent so far is settled (they go out in order, one at a time). */
async function settled(): Promise<number> {
  await harness.processor.webhooksSettled();
  return harness.receiver.webhooks.length;
}

async function fillCard(page: Page, card: string): Promise<void> {
  await page.getByLabel('Card number').fill(card);
  await page.getByLabel('Expiry date').fill('12 / 34');
  await page.getByLabel('Security code').fill('123');
  await page.getByLabel('Name on card').fill('Ada Lovelace');
}

describe('the hosted checkout and portal pages', () => {
  it('declines a card with a message by its field, then subscribes and returns to Sigil with the webhooks sent', async () => {
    const customerId = await harness.adapter.createCustomer({ organizationId, email: 'owner@example.com' });
    const successUrl = `${harness.receiver.url}/billing/success?session={CHECKOUT_SESSION_ID}`;
    const checkout = await harness.adapter.createCheckout({ customerId, organizationId, plan: 'platform', successUrl, cancelUrl: `${harness.receiver.url}/billing/cancel` });
    const page = await browser.newPage({ viewport: DESKTOP });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));

    await page.goto(checkout.url);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Subscribe to Sigil Platform');
    await expect(page.locator('.price').textContent()).resolves.toBe('$199.00 per month');
    await audit(page, 'checkout');

    await fillCard(page, '4000 0000 0000 0002');
    const [declined] = await Promise.all([page.waitForResponse((response) => response.request().method() === 'POST'), page.getByRole('button', { name: 'Subscribe' }).click()]);
    expect(declined.status()).toBe(402);
    await expect(page.getByRole('alert').textContent()).resolves.toBe('Your card was declined.');
    await expect(page.getByLabel('Card number').getAttribute('aria-describedby')).resolves.toBe('card-error');
    await audit(page, 'checkout-declined');
    expect(harness.processor.events().filter((event) => event.type.startsWith('customer.subscription') && JSON.stringify(event).includes(customerId))).toEqual([]);

    const from = await settled();
    await fillCard(page, '4242 4242 4242 4242');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await page.waitForURL(`${harness.receiver.url}/billing/success?session=${checkout.id}`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Back in Sigil');

    await expect.poll(() => harness.receiver.webhooks.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(from + 2);
    const events = await Promise.all(harness.receiver.webhooks.slice(from, from + 2).map((webhook) => harness.adapter.parseWebhook(webhook.body, webhook.headers['processor-signature'] as string, new Date())));
    expect(events.map((event) => event.kind)).toEqual(['checkout.completed', 'subscription']);
    expect(events[1]).toMatchObject({ subscription: { plan: 'platform', organizationId, paymentMethod: { brand: 'visa', last4: '4242' } } });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows the plan and the card in the portal, cancels at the period end and replaces the card', async () => {
    const customerId = await harness.adapter.createCustomer({ organizationId });
    const checkout = await harness.adapter.createCheckout({ customerId, organizationId, plan: 'team', successUrl: `${harness.receiver.url}/billing/success`, cancelUrl: `${harness.receiver.url}/billing` });
    const subscribed = await settled();
    expect((await payCheckout(checkout.url, '4242 4242 4242 4242')).status).toBe(303);
    await expect.poll(() => harness.receiver.webhooks.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(subscribed + 2);
    const returnUrl = `${harness.receiver.url}/billing`;
    const { url } = await harness.adapter.createPortal({ customerId, returnUrl });
    const page = await browser.newPage({ viewport: DESKTOP });
    await page.goto(url);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Billing');
    await expect(page.getByText('Visa ending in 4242').isVisible()).resolves.toBe(true);
    await expect(page.getByRole('link', { name: 'Return to Sigil' }).getAttribute('href')).resolves.toBe(returnUrl);
    await audit(page, 'portal');

    const from = await settled();
    await page.getByRole('button', { name: 'Cancel subscription' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toMatch(/^Your subscription will end on /);
    await expect(page.getByRole('button', { name: 'Renew subscription' }).isVisible()).resolves.toBe(true);

    await page.getByRole('link', { name: 'Update card' }).click();
    await audit(page, 'portal-card');
    await fillCard(page, '4242424242424242');
    await page.getByRole('button', { name: 'Save card' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('Your card was updated.');

    await expect.poll(() => harness.receiver.webhooks.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(from + 2);
    const events = await Promise.all(harness.receiver.webhooks.slice(from, from + 2).map((webhook) => harness.adapter.parseWebhook(webhook.body, webhook.headers['processor-signature'] as string, new Date())));
    expect(events).toMatchObject([{ kind: 'subscription', subscription: { cancelAtPeriodEnd: true } }, { kind: 'subscription', subscription: { paymentMethod: { last4: '4242' } } }]);

    await page.getByRole('link', { name: 'Return to Sigil' }).click();
    await page.waitForURL(returnUrl);
    await page.close();
  });
});
