import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { Accessibility, DESKTOP, expectHeading, launchChromium, PHONE, screenshots, tabTo, PageWatch } from './dashboard-pages.ts';
import { signUp, startTestStack, type TestStack } from './stack.ts';

/**
 * The dashboard's billing page in Chromium (issue 28): a new organization on Free sees its plan, no usage and no
 * invoice; upgrades to Team on the local processor's hosted checkout, where a declined card is refused first; comes
 * back to the page, which shows Team, the card and the upcoming invoice once the processor's webhook has arrived;
 * then switches to Business in place, with the keyboard, after a confirmation. axe and screenshots at both widths.
 */
let stack: TestStack;
let browser: Browser;
let page: Page;
const a11y = new Accessibility();
/** How long a condition on the page may take to hold (the waits end as soon as it holds). */
const SOON = { timeout: 20_000 };
/** The page polls every 2 s for up to 30 s after a checkout: the plan shows within that. */
const WITHIN_THE_POLL = { timeout: 35_000 };
let watch: PageWatch;

const region = (name: string): Locator => page.getByRole('region', { name, exact: true });

/** Audits the page at desktop and phone widths and photographs it, once it has loaded what it shows. */
async function record(name: string): Promise<void> {
  await expect.poll(() => page.getByRole('status').filter({ hasText: /^Loading / }).count(), { ...SOON, message: `${name} still loading` }).toBe(0);
  await a11y.check(page, name);
  await page.setViewportSize(PHONE);
  await a11y.check(page, `${name} (phone)`);
  await page.setViewportSize(DESKTOP);
  await screenshots(page, name);
}

/** Types a card into the processor's hosted checkout form and submits it. */
async function payWith(card: string): Promise<void> {
  await page.getByLabel('Card number').fill(card);
  await page.getByLabel('Expiry date').fill('12 / 34');
  await page.getByLabel('Security code').fill('123');
  await page.getByLabel('Name on card').fill('Ada Byron');
  await page.getByRole('button', { name: 'Subscribe' }).click();
}

beforeAll(async () => {
  [stack, browser] = await Promise.all([startTestStack(), launchChromium()]);
  const { cookie } = await signUp(stack.gatewayUrl, `billing.${Date.now()}@example.com`, 'Difference Engines');
  const context = await browser.newContext({ viewport: DESKTOP });
  const [name, value] = cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: stack.gatewayUrl }]);
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
  watch = new PageWatch(page);
}, 180_000);

afterEach(async ({ task }) => watch?.afterStep(task));

afterAll(async () => {
  PageWatch.reportLesser(a11y);
  await browser?.close();
  await stack?.stop();
});

describe('the billing page in Chromium', () => {
  it('shows a new organization on Free, with none of its 100 included envelopes used and no invoice', async () => {
    await page.goto(`${stack.gatewayUrl}/app/settings/billing`);
    await expectHeading(page, 'Billing');
    const plan = region('Current plan');
    await expect.poll(() => plan.textContent(), SOON).toContain('Free');
    expect(await plan.textContent()).toContain('No card on file');
    expect(await region('Usage this period').textContent()).toContain('0 of 100 included completed envelopes');
    const meter = page.getByRole('meter', { name: 'Included envelopes used' });
    expect([await meter.getAttribute('aria-valuenow'), await meter.getAttribute('aria-valuemax')]).toEqual(['0', '100']);
    // The daily chart is one image with its words, and the same numbers as a table for whoever wants them.
    const chart = page.getByRole('img', { name: 'Completed envelopes per day' });
    expect(await chart.getAttribute('aria-describedby')).toBeTruthy();
    expect(await region('Completed envelopes per day').textContent()).toMatch(/No envelopes completed (on|from) /);
    const invoice = region('Upcoming invoice');
    expect(await invoice.textContent()).toContain('None: Free costs nothing.');
    expect(await invoice.getByRole('table').count()).toBe(0);
    const plans = region('Plans');
    for (const [name, words] of [['Free', 'Current plan'], ['Pay-as-you-go', 'Add a card'], ['Team', 'Upgrade to Team'], ['Business', '$149'], ['Platform', '$199']] as const) {
      expect(await plans.getByRole('listitem').filter({ has: page.getByRole('heading', { name, exact: true }) }).textContent(), name).toContain(words);
    }
    await record('billing-free');
  }, 60_000);

  it('upgrades to Team on the hosted checkout: a declined card is refused there, a good one brings the person back to Team', async () => {
    await page.getByRole('button', { name: 'Upgrade to Team' }).click();
    await page.getByRole('heading', { level: 1, name: /^Subscribe to (Sigil )?Team$/ }).waitFor(SOON);
    expect(new URL(page.url()).origin).not.toBe(new URL(stack.gatewayUrl).origin);

    await payWith('4000 0000 0000 0002');
    await expect.poll(() => page.getByRole('alert').textContent(), SOON).toContain('Your card was declined.');
    await payWith('4242 4242 4242 4242');

    await expect.poll(() => page.url(), SOON).toMatch(/\/app\/settings\/billing/);
    await expectHeading(page, 'Billing');
    // The processor's webhook may have arrived before the page's first read: then the plan is already the new one.
    const notice = page.getByRole('status').filter({ hasText: /Payment received — your plan updates in a few seconds|You’re on Team now/ });
    await notice.waitFor(SOON);
    await page.getByRole('status').filter({ hasText: 'You’re on Team now.' }).waitFor(WITHIN_THE_POLL);
    // The return's parameters are gone: a reload does not wait again.
    expect(new URL(page.url()).search).toBe('');

    const plan = region('Current plan');
    expect(await plan.textContent()).toContain('Team');
    expect(await plan.textContent()).toContain('Visa ending in 4242');
    const invoice = region('Upcoming invoice').getByRole('table');
    const base = invoice.getByRole('row', { name: /Team plan, monthly/ });
    expect(await base.getByRole('cell').last().textContent()).toBe('$29.00');
    expect(await invoice.getByRole('row', { name: /^Total/ }).textContent()).toContain('$29.00');
    await record('billing-team');
  }, 120_000);

  it('switches to Business in place, with the keyboard, after saying what changes', async () => {
    await tabTo(page, page.getByRole('button', { name: 'Upgrade to Business' }));
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Switch to Business?' });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('$149 a month with 2,000 completed envelopes included');
    expect(await dialog.textContent()).toContain('Visa ending in 4242');
    await a11y.check(page, 'billing switch dialog');
    await tabTo(page, dialog.getByRole('button', { name: 'Switch to Business' }));
    await page.keyboard.press('Enter');

    await page.getByRole('status').filter({ hasText: 'You’re on Business now.' }).waitFor(WITHIN_THE_POLL);
    expect(await region('Current plan').textContent()).toContain('Business');
    const invoice = region('Upcoming invoice').getByRole('table');
    expect(await invoice.getByRole('row', { name: /^Total/ }).textContent()).toContain('$149.00');
    // The button that opened the dialog went with the old plan: the focus is on the news, not lost.
    expect(await page.getByRole('status').filter({ hasText: 'You’re on Business now.' }).evaluate((element) => (element as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement === element)).toBe(true);
  }, 60_000);

  it("opens the processor's portal for the card and the invoices, which leads back to the billing page", async () => {
    await page.getByRole('button', { name: 'Manage payment and invoices' }).click();
    const card = page.getByRole('region', { name: 'Payment method' });
    await expect.poll(() => card.textContent(), SOON).toContain('ending in 4242');
    expect(new URL(page.url()).origin).not.toBe(new URL(stack.gatewayUrl).origin);
    await page.getByRole('link', { name: 'Return to Sigil' }).click();
    await expectHeading(page, 'Billing');
    expect(new URL(page.url()).pathname).toBe('/app/settings/billing');
    await expect.poll(() => region('Current plan').textContent(), SOON).toContain('Business');
  }, 60_000);
});
