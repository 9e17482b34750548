import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { Accessibility, agreementPdf, DESKTOP, expectHeading, launchChromium, PHONE, PageWatch, screenshots, tabTo } from './dashboard-pages.ts';
import { call, signUp, startTestStack, until, type TestStack } from './stack.ts';

/**
 * Viewers and always-on signing links in the dashboard (issue 29), in Chromium on a stack of its own. On Free: the
 * signing-links page says links are not on the plan, with the way to upgrade; on the envelope page a viewer with
 * document access is refused beside its checkbox, one viewer is added, a second refused (Free allows one), and the
 * first opening of the viewer's page shows live. The organization then pays for Team through billing's real flow (the
 * local processor's checkout), adds a viewer who may see the document, revokes one after a confirmation, and creates a
 * signing link, sees a visitor's use of it live, copies, pauses, resumes and deletes it. axe at desktop and phone
 * widths, screenshots of each page.
 */
let stack: TestStack;
let browser: Browser;
let page: Page;
let watch: PageWatch;
let cookie: string;
const owner = `links.${Date.now()}@example.com`;
const a11y = new Accessibility();
/** How long a condition on the page may take to hold (the waits end as soon as it holds). */
const SOON = { timeout: 20_000 };
let templateId: string;
let envelopeId: string;

/** The API as the signed-in owner, in test mode like the dashboard. */
const api = (method: string, path: string, body?: unknown) => call(stack.gatewayUrl, method, path, { body, headers: { cookie, 'sigil-mode': 'test' } });

/** Audits the page at desktop and phone widths and photographs it, once it has loaded what it shows. */
async function record(name: string): Promise<void> {
  await expect.poll(() => page.getByRole('status').filter({ hasText: /^Loading / }).count(), { ...SOON, message: `${name} still loading` }).toBe(0);
  await a11y.check(page, name);
  await page.setViewportSize(PHONE);
  await a11y.check(page, `${name} (phone)`);
  await page.setViewportSize(DESKTOP);
  await screenshots(page, name);
}

const viewersSection = (): Locator => page.getByRole('region', { name: 'Viewers', exact: true });
const viewerRow = (email: string): Locator => page.getByRole('region', { name: 'Viewers table' }).getByRole('row').filter({ hasText: email });

/** Fills and submits "Add a viewer"; the dialog stays open on a refusal. */
async function addViewer(name: string, email: string, documentAccess: boolean): Promise<Locator> {
  await viewersSection().getByRole('button', { name: 'Add a viewer' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add a viewer' });
  await dialog.getByLabel('Name').fill(name);
  await dialog.getByLabel('E-mail').fill(email);
  const access = dialog.getByRole('checkbox', { name: 'Can see the document' });
  if (documentAccess) await access.check();
  await dialog.getByRole('button', { name: 'Add viewer' }).click();
  return dialog;
}

/** The viewer's status link from the stack's inbox (test mode e-mails members only: the viewer is the owner). */
async function viewerToken(since: string): Promise<string> {
  const mail = await until(
    async () => (await (await fetch(`${stack.infra.smtp.inboxUrl}/messages`)).json()) as Array<{ to: string[]; text: string; receivedAt: string }>,
    (messages) => messages.some((m) => m.to.includes(owner) && m.receivedAt >= since && /\/view#token=sglv_/.test(m.text)),
  );
  const text = mail.find((m) => m.to.includes(owner) && m.receivedAt >= since && /\/view#token=sglv_/.test(m.text))?.text ?? '';
  return /\/view#token=(sglv_[A-Za-z0-9]+)/.exec(text)?.[1] as string;
}

/** A dialog's submit went through: it closed (a refusal's words are what the failure says). */
async function closes(dialog: Locator): Promise<void> {
  const state = async () => ((await dialog.count()) === 0 ? 'closed' : (await dialog.getByRole('alert').allTextContents()).join(' ') || 'still open');
  await expect.poll(state, SOON).toBe('closed');
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
  ({ cookie } = await signUp(stack.gatewayUrl, owner, 'Analytical Engines'));
  const context = await browser.newContext({ viewport: DESKTOP });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.gatewayUrl });
  const [name, value] = cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: stack.gatewayUrl }]);
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
  watch = new PageWatch(page);

  // A published one-role template (the link's visitor signs it), and an envelope of it in progress.
  templateId = (await api('POST', '/v1/templates', { name: 'Mutual NDA' })).body.id;
  const upload = await fetch(`${stack.gatewayUrl}/v1/templates/${templateId}/files`, { method: 'POST', headers: { cookie, 'content-type': 'application/pdf' }, body: await agreementPdf() });
  expect(upload.status).toBe(201);
  const file = ((await upload.json()) as { id: string }).id;
  const draft = await api('PUT', `/v1/templates/${templateId}/draft`, {
    file,
    roles: [{ name: 'client', order: 1 }],
    fields: [{ id: 'client_signature', role: 'client', type: 'signature', required: true, page: 1, x: 72, y: 600, width: 200, height: 40 }],
  });
  expect(draft.status, JSON.stringify(draft.body)).toBe(200);
  expect((await api('POST', `/v1/templates/${templateId}/publish`)).status).toBe(201);
  const created = await api('POST', '/v1/envelopes?test_mode=true', { template: templateId, recipients: [{ role: 'client', name: 'Ada Lovelace', email: 'ada@example.com' }] });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  envelopeId = created.body.id;
}, 240_000);

afterEach(async ({ task }) => watch?.afterStep(task));

afterAll(async () => {
  PageWatch.reportLesser(a11y);
  await browser?.close();
  await stack?.stop();
});

describe('on the Free plan', () => {
  it('the signing-links page says links are not on the plan, with the way to the billing page', async () => {
    await page.goto(`${stack.gatewayUrl}/app/`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Signing links' }).click();
    await expectHeading(page, 'Signing links');
    const notice = page.getByRole('alert').filter({ hasText: 'Signing links are not on the Free plan.' });
    await notice.waitFor(SOON);
    expect(await notice.getByRole('link', { name: 'See plans and upgrade' }).getAttribute('href')).toBe('/app/settings/billing');
    expect(await page.getByRole('button', { name: 'New signing link' }).count()).toBe(0);
    await page.getByRole('cell', { name: /No test signing links yet/ }).waitFor(SOON);
    await record('signing-links-free');
  }, 60_000);

  it('refuses document access beside its checkbox, adds one viewer, and refuses a second with the plan’s words', async () => {
    await page.goto(`${stack.gatewayUrl}/app/envelopes/${envelopeId}`);
    await expectHeading(page, 'Mutual NDA');
    await expect.poll(() => viewersSection().textContent(), SOON).toContain('Nobody follows this envelope yet.');

    const dialog = await addViewer('Olive Owner', owner, true);
    const refused = dialog.getByRole('alert').filter({ hasText: /Document access .*is not on the Free plan/ });
    await refused.waitFor(SOON);
    expect(await dialog.getByRole('checkbox', { name: 'Can see the document' }).getAttribute('aria-describedby')).toContain('viewer-access-refused');
    expect(await refused.getByRole('link', { name: 'See plans and upgrade' }).getAttribute('href')).toBe('/app/settings/billing');
    await a11y.check(page, 'add viewer refused');
    await screenshots(page, 'viewer-refused');

    const since = new Date().toISOString();
    await dialog.getByRole('checkbox', { name: 'Can see the document' }).uncheck();
    await dialog.getByRole('button', { name: 'Add viewer' }).click();
    await closes(dialog);
    const row = viewerRow(owner);
    await row.waitFor(SOON);
    expect(await row.textContent()).toMatch(/Olive Owner.*Status only.*Not opened yet.*active/);

    const second = await addViewer('Audit Desk', 'audit@example.com', false);
    await second.getByRole('alert').filter({ hasText: /allows 1 viewer/ }).waitFor(SOON);
    await second.getByRole('button', { name: 'Cancel' }).click();
    await second.waitFor({ state: 'detached' });

    // The viewer opens their page: the first opening shows on the envelope page, live (its trail's event).
    const exchanged = await call(stack.gatewayUrl, 'POST', '/v1/viewer/exchange', { body: { token: await viewerToken(since) } });
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
    const status = await call(stack.gatewayUrl, 'GET', '/v1/viewer/envelope', { headers: { authorization: `Bearer ${exchanged.body.accessToken}` } });
    expect(status.status, JSON.stringify(status.body)).toBe(200);
    await expect.poll(async () => (await row.getByRole('cell').nth(2).textContent()) ?? '', SOON).not.toContain('Not opened yet');
    expect(await row.locator('time').count()).toBe(1);
    await record('envelope-viewers-free');
  }, 90_000);
});

describe('on Team, paid through the billing page', () => {
  it('upgrades on the local processor’s checkout', async () => {
    await page.goto(`${stack.gatewayUrl}/app/settings/billing`);
    await expectHeading(page, 'Billing');
    await page.getByRole('button', { name: 'Upgrade to Team' }).click();
    await page.getByRole('heading', { level: 1, name: /^Subscribe to (Sigil )?Team$/ }).waitFor(SOON);
    await payWith('4242 4242 4242 4242');
    await expect.poll(() => page.url(), SOON).toMatch(/\/app\/settings\/billing/);
    await page.getByRole('status').filter({ hasText: 'You’re on Team now.' }).waitFor({ timeout: 35_000 });
  }, 90_000);

  it('adds a viewer who may see the document, and revokes one after a confirmation', async () => {
    await page.goto(`${stack.gatewayUrl}/app/envelopes/${envelopeId}`);
    await expectHeading(page, 'Mutual NDA');
    await closes(await addViewer('Audit Desk', 'audit@example.com', true));
    const audit = viewerRow('audit@example.com');
    await audit.waitFor(SOON);
    expect(await audit.textContent()).toContain('Can see the document');

    const first = viewerRow(owner);
    await tabTo(page, first.getByRole('button', { name: 'Revoke access' }));
    await page.keyboard.press('Enter');
    const confirm = page.getByRole('dialog', { name: "Revoke Olive Owner's access?" });
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain(`Every status link sent to ${owner} stops working at once`);
    await a11y.check(page, 'revoke viewer dialog');
    await confirm.getByRole('button', { name: 'Revoke access' }).click();
    await confirm.waitFor({ state: 'detached' });
    await expect.poll(() => first.textContent(), SOON).toContain('revoked');
    expect(await first.getByRole('button', { name: 'Revoke access' }).count()).toBe(0);
    await record('envelope-viewers');
  }, 60_000);

  it('creates a signing link from a template, follows a visitor’s use live, copies, pauses, resumes and deletes it', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Signing links' }).click();
    await expectHeading(page, 'Signing links');
    await page.getByRole('button', { name: 'New signing link' }).click();
    const dialog = page.getByRole('dialog', { name: 'New signing link' });
    await dialog.getByRole('button', { name: /^Template/ }).click();
    await page.getByRole('option', { name: /^Mutual NDA/ }).click();
    await expect.poll(() => dialog.getByRole('button', { name: /Visitor's role/ }).textContent(), SOON).toContain('client');
    await dialog.getByLabel('Title').fill('NDA for new clients');
    expect(await dialog.getByLabel('Per e-mail address a day').inputValue()).toBe('3');
    expect(await dialog.getByLabel('Per IP address an hour').inputValue()).toBe('20');
    await dialog.getByLabel('Envelopes a day in all').fill('5');
    await page.keyboard.press('Tab');
    await a11y.check(page, 'new signing link dialog');
    await screenshots(page, 'signing-link-new');
    await dialog.getByRole('button', { name: 'Create link' }).click();
    await closes(dialog);

    const row = page.getByRole('row').filter({ hasText: 'NDA for new clients' });
    await row.waitFor(SOON);
    expect(await row.textContent()).toMatch(/NDA for new clients active.*Visitors sign as client.*Mutual NDA.*version 1.*0 of 5 today.*3 times per e-mail a day · 20 times per IP address an hour.*0 envelopes/);
    const url = (await row.locator('code').textContent()) ?? '';
    expect(url).toMatch(new RegExp(`^${stack.gatewayUrl}/l/lnk_[A-Za-z0-9]+$`));
    const links = await api('GET', '/v1/signing-links');
    expect(links.body.data.map((l: { url: string; limits: object; status: string }) => [l.url, l.limits, l.status])).toEqual([[url, { perEmailPerDay: 3, perIpPerHour: 20, dailyCap: 5 }, 'active']]);

    // A visitor uses the link (their code from the stack's inbox): today's use and the total follow, live.
    const visitor = `visitor.${Date.now()}@example.com`;
    const linkPath = new URL(url).pathname.replace(/^\/l\//, '/v1/links/');
    const started = await call(stack.gatewayUrl, 'POST', `${linkPath}/start`, { body: { name: 'Vera Visitor', email: visitor } });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const inbox = await until(
      async () => (await (await fetch(`${stack.infra.smtp.inboxUrl}/messages`)).json()) as Array<{ to: string[]; subject: string }>,
      (messages) => messages.some((m) => m.to.includes(visitor)),
    );
    const code = /(\d{6})\s*$/.exec(inbox.find((m) => m.to.includes(visitor))?.subject ?? '')?.[1];
    const verified = await call(stack.gatewayUrl, 'POST', `${linkPath}/verify`, { body: { verification: started.body.verification, email: visitor, code } });
    expect(verified.status, JSON.stringify(verified.body)).toBe(201);
    await expect.poll(() => row.textContent(), SOON).toMatch(/1 of 5 today.*1 envelope/);

    await row.getByRole('button', { name: 'Copy link' }).click();
    await row.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(url);
    await record('signing-links');

    await row.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => row.textContent(), SOON).toContain('paused');
    expect((await api('GET', '/v1/signing-links')).body.data[0].status).toBe('paused');
    await row.getByRole('button', { name: 'Resume' }).click();
    await row.getByRole('button', { name: 'Pause' }).waitFor(SOON);
    expect(await row.textContent()).toContain('active');

    await row.getByRole('button', { name: 'Delete' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete “NDA for new clients”?' });
    await confirm.getByRole('button', { name: 'Delete link' }).click();
    await confirm.waitFor({ state: 'detached' });
    await page.getByRole('cell', { name: /No test signing links yet/ }).waitFor(SOON);
    expect((await api('GET', '/v1/signing-links')).body.data).toEqual([]);
    // Its envelope stays.
    expect((await api('GET', `/v1/envelopes/${verified.body.envelope}`)).status).toBe(200);
  }, 90_000);
});
