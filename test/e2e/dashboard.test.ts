import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { Accessibility, agreementPdf, DESKTOP, expectHeading, launchChromium, screenshots, sessionCookie, signAsRecipient, signingUrl, tabTo, PageWatch } from './dashboard-pages.ts';
import { call, startTestStack, type TestStack } from './stack.ts';

/**
 * The dashboard's story in Chromium (issue 26, Tests), on one stack and one page that is loaded as seldom as a person
 * would: sign up, a refused sign-in that says nothing of the e-mail, a template from an uploaded PDF with fields placed
 * by dragging, an envelope to two recipients whose signatures appear live, the sealed PDF downloaded, an API key
 * created and revoked; axe-core and screenshots on every page. Each step builds on the one before.
 */
let stack: TestStack;
let browser: Browser;
let page: Page;
const a11y = new Accessibility();
/** How long a condition on the page may take to hold (the machine may be busy; the waits end as soon as it holds). */
const SOON = { timeout: 20_000 };
/** Uncaught errors in the dashboard: each step ends with none. */
let watch: PageWatch;
const person = { organization: 'Analytical Engines', name: 'Ada Byron', email: `ada.${Date.now()}@example.com`, password: 'correct horse battery staple' };
const signers = [
  { name: 'Charles Babbage', email: 'charles@example.com' },
  { name: 'Mary Somerville', email: 'mary@example.com' },
];
let templateId: string;
let envelopeId: string;

/** Audits and photographs the page under `name`, once it has loaded what it shows. */
async function record(name: string): Promise<void> {
  await expect.poll(() => page.getByRole('status').filter({ hasText: /^Loading / }).count(), { ...SOON, message: `${name} still loading` }).toBe(0);
  await a11y.check(page, name);
  await screenshots(page, name);
}

/** Headers to call the API as the signed-in person, in test mode (the dashboard's default). */
async function asPerson(): Promise<Record<string, string>> {
  return { cookie: await sessionCookie(page), 'sigil-mode': 'test' };
}

/** A page of the main navigation, opened the way a person does (a client-side navigation, no reload). */
async function openFromNavigation(label: string, heading: string | RegExp = label): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label, exact: true }).click();
  await expectHeading(page, heading);
}

beforeAll(async () => {
  [stack, browser] = await Promise.all([startTestStack(), launchChromium()]);
  const context = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
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

describe('the dashboard in Chromium', () => {
  it('signs a new person up, and refuses a wrong password in the same words whether the e-mail exists or not', async () => {
    await page.goto(`${stack.gatewayUrl}/app/sign-up`);
    await expectHeading(page, 'Create your organization');
    await record('sign-up');
    await page.getByLabel('Organization name').fill(person.organization);
    await page.getByLabel('Your name').fill(person.name);
    await page.getByLabel('E-mail').fill(person.email);
    await page.getByLabel('Password').fill(person.password);
    await page.getByRole('button', { name: 'Create organization' }).click();
    await expectHeading(page, 'Home');
    await expect.poll(() => page.getByRole('banner').textContent(), SOON).toContain(person.organization);
    // Photographed at the end, with envelopes in it.
    await a11y.check(page, 'home (new organization)');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await expectHeading(page, 'Sign in');
    // E-mail first (the API says whether the address signs in with company SSO: these do not), then the password.
    const enterEmail = async (email: string) => {
      await page.getByLabel('E-mail').fill(email);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByLabel('Password').waitFor();
    };
    const refusal = async (email: string) => {
      await enterEmail(email);
      await page.getByLabel('Password').fill('not the password at all');
      await page.getByRole('button', { name: 'Sign in' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      const words = await alert.textContent();
      // Neither field may be singled out either: that too would tell which e-mails have accounts.
      const invalid = await page.locator('[aria-invalid="true"]').count();
      return { words, invalid };
    };
    const known = await refusal(person.email);
    await record('sign-in');
    await page.getByRole('button', { name: 'Use another e-mail' }).click();
    const unknown = await refusal(`nobody.${Date.now()}@example.com`);
    expect(known.words).toBeTruthy();
    expect(unknown).toEqual(known);

    await page.getByRole('button', { name: 'Use another e-mail' }).click();
    await enterEmail(person.email);
    await page.getByLabel('Password').fill(person.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectHeading(page, 'Home');
  }, 60_000);

  it('uploads a PDF to a new template, places a signature and a text field by dragging, and publishes', async () => {
    await openFromNavigation('Templates');
    await record('templates');
    await page.getByRole('button', { name: 'New template' }).click();
    const dialog = page.getByRole('dialog', { name: 'New template' });
    await dialog.getByLabel('Name').fill('Consulting agreement');
    await dialog.getByRole('button', { name: 'Create template' }).click();
    await expectHeading(page, 'Consulting agreement');
    templateId = new URL(page.url()).pathname.split('/').at(-1) as string;
    expect(templateId).toMatch(/^tpl_/);

    await page.getByLabel('Upload document').setInputFiles({ name: 'consulting-agreement.pdf', mimeType: 'application/pdf', buffer: await agreementPdf() });
    const sheet = page.getByRole('group', { name: 'Page 1', exact: true });
    await sheet.locator('canvas').waitFor();
    // A second role, so the envelope goes to two recipients in turn.
    await page.getByRole('button', { name: 'Add role' }).click();
    const types = page.getByRole('group', { name: 'Field types' });
    await sheet.scrollIntoViewIfNeeded();
    const box = (await sheet.boundingBox())!;
    const at = (xShare: number, yShare: number) => ({ x: box.width * xShare, y: box.height * yShare });
    await types.getByRole('button', { name: 'Signature field' }).dragTo(sheet, { targetPosition: at(0.3, 0.7) });
    await types.getByRole('button', { name: 'Text field' }).dragTo(sheet, { targetPosition: at(0.3, 0.5) });
    await page.getByLabel('Role of new fields').selectOption('role_2');
    await types.getByRole('button', { name: 'Signature field' }).dragTo(sheet, { targetPosition: at(0.7, 0.7) });
    for (const name of ['Signature field for signer, page 1', 'Text field for signer, page 1', 'Signature field for role_2, page 1']) {
      await sheet.getByRole('button', { name }).waitFor();
    }
    await record('template-editor');

    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('status').filter({ hasText: 'Published as version 1.' }).first().waitFor();
    const published = await call(stack.gatewayUrl, 'GET', `/v1/templates/${templateId}/versions/1`, { headers: await asPerson() });
    expect(published.status, JSON.stringify(published.body)).toBe(200);
    const fields = published.body.fields as Array<{ id: string; role: string; type: string; x: number; y: number; width: number; height: number }>;
    expect(fields.map((f) => [f.id, f.role, f.type]).sort()).toEqual([
      ['signature_1', 'signer', 'signature'],
      ['signature_2', 'role_2', 'signature'],
      ['text_1', 'signer', 'text'],
    ]);
    // Each field stands where the pointer let go (its centre, in points of the 612 x 792 page; snapping moves it a little).
    const centre = (id: string) => fields.filter((f) => f.id === id).map((f) => [f.x + f.width / 2, f.y + f.height / 2])[0]!;
    for (const [id, x, y] of [['signature_1', 0.3, 0.7], ['text_1', 0.3, 0.5], ['signature_2', 0.7, 0.7]] as const) {
      const [cx, cy] = centre(id);
      expect(Math.abs(cx! - 612 * x), `${id} x`).toBeLessThan(12);
      expect(Math.abs(cy! - 792 * y), `${id} y`).toBeLessThan(12);
    }
  }, 90_000);

  it('sends an envelope from the template to two recipients after a dry run', async () => {
    await openFromNavigation('Envelopes');
    await record('envelopes');
    await page.getByRole('link', { name: 'Send an envelope' }).click();
    await expectHeading(page, 'Send an envelope');
    await page.getByRole('button', { name: /Template$/ }).click();
    await page.getByRole('option', { name: 'Consulting agreement' }).click();
    for (const [i, signer] of signers.entries()) {
      await page.getByLabel(`Name of signer ${i + 1}`).fill(signer.name);
      await page.getByLabel(`E-mail of signer ${i + 1}`).fill(signer.email);
    }
    await page.getByRole('button', { name: 'Dry run' }).click();
    await page.getByRole('heading', { name: 'Dry run: ready to send' }).waitFor();
    await record('send-envelope');
    await page.getByRole('button', { name: 'Send envelope' }).click();
    await expectHeading(page, 'Consulting agreement');
    envelopeId = new URL(page.url()).pathname.split('/').at(-1) as string;
    expect(envelopeId).toMatch(/^env_/);
  }, 60_000);

  it('shows the first signature on the envelope page as it happens, without a reload', async () => {
    const recipients = page.getByRole('table', { name: 'Recipients in signing order' });
    const first = recipients.getByRole('row', { name: new RegExp(signers[0]!.name) });
    await expect.poll(() => first.textContent(), { timeout: 30_000 }).toContain('their turn');
    await page.getByText('Live: new events appear as they happen.').waitFor();
    await screenshots(page, 'envelope');
    // Set in this document: a reload would lose it.
    await page.evaluate(() => ((globalThis as unknown as { untouched: boolean }).untouched = true));

    const envelope = await call(stack.gatewayUrl, 'GET', `/v1/envelopes/${envelopeId}`, { headers: await asPerson() });
    const [firstId, secondId] = envelope.body.recipients.map((r: { id: string }) => r.id) as [string, string];
    const cookie = await sessionCookie(page);
    await signAsRecipient(browser, await signingUrl(stack.gatewayUrl, cookie, envelopeId, firstId), signers[0]!.name, { text_1: 'Ten days of consulting' });

    const timeline = page.getByRole('region', { name: 'Timeline' });
    await expect.poll(() => first.textContent(), { timeout: 15_000 }).toContain('completed');
    await expect.poll(() => timeline.getByRole('listitem').filter({ hasText: `${signers[0]!.name} signed` }).count(), { timeout: 15_000 }).toBe(1);
    expect(await page.evaluate(() => (globalThis as unknown as { untouched?: boolean }).untouched)).toBe(true);

    // The second signs: the envelope completes and is sealed, still without a reload.
    await signAsRecipient(browser, await signingUrl(stack.gatewayUrl, cookie, envelopeId, secondId), signers[1]!.name);
    const sealedLink = page.getByRole('link', { name: 'Sealed PDF' });
    await sealedLink.waitFor({ timeout: 30_000 });
    await expect.poll(() => timeline.getByRole('listitem').filter({ hasText: 'Sealed: the signed document and its certificate are ready' }).count(), SOON).toBe(1);
    // The person clicks the link: the browser downloads the sealed PDF (signed: a /ByteRange) and stays on the page.
    const [download] = await Promise.all([page.waitForEvent('download'), sealedLink.click()]);
    expect(download.suggestedFilename()).toMatch(/\.pdf$/);
    const sealed = await readFile((await download.path())!);
    expect(sealed.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(sealed.includes('/ByteRange')).toBe(true);
    expect(await page.evaluate(() => (globalThis as unknown as { untouched?: boolean }).untouched)).toBe(true);
    await record('envelope-completed');
  }, 120_000);

  it('shows the envelopes and what happened to them on Home', async () => {
    await openFromNavigation('Home');
    const activity = page.getByRole('region', { name: 'Recent activity' });
    await expect.poll(() => activity.textContent(), SOON).toContain(`${signers[1]!.name} signed`);
    await record('home');
  }, 60_000);

  it('creates an API key, shows its secret once, and revokes it', async () => {
    await openFromNavigation('API keys');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create API key' });
    await dialog.getByLabel('Name').fill('Billing server');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const secretField = dialog.getByLabel('New API key secret');
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^sgl_test_/);
    const works = () => call(stack.gatewayUrl, 'GET', '/v1/templates', { headers: { authorization: `Bearer ${secret}` } });
    expect((await works()).status).toBe(200);
    await dialog.getByRole('button', { name: 'Done' }).click();

    const row = page.getByRole('row', { name: /Billing server/ });
    await row.waitFor();
    // Shown once: the list has only its prefix.
    expect(await row.textContent()).not.toContain(secret);
    await record('api-keys');
    await row.getByRole('button', { name: 'Revoke Billing server' }).click();
    await page.getByRole('dialog', { name: 'Revoke Billing server?' }).getByRole('button', { name: 'Revoke key' }).click();
    await expect.poll(() => row.textContent(), SOON).toContain('revoked');
    expect((await works()).status).toBe(401);
  }, 60_000);

  it('has no serious or critical accessibility violation on the webhooks, API reference, members and settings pages', async () => {
    for (const [label, name] of [
      ['Webhooks', 'webhooks'],
      ['API reference', 'api-reference'],
      ['Members', 'members'],
      ['Billing', 'billing'],
      ['Single sign-on', 'single-sign-on'],
      ['SCIM provisioning', 'scim'],
      ['E-mail branding', 'branding'],
    ] as const) {
      await openFromNavigation(label);
      await record(name);
    }
    // The pointer leaves the navigation, so no link shows a hover in the pictures that follow.
    await page.mouse.move(0, 0);
  }, 120_000);

  it('places a field and sends an envelope with the keyboard alone', async () => {
    const nav = page.getByRole('navigation', { name: 'Main' });
    // From the navigation's last link, where the previous step left the focus, back to its Templates link.
    await tabTo(page, nav.getByRole('link', { name: 'Templates', exact: true }), { backwards: true });
    await page.keyboard.press('Enter');
    await expectHeading(page, 'Templates');
    await tabTo(page, page.getByRole('link', { name: 'Consulting agreement' }));
    await page.keyboard.press('Enter');
    await expectHeading(page, 'Consulting agreement');
    await tabTo(page, page.getByRole('button', { name: 'Edit a new draft from version 1' }));
    await page.keyboard.press('Enter');
    const sheet = page.getByRole('group', { name: 'Page 1', exact: true });
    await sheet.locator('canvas').waitFor();

    // A date field, placed with Place field (it lands in the page's centre and takes the focus), then moved down 30
    // points with Shift+ArrowDown.
    await tabTo(page, page.getByRole('group', { name: 'Field types' }).getByRole('button', { name: 'Date field' }));
    await page.keyboard.press('Enter');
    await tabTo(page, page.getByRole('button', { name: 'Place field' }));
    await page.keyboard.press('Enter');
    const dateField = sheet.getByRole('button', { name: 'Date field for signer, page 1' });
    await expect.poll(() => dateField.evaluate((element) => (element as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement === element), SOON).toBe(true);
    const top = page.getByLabel('Y (points from the top)');
    const placedAt = Number(await top.inputValue());
    for (let i = 0; i < 3; i++) await page.keyboard.press('Shift+ArrowDown');
    await expect.poll(async () => Number(await top.inputValue()), SOON).toBe(placedAt + 30);
    await tabTo(page, page.getByRole('button', { name: 'Publish' }), { backwards: true });
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Published as version 2.' }).first().waitFor();
    const version = await call(stack.gatewayUrl, 'GET', `/v1/templates/${templateId}/versions/2`, { headers: await asPerson() });
    expect(version.body.fields.find((f: { id: string }) => f.id === 'date_1')).toMatchObject({ role: 'signer', type: 'date', page: 1, y: placedAt + 30 });
    await record('template');

    await tabTo(page, nav.getByRole('link', { name: 'Envelopes', exact: true }), { backwards: true });
    await page.keyboard.press('Enter');
    await expectHeading(page, 'Envelopes');
    await tabTo(page, page.getByRole('link', { name: 'Send an envelope' }));
    await page.keyboard.press('Enter');
    await expectHeading(page, 'Send an envelope');
    // The template select opens with Enter; typing picks the option; Enter chooses it.
    await tabTo(page, page.getByRole('button', { name: /Template$/ }));
    await page.keyboard.press('Enter');
    await page.getByRole('listbox').waitFor();
    await page.keyboard.type('Consulting');
    await page.keyboard.press('Enter');
    await page.getByLabel('Name of signer 1').waitFor();
    for (const [i, signer] of signers.entries()) {
      await tabTo(page, page.getByLabel(`Name of signer ${i + 1}`));
      await page.keyboard.type(signer.name);
      await tabTo(page, page.getByLabel(`E-mail of signer ${i + 1}`));
      await page.keyboard.type(signer.email);
    }
    await tabTo(page, page.getByRole('button', { name: 'Dry run' }));
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Dry run: ready to send' }).waitFor();
    await tabTo(page, page.getByRole('button', { name: 'Send envelope' }));
    await page.keyboard.press('Enter');
    await expect.poll(() => new URL(page.url()).pathname, SOON).toMatch(/^\/app\/envelopes\/env_/);
    await expectHeading(page, 'Consulting agreement');
    const sent = await call(stack.gatewayUrl, 'GET', `/v1/envelopes/${new URL(page.url()).pathname.split('/').at(-1)}`, { headers: await asPerson() });
    expect(sent.body).toMatchObject({ templateVersion: 2, testMode: true });
    expect(sent.body.recipients.map((r: { name: string; email: string }) => [r.name, r.email])).toEqual(signers.map((s) => [s.name, s.email]));
  }, 120_000);
});
