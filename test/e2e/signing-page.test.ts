import { createServer, type Server } from 'node:http';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { chromium, type Browser, type Page } from 'playwright-core';
import { call, startTestStack, type TestStack } from './stack.ts';

/**
 * The hosted signing page in Debian's Chromium: one recipient types a signature and ticks a box, the next draws one
 * with the mouse, another declines; the embeddable component signs inside a page of another origin.
 */
let stack: TestStack;
let browser: Browser;
let auth: Record<string, string>;
let templateId: string;
let host: Server;
let hostUrl: string;
const shots = path.resolve(import.meta.dirname, '../../.local/screenshots');

async function pdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([612, 792]);
  page.drawText('Mutual non-disclosure agreement', { x: 72, y: 720, size: 18, font });
  page.drawText('Signed by the parties below.', { x: 72, y: 690, size: 12, font });
  return Buffer.from(await doc.save());
}

async function envelope(first: Record<string, unknown> = {}): Promise<{ id: string; recipients: Array<{ id: string }> }> {
  const created = await call(stack.gatewayUrl, 'POST', '/v1/envelopes', {
    headers: auth,
    body: { template: templateId, recipients: [{ role: 'discloser', name: 'Ada Lovelace', email: 'ada@example.com', ...first }, { role: 'recipient', name: 'Grace Hopper', email: 'grace@example.com' }] },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  for (let i = 0; i < 300; i++) {
    const current = await call(stack.gatewayUrl, 'GET', `/v1/envelopes/${created.body.id}`, { headers: auth });
    if (current.body.status === 'sent') return current.body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the envelope was never sent');
}

async function signingUrl(envelopeId: string, recipientId: string): Promise<string> {
  const session = await call(stack.gatewayUrl, 'POST', `/v1/envelopes/${envelopeId}/sessions`, { headers: auth, body: { recipient: recipientId } });
  expect(session.status, JSON.stringify(session.body)).toBe(201);
  return session.body.url as string;
}

async function openPage(url: string, viewport = { width: 900, height: 1000 }): Promise<Page> {
  const page = await browser.newPage({ viewport, hasTouch: viewport.width < 600 });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => message.type() === 'error' && problems.push(`console: ${message.text()}`));
  await page.goto(url);
  try {
    await page.waitForSelector('[data-field] >> nth=0', { timeout: 15_000 });
  } catch (error) {
    throw new Error(`the page never showed its fields (status: ${await page.locator('#status').textContent()}; ${problems.join(' | ')})`, { cause: error });
  }
  return page;
}

beforeAll(async () => {
  stack = await startTestStack();
  auth = { authorization: `Bearer ${stack.seed.testApiKey}` };
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  templateId = (await call(stack.gatewayUrl, 'POST', '/v1/templates', { headers: auth, body: { name: 'Mutual NDA' } })).body.id;
  const upload = await fetch(`${stack.gatewayUrl}/v1/templates/${templateId}/files`, { method: 'POST', headers: { ...auth, 'content-type': 'application/pdf' }, body: await pdf() });
  const file = ((await upload.json()) as { id: string }).id;
  const draft = await call(stack.gatewayUrl, 'PUT', `/v1/templates/${templateId}/draft`, {
    headers: auth,
    body: {
      file,
      roles: [{ name: 'discloser', order: 1 }, { name: 'recipient', order: 2 }],
      fields: [
        { id: 'discloser_signature', role: 'discloser', type: 'signature', required: true, page: 1, x: 72, y: 560, width: 200, height: 50 },
        { id: 'discloser_agrees', role: 'discloser', type: 'checkbox', required: true, page: 1, x: 72, y: 630, width: 16, height: 16 },
        { id: 'recipient_signature', role: 'recipient', type: 'signature', required: true, page: 1, x: 320, y: 560, width: 200, height: 50 },
      ],
      variables: [],
    },
  });
  expect(draft.status, JSON.stringify(draft.body)).toBe(200);
  expect((await call(stack.gatewayUrl, 'POST', `/v1/templates/${templateId}/publish`, { headers: auth })).status).toBe(201);
  mkdirSync(shots, { recursive: true });
  // An integrator's page on another origin, embedding the component from the signing host.
  host = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    res.setHeader('content-type', 'text/html');
    res.end(`<!doctype html><html><body><h1>Acme portal</h1><p id="outcome">waiting</p>
<script type="module" src="${stack.gatewayUrl}/sign/embed.js"></script>
<sigil-signing url="${url.searchParams.get('session')}" height="900px"></sigil-signing>
<script type="module">
  const el = document.querySelector('sigil-signing');
  for (const type of ['ready', 'signed', 'declined', 'error']) el.addEventListener('sigil:' + type, (e) => { document.getElementById('outcome').textContent = type + ':' + e.detail.envelopeId; });
</script></body></html>`);
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  hostUrl = `http://localhost:${(host.address() as { port: number }).port}`;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  host?.close();
  await stack?.stop();
});

describe('the hosted signing page', () => {
  it('signs with a typed signature and a checkbox, then the next recipient draws one with the mouse', async () => {
    const env = await envelope();
    const first = await openPage(await signingUrl(env.id, env.recipients[0]!.id));
    expect(new URL(first.url()).hash).toBe('');
    await expect(first.locator('#title').textContent()).resolves.toBe('Mutual NDA');
    await expect(first.locator('#test-banner').isVisible()).resolves.toBe(true);
    await expect(first.locator('canvas[aria-label="Page 1 of 1"]').count()).resolves.toBe(1);
    expect(await first.locator('#finish').isDisabled()).toBe(true);
    await first.click('[data-field="discloser_signature"]');
    await first.fill('#typed', 'Ada Lovelace');
    await first.click('#apply-signature');
    await first.check('[data-field="discloser_agrees"] input');
    await first.check('#consent');
    await first.screenshot({ path: path.join(shots, 'signing-page-typed.png'), fullPage: true });
    await first.click('#finish');
    await first.waitForSelector('text=Thank you: you have signed.');
    await first.close();

    const second = await openPage(await signingUrl(env.id, env.recipients[1]!.id));
    await expect(second.locator('[data-field="discloser_signature"]').textContent()).resolves.toContain('Ada Lovelace');
    await second.click('[data-field="recipient_signature"]');
    await second.click('#tab-draw');
    const pad = (await second.locator('#pad').boundingBox())!;
    await second.mouse.move(pad.x + 20, pad.y + pad.height / 2);
    await second.mouse.down();
    for (let i = 1; i <= 20; i++) await second.mouse.move(pad.x + 20 + i * 15, pad.y + pad.height / 2 + (i % 2 ? -15 : 15));
    await second.mouse.up();
    await second.click('#apply-signature');
    await expect(second.locator('[data-field="recipient_signature"] img').count()).resolves.toBe(1);
    await second.keyboard.press('Tab');
    await second.check('#consent');
    await second.click('#finish');
    await second.waitForSelector('text=Everyone has signed');
    await second.close();
    const done = (await call(stack.gatewayUrl, 'GET', `/v1/envelopes/${env.id}`, { headers: auth })).body;
    expect(done.status).toBe('completed');
  }, 120_000);

  it('the issue\'s story: the first recipient signs on the hosted page after a code from the stack\'s inbox, the second in the embedded component', async () => {
    const owner = stack.seed.ownerEmail;
    const env = await envelope({ email: owner, name: 'The Owner', verification: 'email' });
    const page = await browser.newPage({ viewport: { width: 900, height: 1000 } });
    await page.goto(await signingUrl(env.id, env.recipients[0]!.id));
    await page.waitForSelector('#otp:not([hidden])');
    expect(await page.locator('[data-field]').count()).toBe(0);
    const since = new Date().toISOString();
    await page.click('#otp-send');
    let code: string | undefined;
    for (let i = 0; i < 200 && !code; i++) {
      const messages = (await (await fetch(`${stack.infra.smtp.inboxUrl}/messages`)).json()) as Array<{ to: string[]; subject: string; receivedAt: string }>;
      const mail = messages.find((m) => m.to.includes(owner) && m.subject.includes('Your code to sign “Mutual NDA”') && m.receivedAt >= since);
      code = mail ? /(\d{6})$/.exec(mail.subject)?.[1] : undefined;
      if (!code) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(code).toMatch(/^\d{6}$/);
    await page.fill('#otp-code', code!);
    await page.click('#otp-verify');
    await page.waitForSelector('[data-field="discloser_signature"]');
    await page.click('[data-field="discloser_signature"]');
    await page.fill('#typed', 'The Owner');
    await page.click('#apply-signature');
    await page.check('[data-field="discloser_agrees"] input');
    await page.check('#consent');
    await page.click('#finish');
    await page.waitForSelector('text=Thank you: you have signed.');
    await page.close();

    // The second recipient signs in the embedded component, on the integrator's page: the envelope completes.
    const host = await browser.newPage({ viewport: { width: 1000, height: 1100 } });
    await host.goto(`${hostUrl}/?session=${encodeURIComponent(await signingUrl(env.id, env.recipients[1]!.id))}`);
    await host.waitForSelector(`text=ready:${env.id}`);
    const frame = host.frameLocator('sigil-signing iframe');
    await expect(frame.locator('[data-field="discloser_signature"]').textContent()).resolves.toContain('The Owner');
    await frame.locator('[data-field="recipient_signature"]').click();
    await frame.locator('#typed').fill('Grace Hopper');
    await frame.locator('#apply-signature').click();
    await frame.locator('#consent').check();
    await frame.locator('#finish').click();
    await host.waitForSelector(`text=signed:${env.id}`);
    await host.close();
    const done = (await call(stack.gatewayUrl, 'GET', `/v1/envelopes/${env.id}`, { headers: auth })).body;
    expect(done).toMatchObject({ status: 'completed', seal: 'pending' });
  }, 90_000);

  it('can be signed with the keyboard alone', async () => {
    const env = await envelope();
    const page = await openPage(await signingUrl(env.id, env.recipients[0]!.id));
    await page.focus('[data-field="discloser_signature"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#signature-dialog[open]');
    await page.keyboard.type('Ada K. Lovelace');
    await page.keyboard.press('Enter');
    await expect(page.locator('[data-field="discloser_signature"]').textContent()).resolves.toContain('Ada K. Lovelace');
    await page.focus('[data-field="discloser_agrees"] input');
    await page.keyboard.press('Space');
    await page.focus('#consent');
    await page.keyboard.press('Space');
    await page.focus('#finish');
    await page.keyboard.press('Enter');
    await page.waitForSelector('text=Thank you: you have signed.');
    await page.close();
  }, 60_000);

  it('declines with a reason, on a phone-sized screen', async () => {
    const env = await envelope();
    const page = await openPage(await signingUrl(env.id, env.recipients[0]!.id), { width: 390, height: 844 });
    const field = (await page.locator('[data-field="discloser_signature"]').boundingBox())!;
    expect(field.width).toBeGreaterThan(80);
    expect(await page.locator('#decline').isVisible()).toBe(true);
    await page.screenshot({ path: path.join(shots, 'signing-page-phone.png') });
    await page.click('#decline');
    await page.fill('#decline-reason', 'Not the right counterparty');
    await page.click('#confirm-decline');
    await page.waitForSelector('text=You declined to sign.');
    await page.close();
    const declined = (await call(stack.gatewayUrl, 'GET', `/v1/envelopes/${env.id}`, { headers: auth })).body;
    expect(declined.status).toBe('declined');
  }, 60_000);

  it('a used link says so instead of showing the document', async () => {
    const env = await envelope();
    const url = await signingUrl(env.id, env.recipients[0]!.id);
    await call(stack.gatewayUrl, 'POST', '/v1/signing/exchange', { body: { token: new URL(url).hash.slice('#token='.length) } });
    const page = await browser.newPage();
    await page.goto(url);
    await page.waitForSelector('#status.error');
    await expect(page.locator('#status').textContent()).resolves.toMatch(/used, replaced or has expired/);
    await page.close();
  }, 60_000);

  it('works as an embedded component in a page of another origin, telling its host what happened', async () => {
    const env = await envelope();
    const page = await browser.newPage({ viewport: { width: 1000, height: 1100 } });
    await page.goto(`${hostUrl}/?session=${encodeURIComponent(await signingUrl(env.id, env.recipients[0]!.id))}`);
    await page.waitForSelector(`text=ready:${env.id}`);
    const frame = page.frameLocator('sigil-signing iframe');
    await frame.locator('[data-field="discloser_signature"]').click();
    await frame.locator('#typed').fill('Ada L.');
    await frame.locator('#apply-signature').click();
    await frame.locator('[data-field="discloser_agrees"] input').check();
    await frame.locator('#consent').check();
    await frame.locator('#finish').click();
    await page.waitForSelector(`text=signed:${env.id}`);
    await page.screenshot({ path: path.join(shots, 'signing-embedded.png'), fullPage: true });
    await page.close();
  }, 60_000);

  it('the verification page checks a sealed document dropped in the browser, and a certificate linked by its hash', async () => {
    let sealed: { id: string } | undefined;
    for (let i = 0; i < 300 && !sealed; i++) {
      sealed = (await call(stack.gatewayUrl, 'GET', '/v1/envelopes?seal=sealed', { headers: auth })).body.data[0];
      if (!sealed) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(sealed, 'a completed envelope was sealed').toBeDefined();
    const bytes = async (version: string) => Buffer.from(await (await fetch(`${stack.gatewayUrl}/v1/envelopes/${sealed!.id}/document?version=${version}`, { headers: auth })).arrayBuffer());
    const file = path.join(shots, 'sealed-for-verify.pdf');
    writeFileSync(file, await bytes('sealed'));
    // The anchor follows within a second on the test stack: wait for it through the API, so the page answers once and finally.
    const sealedHash = createHash('sha256').update(readFileSync(file)).digest('hex');
    let anchored = false;
    for (let i = 0; i < 120 && !anchored; i++) {
      anchored = (await call(stack.gatewayUrl, 'POST', '/v1/public/verify', { body: { sha256: sealedHash } })).body.anchor != null;
      if (!anchored) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(anchored, 'an anchor covers the sealed document').toBe(true);
    const page = await browser.newPage({ viewport: { width: 900, height: 1000 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${stack.gatewayUrl}/verify`);
    await page.setInputFiles('#file', file);
    await page.waitForSelector('#result:not([hidden])');
    await expect(page.locator('#verdict').textContent()).resolves.toBe('Verified');
    const checks = await page.locator('#checks li').evaluateAll((items) => items.map((li) => [li.className, li.textContent]));
    expect(checks.map(([state]) => state)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    expect(checks.at(-1)![1]).toMatch(/Ed25519 signature holds/);
    await expect(page.locator('#test-banner').isVisible()).resolves.toBe(true);
    await page.screenshot({ path: path.join(shots, 'verify-page.png'), fullPage: true });

    const certificate = createHash('sha256').update(await bytes('certificate')).digest('hex');
    await page.goto(`${stack.gatewayUrl}/verify#sha256=${certificate}`);
    await page.waitForSelector('#result:not([hidden])');
    await expect(page.locator('#verdict').textContent()).resolves.toBe('Verified');
    await expect(page.locator('#facts').textContent()).resolves.toContain('certificate of completion');
    await page.goto(`${stack.gatewayUrl}/verify#sha256=${'0'.repeat(64)}`);
    await page.waitForSelector('#result:not([hidden])');
    await expect(page.locator('#verdict').textContent()).resolves.toBe('Not found');
    expect(problems).toEqual([]);
    await page.close();
  });
});
