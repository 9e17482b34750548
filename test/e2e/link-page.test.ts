import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { Accessibility, DESKTOP, expectHeading, launchChromium, PageWatch, signOnPage, tabTo } from './dashboard-pages.ts';
import { auditPage, mailTo, teamWithTemplate, type OwnerApi } from './hosted-pages.ts';
import { startTestStack, until, type TestStack } from './stack.ts';

/**
 * The hosted always-on link page (`/l/{id}`) in Chromium against the whole stack: an organization on Team (paid through
 * billing's real flow) publishes a link; a visitor gives their name and e-mail, types a wrong code (the tries left shown
 * beside the field), then the e-mailed one, signs on the signing page it leads to, and the envelope is sealed. A second
 * start of one address past `perEmailPerDay` says when to try again; a paused link and an unknown one take the page.
 */
let stack: TestStack;
let browser: Browser;
let page: Page;
let watch: PageWatch;
let api: OwnerApi;
let templateId: string;
const owner = `link-page.${Date.now()}@example.com`;
const a11y = new Accessibility();
const SOON = { timeout: 20_000 };
const audit = (name: string) => auditPage(page, a11y, name);

/** A link for the template's client role, in test mode (links take the caller's mode). */
async function createLink(title: string, limits: Record<string, unknown> = {}): Promise<{ id: string; url: string }> {
  const created = await api('POST', '/v1/signing-links', { template: templateId, version: 'latest', role: 'client', title, limits: { perEmailPerDay: 3, perIpPerHour: 20, dailyCap: null, ...limits } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

async function start(name: string, email: string): Promise<void> {
  await page.getByLabel('Full name').fill(name);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByRole('button', { name: 'Continue' }).click();
}

beforeAll(async () => {
  [stack, browser] = await Promise.all([startTestStack(), launchChromium()]);
  ({ api, templateId } = await teamWithTemplate(stack, owner, {
    roles: [{ name: 'client', order: 1 }],
    fields: [
      { id: 'client_signature', role: 'client', type: 'signature', required: true, page: 1, x: 72, y: 560, width: 200, height: 50 },
      { id: 'company', role: 'client', type: 'text', required: true, page: 1, x: 72, y: 500, width: 200, height: 24 },
    ],
  }));
  page = await browser.newPage({ viewport: DESKTOP });
  watch = new PageWatch(page);
}, 240_000);

afterEach(async (context) => watch?.afterStep(context.task));

afterAll(async () => {
  PageWatch.reportLesser(a11y);
  await browser?.close();
  await stack?.stop();
});

describe('the hosted link page', () => {
  let link: { id: string; url: string };

  it('shows the title, the organization and what the visitor will do, with labelled fields', async () => {
    link = await createLink('Consulting agreement');
    expect(link.url).toBe(`${stack.gatewayUrl}/l/${link.id}`);
    await page.goto(link.url);
    await expectHeading(page, 'Consulting agreement');
    await expect(page.getByRole('banner').textContent()).resolves.toContain('Analytical Engines');
    await expect(page.getByRole('region', { name: 'Consulting agreement' }).getByRole('listitem').allTextContents()).resolves.toEqual(expect.arrayContaining(['Sign']));
    await expect(page.locator('#test-banner').isVisible()).resolves.toBe(true);
    await audit('link-details');
  });

  it('says what is missing beside the field, before calling the API', async () => {
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect(page.locator('#name-error').textContent()).resolves.toBe('Enter your full name.');
    await expect(page.getByLabel('Full name').getAttribute('aria-invalid')).resolves.toBe('true');
  });

  it('takes the visitor through the e-mailed code (a wrong one first) to the signing page, and the envelope is sealed', async () => {
    const since = new Date().toISOString();
    await start('Ada Lovelace', owner);
    await expectHeading(page, 'Check your e-mail');
    await expect(page.locator('#sent-to').textContent()).resolves.toBe(`We sent a code to ${owner}.`);
    const code = /(\d{6})$/.exec((await mailTo(stack, owner, since, (m) => /Your code to sign/.test(m.subject))).subject)![1]!;
    const wrong = code === '000000' ? '111111' : '000000';
    await page.getByLabel('6-digit code').fill(wrong);
    await page.getByRole('button', { name: 'Verify and continue' }).click();
    await expect.poll(() => page.locator('#code-error').textContent(), SOON).toMatch(/not the one we sent \(4 tries left\)/);
    await expect(page.getByLabel('6-digit code').getAttribute('aria-invalid')).resolves.toBe('true');
    await audit('link-code');
    await page.getByLabel('6-digit code').fill(code);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/sign$/, SOON);
    await signOnPage(page, 'Ada Lovelace', { company: 'Analytical Engines' });
    // The organization's only envelope, in the link's (test) mode.
    const sealed = await until(() => api('GET', '/v1/envelopes?testMode=true'), (r) => r.body.data?.[0]?.seal === 'sealed', 60_000);
    expect(sealed.body.data).toHaveLength(1);
    expect(sealed.body.data[0]).toMatchObject({ status: 'completed', testMode: true, recipients: [{ name: 'Ada Lovelace', email: owner, status: 'completed' }] });
  }, 120_000);

  it('says when a visitor past the per-address cap can try again', async () => {
    const capped = await createLink('Order form', { perEmailPerDay: 1 });
    await page.goto(capped.url);
    await expectHeading(page, 'Order form');
    await start('Grace Hopper', 'grace@example.com');
    await expectHeading(page, 'Check your e-mail');
    await tabTo(page, page.getByRole('button', { name: 'Start again' }));
    await page.keyboard.press('Enter');
    await expectHeading(page, 'Order form');
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => page.locator('#start-error').textContent(), SOON).toMatch(/(You can try again|That is) in /);
    await audit('link-capped');
  });

  it('a paused link and an unknown one take the whole page', async () => {
    expect((await api('PATCH', `/v1/signing-links/${link.id}`, { status: 'paused' })).status).toBe(200);
    await page.goto(link.url);
    await expectHeading(page, 'This link is paused');
    await audit('link-paused');
    await page.goto(`${stack.gatewayUrl}/l/lnk_NoSuchLink0000`);
    await expectHeading(page, 'This link is not available');
  });
});
