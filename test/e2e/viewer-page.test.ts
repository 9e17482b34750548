import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { Accessibility, DESKTOP, expectHeading, launchChromium, PageWatch, tabTo } from './dashboard-pages.ts';
import { auditPage, mailTo, teamWithTemplate, type OwnerApi } from './hosted-pages.ts';
import { bearer, call, startTestStack, until, type TestStack } from './stack.ts';

/**
 * The hosted viewer page (`/view`) in Chromium against the whole stack: an organization on Team adds a viewer with
 * document access (the owner); the viewer opens the e-mailed link, watches both recipients sign live (the live region
 * says who), downloads the document, and loses access the moment the sender revokes them. A link that is not valid says
 * so. axe at both widths, screenshots of each state.
 */
let stack: TestStack;
let browser: Browser;
let page: Page;
let watch: PageWatch;
let api: OwnerApi;
let templateId: string;
const owner = `viewer-page.${Date.now()}@example.com`;
const a11y = new Accessibility();
const SOON = { timeout: 20_000 };
const audit = (name: string) => auditPage(page, a11y, name);

/** A recipient signs through the API (a session, its exchange, the submit). */
async function sign(envelopeId: string, recipientId: string, field: string, name: string): Promise<void> {
  const minted = await api('POST', `/v1/envelopes/${envelopeId}/sessions`, { recipient: recipientId });
  expect(minted.status, JSON.stringify(minted.body)).toBe(201);
  const exchanged = await call(stack.gatewayUrl, 'POST', '/v1/signing/exchange', { body: { token: minted.body.token } });
  const signed = await call(stack.gatewayUrl, 'POST', '/v1/signing/submit', { headers: bearer(exchanged.body.accessToken), body: { fields: { [field]: { kind: 'typed', text: name } }, consent: true } });
  expect(signed.status, JSON.stringify(signed.body)).toBe(200);
}

beforeAll(async () => {
  [stack, browser] = await Promise.all([startTestStack(), launchChromium()]);
  ({ api, templateId } = await teamWithTemplate(stack, owner, {
    roles: [{ name: 'client', order: 1 }, { name: 'consultant', order: 2 }],
    fields: [
      { id: 'client_signature', role: 'client', type: 'signature', required: true, page: 1, x: 72, y: 560, width: 200, height: 50 },
      { id: 'consultant_signature', role: 'consultant', type: 'signature', required: true, page: 1, x: 320, y: 560, width: 200, height: 50 },
    ],
  }));
  page = await browser.newPage({ viewport: DESKTOP, acceptDownloads: true });
  watch = new PageWatch(page);
}, 240_000);

afterEach(async (context) => watch?.afterStep(context.task));

afterAll(async () => {
  PageWatch.reportLesser(a11y);
  await browser?.close();
  await stack?.stop();
});

describe('the hosted viewer page', () => {
  let envelope: { id: string; testMode: boolean; recipients: Array<{ id: string }>; viewers: Array<{ id: string }> };
  let link: string;

  it('opens from the e-mailed link: the title, each recipient and where they stand, live', async () => {
    const since = new Date().toISOString();
    const created = await api('POST', '/v1/envelopes', {
      template: templateId,
      recipients: [{ role: 'client', name: 'Ada Lovelace', email: 'ada@example.com' }, { role: 'consultant', name: 'Grace Hopper', email: 'grace@example.com' }],
      viewers: [{ email: owner, name: 'Charles Babbage', documentAccess: true }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    envelope = (await until(() => api('GET', `/v1/envelopes/${created.body.id}`), (r) => r.body.status === 'sent')).body;
    const mail = await mailTo(stack, owner, since, (m) => /\/view#token=sglv_/.test(m.text));
    link = /(\S*\/view#token=sglv_[A-Za-z0-9_-]+)/.exec(mail.text)![1]!;
    await page.goto(link);
    await expectHeading(page, 'Consulting agreement');
    expect(new URL(page.url()).hash, 'the token leaves the address bar').toBe('');
    const rows = page.getByRole('table').getByRole('row');
    await expect.poll(() => rows.count()).toBe(3);
    await expect(page.getByRole('row', { name: /Ada Lovelace client Waiting to sign/ }).count()).resolves.toBe(1);
    await expect(page.getByRole('row', { name: /Grace Hopper consultant Not sent yet/ }).count()).resolves.toBe(1);
    await expect.poll(() => page.locator('#live-text').textContent(), SOON).toMatch(/^Live/);
    await expect(page.locator('#badge').textContent()).resolves.toBe('In progress');
    // A dashboard session sends live envelopes: no test banner.
    await expect(page.locator('#test-banner').isVisible()).resolves.toBe(envelope.testMode);
    await audit('viewer-in-progress');
  });

  it('announces each signature as it happens, without a reload', async () => {
    await sign(envelope.id, envelope.recipients[0]!.id, 'client_signature', 'Ada Lovelace');
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Ada Lovelace signed.' }).count(), SOON).toBe(1);
    await expect(page.getByRole('row', { name: /Ada Lovelace client Signed/ }).count()).resolves.toBe(1);
    await expect(page.locator('#progress-text').textContent()).resolves.toBe('1 of 2 signed');
  });

  it('downloads the document with the keyboard', async () => {
    const button = page.getByRole('button', { name: 'Download the document' });
    await tabTo(page, button);
    const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
    expect(download.suggestedFilename()).toBe('Consulting agreement.pdf');
    const bytes = await new Response((await download.createReadStream()) as unknown as ReadableStream).arrayBuffer();
    expect(Buffer.from(bytes).subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('shows the envelope completed once the last recipient signs', async () => {
    await sign(envelope.id, envelope.recipients[1]!.id, 'consultant_signature', 'Grace Hopper');
    await expect.poll(() => page.locator('#badge').textContent(), SOON).toBe('Completed');
    await expect(page.getByRole('status').textContent()).resolves.toContain('Grace Hopper signed.');
    await expect(page.locator('#progress-text').textContent()).resolves.toBe('Everyone has signed');
    await expect(page.getByRole('button', { name: 'Download the document' }).isVisible()).resolves.toBe(true);
    await audit('viewer-completed');
  });

  it('says access ended as soon as the sender revokes the viewer, and the link no longer opens', async () => {
    const revoked = await api('DELETE', `/v1/envelopes/${envelope.id}/viewers/${envelope.viewers[0]!.id}`);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(204);
    await expectHeading(page, 'Your access has ended');
    await audit('viewer-revoked');
    await page.goto('about:blank');
    await page.goto(link);
    await expectHeading(page, 'This link is not valid');
    await expect(page.locator('#ended-text').textContent()).resolves.toMatch(/not valid/);
  });

  it('says a made-up link is not valid', async () => {
    await page.goto('about:blank');
    await page.goto(`${stack.gatewayUrl}/view#token=sglv_madeUpToken123`);
    await expectHeading(page, 'This link is not valid');
    await audit('viewer-invalid');
  });
});
