import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { randomBase62 } from '@sigil/kit/ids';
import { Accessibility, DESKTOP, expectHeading, launchChromium, PHONE, PageWatch, screenshots } from './dashboard-pages.ts';
import { mailTo, pngLogo, scim, signInAtIdp, upgradeTo } from './sso.ts';
import { call, publishOneRoleTemplate, signUp, startTestStack, type TestStack } from './stack.ts';

/**
 * Organization administration in the dashboard (issue 30), in Chromium through the gateway, on a stack of its own with
 * its local identity provider (SAML and OpenID). On Free the SSO and SCIM pages say what the plan leaves out; on Team
 * an admin connects the IdP from its metadata URL (a private address refused beside the field first), tests it in a
 * pop-up (the attributes received), is refused enforcement beside the switch, and enforces it on Business. A new
 * employee enters their e-mail on the sign-in page, signs in at the IdP and lands in the dashboard as a member (just in
 * time); SCIM (a token generated in the UI, then the IdP's requests through the gateway) deactivates them and their
 * open page fails on its next request. The organization's sender name, message and logo (uploaded in the UI, with a
 * live preview) are in its e-mails. Then an OpenID Connect connection and a sign-in through it. axe at both widths and
 * screenshots of each page.
 */
let stack: TestStack;
let browser: Browser;
let page: Page;
let watch: PageWatch;
let cookie: string;
const tag = randomBase62(6).toLowerCase();
const owner = `olive.${tag}@example.com`;
const domain = `acme-${tag}.example.com`;
const oidcDomain = `beta-${tag}.example.com`;
const employee = `nina.newhire@${domain}`;
const a11y = new Accessibility();
const contexts: BrowserContext[] = [];
/** How long a condition on the page may take to hold (the waits end as soon as it holds). */
const SOON = { timeout: 20_000 };

/** The API as the signed-in owner. */
const api = (method: string, path: string, body?: unknown) => call(stack.gatewayUrl, method, path, { body, headers: { cookie } });

/** Audits a page at desktop and phone widths and photographs it, once it has loaded what it shows. */
async function record(name: string, on: Page = page): Promise<void> {
  await expect.poll(() => on.getByRole('status').filter({ hasText: /^Loading / }).count(), { ...SOON, message: `${name} still loading` }).toBe(0);
  await a11y.check(on, name);
  await on.setViewportSize(PHONE);
  await a11y.check(on, `${name} (phone)`);
  await on.setViewportSize(DESKTOP);
  await screenshots(on, name);
}

async function openFromNavigation(label: string, heading = label): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label, exact: true }).click();
  await expectHeading(page, heading);
}

/** A browser of its own for someone who is not signed in. */
async function newPerson(): Promise<Page> {
  const context = await browser.newContext({ viewport: DESKTOP });
  contexts.push(context);
  const person = await context.newPage();
  person.setDefaultTimeout(20_000);
  return person;
}

/** The sign-in page's first step: the e-mail, submitted with Enter. */
async function enterEmail(person: Page, email: string): Promise<void> {
  await person.goto(`${stack.gatewayUrl}/app/sign-in`);
  await expectHeading(person, 'Sign in');
  await person.getByLabel('E-mail').fill(email);
  await person.getByLabel('E-mail').press('Enter');
}

const connectionSection = (providerId: string): Locator => page.getByRole('region', { name: new RegExp(`^${providerId} `) });

/** A dialog's submit went through: it shows `done` (a refusal's words are what the failure says). */
async function shows(dialog: Locator, done: Locator): Promise<void> {
  const state = async () => ((await done.count()) > 0 ? 'done' : (await dialog.getByRole('alert').allTextContents()).join(' ') || 'waiting');
  await expect.poll(state, SOON).toBe('done');
}

beforeAll(async () => {
  [stack, browser] = await Promise.all([startTestStack(), launchChromium()]);
  ({ cookie } = await signUp(stack.gatewayUrl, owner, 'Acme Legal'));
  const context = await browser.newContext({ viewport: DESKTOP });
  contexts.push(context);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.gatewayUrl });
  const [name, value] = cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: stack.gatewayUrl }]);
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
  watch = new PageWatch(page);
}, 240_000);

afterEach(async ({ task }) => watch?.afterStep(task));

afterAll(async () => {
  PageWatch.reportLesser(a11y);
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await stack?.stop();
});

describe('on the Free plan', () => {
  it('refuses an SSO connection in the plan’s words, and the SCIM page says SCIM is not on the plan', async () => {
    await page.goto(`${stack.gatewayUrl}/app/`);
    await openFromNavigation('Single sign-on');
    await page.getByText('No SSO connection yet.').waitFor(SOON);
    await page.getByRole('note').filter({ hasText: 'Single sign-on is not on your plan.' }).waitFor(SOON);
    await page.getByRole('button', { name: 'Add connection' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add an SSO connection' });
    await dialog.getByLabel('Name', { exact: true }).fill('acme');
    // Pasted this time (the stack's local IdP publishes it).
    await dialog.getByLabel('Metadata XML').fill(await (await fetch(stack.localIdp.samlMetadataUrl)).text());
    await dialog.getByLabel('Domains', { exact: true }).fill(domain);
    await dialog.getByRole('button', { name: 'Save connection' }).click();
    const refusal = dialog.getByRole('alert').filter({ has: page.getByRole('link', { name: 'See plans and upgrade' }) });
    await refusal.waitFor(SOON);
    expect(await refusal.textContent()).toMatch(/Free plan allows 0 SSO connections|not on the Free plan/);
    expect(await refusal.getByRole('link').getAttribute('href')).toBe('/app/settings/billing');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await record('sso-free');

    await openFromNavigation('SCIM provisioning');
    await page.getByRole('note').filter({ hasText: 'SCIM provisioning is not on your plan.' }).waitFor(SOON);
    await page.getByRole('button', { name: 'Generate token' }).click();
    await page.getByRole('alert').filter({ hasText: /not on the Free plan/ }).waitFor(SOON);
    await record('scim-free');
  }, 90_000);
});

describe('an admin connects the company’s identity provider', () => {
  it('connects the local SAML IdP from its metadata URL, after a private address is refused beside the field', async () => {
    await upgradeTo(stack.gatewayUrl, cookie, 'team');
    await page.goto(`${stack.gatewayUrl}/app/settings/sso`);
    await expectHeading(page, 'Single sign-on');
    await page.getByRole('button', { name: 'Add connection' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add an SSO connection' });
    await dialog.getByLabel('Name', { exact: true }).fill('acme-saml');
    const url = dialog.getByLabel('Metadata URL');
    await url.fill('https://10.0.0.1/idp/metadata');
    await dialog.getByRole('button', { name: 'Fetch' }).click();
    await expect.poll(() => url.getAttribute('aria-invalid'), SOON).toBe('true');
    const described = (await url.getAttribute('aria-describedby')) ?? '';
    const why = await page.locator(described.split(' ').map((id) => `[id="${id}"]`).join(', ')).allTextContents();
    expect(why.join(' ')).toMatch(/private|reserved/);

    // Enter in the URL field fetches it.
    await url.fill(stack.localIdp.samlMetadataUrl);
    await url.press('Enter');
    await dialog.getByRole('status').filter({ hasText: 'Fetched the metadata of' }).waitFor(SOON);
    expect(await dialog.getByLabel('Metadata XML').inputValue()).toContain('EntityDescriptor');
    await dialog.getByLabel('Domains', { exact: true }).fill(domain);
    await a11y.check(page, 'add connection dialog');
    await screenshots(page, 'sso-add-connection');
    await dialog.getByRole('button', { name: 'Save connection' }).click();
    await shows(dialog, dialog.getByRole('status').filter({ hasText: 'acme-saml is saved' }));

    const saved = await api('GET', '/v1/sso/connections/acme-saml');
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body).toMatchObject({ protocol: 'saml', domains: [domain], idpMetadataUrl: stack.localIdp.samlMetadataUrl, defaultRole: 'member', jitProvisioning: true, enforced: false });
    expect(await dialog.locator('dd code').allTextContents()).toEqual([saved.body.entityId, saved.body.acsUrl, saved.body.metadataUrl]);
    await dialog.getByRole('button', { name: 'Copy Entity ID' }).click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(saved.body.entityId);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'detached' });

    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'acme-saml' }) });
    await row.waitFor(SOON);
    expect(await row.textContent()).toMatch(new RegExp(`acme-saml.*SAML 2\\.0.*${domain.replace(/\./g, '\\.')}.*active.*Not yet`));
  }, 90_000);

  it('tests the connection in a pop-up: the reason of a failure, then the attributes the IdP sent', async () => {
    const section = connectionSection('acme-saml');
    const outcome = section.getByRole('status', { name: 'Test sign-in of acme-saml' });
    const testAs = async (email: string, name: string) => {
      const opened = page.waitForEvent('popup');
      await section.getByRole('button', { name: 'Test sign-in' }).click();
      await signInAtIdp(await opened, email, name);
    };

    await testAs('someone.else@example.org', 'Someone Else');
    await expect.poll(() => outcome.textContent(), { timeout: 30_000 }).toMatch(/^Test sign-in failed\. someone\.else@example\.org is not in a domain of this connection/);
    await a11y.check(page, 'test sign-in failed');

    await testAs(`tess.tester@${domain}`, 'Tess Tester');
    await expect.poll(() => outcome.textContent(), { timeout: 30_000 }).toContain('Test sign-in succeeded');
    const attributes = outcome.getByRole('definition');
    expect((await attributes.allTextContents()).join(' ')).toContain(`tess.tester@${domain}`);
    // Nobody was signed in by it: the members are the owner alone.
    expect((await api('GET', '/v1/organization/members')).body.data.map((m: { user: { email: string } }) => m.user.email)).toEqual([owner]);
    // The table follows: the last success is now (its Last success cell, the fourth after the name).
    const lastSuccess = page.getByRole('row').filter({ hasText: 'acme-saml' }).getByRole('cell').nth(3);
    await expect.poll(() => lastSuccess.textContent(), SOON).not.toBe('Not yet');
    await page.getByRole('region', { name: 'Audit trail', exact: true }).getByRole('cell', { name: 'Test sign-in succeeded' }).waitFor(SOON);
    await record('sso-connection');
  }, 90_000);

  it('is refused enforcement beside the switch on Team, and enforces it on Business', async () => {
    const section = connectionSection('acme-saml');
    const enforce = section.getByRole('switch', { name: 'Require single sign-on for these domains' });
    await enforce.check();
    await section.getByRole('button', { name: 'Save settings' }).click();
    const refusal = section.getByRole('alert').filter({ hasText: /Enforced single sign-on is not on the Team plan/ });
    await refusal.waitFor(SOON);
    expect(await refusal.getByRole('link', { name: 'See plans and upgrade' }).getAttribute('href')).toBe('/app/settings/billing');
    expect(await enforce.getAttribute('aria-describedby')).toBeTruthy();
    await refusal.scrollIntoViewIfNeeded();
    await a11y.check(page, 'enforcement refused');

    await upgradeTo(stack.gatewayUrl, cookie, 'business');
    await section.getByRole('button', { name: 'Save settings' }).click();
    await section.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor(SOON);
    expect((await api('GET', '/v1/sso/connections/acme-saml')).body.enforced).toBe(true);
    await page.getByRole('row').filter({ hasText: 'Required for its domains' }).waitFor(SOON);
  }, 90_000);
});

describe('a new employee', () => {
  let employeePage: Page;

  it('enters their e-mail, is sent to the IdP (no password offered), signs in there and lands in the dashboard as a member', async () => {
    employeePage = await newPerson();
    await enterEmail(employeePage, employee);
    const sso = employeePage.getByRole('link', { name: 'Continue with single sign-on' });
    await sso.waitFor(SOON);
    expect(await employeePage.getByLabel('Password', { exact: true }).count()).toBe(0);
    expect(await employeePage.getByText(/sign in through their organization's identity provider\.$/).count()).toBe(1);
    // The owners' way in stays offered; the API decides who may use it.
    await employeePage.getByRole('button', { name: 'Sign in with password instead' }).waitFor();
    await record('sign-in-sso', employeePage);

    await sso.click();
    await signInAtIdp(employeePage, employee, 'Nina Newhire');
    await expectHeading(employeePage, 'Home');
    await expect.poll(() => employeePage.getByRole('banner').textContent(), SOON).toContain('Nina Newhire (member)');
    // A member's navigation offers none of the administrators' settings.
    const nav = employeePage.getByRole('navigation', { name: 'Main' });
    expect(await nav.getByRole('link', { name: 'Envelopes', exact: true }).count()).toBe(1);
    for (const label of ['Billing', 'Single sign-on', 'SCIM provisioning', 'E-mail branding']) expect(await nav.getByRole('link', { name: label }).count(), label).toBe(0);
    const members = (await api('GET', '/v1/organization/members')).body.data as Array<{ role: string; user: { email: string } }>;
    expect(members.find((m) => m.user.email === employee)?.role).toBe('member');
  }, 90_000);

  it('is deprovisioned by SCIM (a token generated in the dashboard), and their open page fails on its next request', async () => {
    await openFromNavigation('SCIM provisioning');
    expect(await page.getByRole('note').filter({ hasText: 'not on your plan' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Generate token' }).click();
    const field = page.getByLabel('SCIM token');
    await field.waitFor(SOON);
    const token = await field.inputValue();
    expect(token).toMatch(/^sglscim_/);
    expect(await page.getByRole('note').filter({ hasText: 'Copy the token now: it is shown only once.' }).count()).toBe(1);
    await record('scim-token');

    // The identity provider's requests, through the gateway: the employee is created (linked to their account), then
    // deactivated as Okta does it.
    const created = await scim(stack.gatewayUrl, token, 'POST', '/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: employee,
      name: { givenName: 'Nina', familyName: 'Newhire' },
      emails: [{ value: employee, primary: true, type: 'work' }],
      active: true,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const deactivated = await scim(stack.gatewayUrl, token, 'PATCH', `/Users/${created.body.id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    expect(deactivated.status, JSON.stringify(deactivated.body)).toBe(200);
    expect((await api('GET', '/v1/organization/members')).body.data.map((m: { user: { email: string } }) => m.user.email)).toEqual([owner]);

    // The employee's dashboard is still open: its next request is refused, and it shows the sign-in page.
    await employeePage.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Envelopes', exact: true }).click();
    await expectHeading(employeePage, 'Sign in');

    // The SCIM page, open all along, follows live (the removal is on the dashboard's stream).
    const row = page.getByRole('row').filter({ hasText: employee });
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain('deactivated');
    expect(await page.getByRole('button', { name: 'Generate token' }).count()).toBe(0);
    await record('scim-deprovisioned');

    // Replacing the token asks first; the old one stops working at once.
    await page.getByRole('button', { name: 'Replace token' }).click();
    const confirm = page.getByRole('dialog', { name: 'Replace the SCIM token?' });
    await a11y.check(page, 'replace SCIM token dialog');
    await confirm.getByRole('button', { name: 'Replace token' }).click();
    await confirm.waitFor({ state: 'detached' });
    await expect.poll(() => field.inputValue(), SOON).not.toBe(token);
    expect((await scim(stack.gatewayUrl, token, 'GET', '/Users')).status).toBe(401);
    expect((await scim(stack.gatewayUrl, await field.inputValue(), 'GET', '/Users')).status).toBe(200);

    await openFromNavigation('Single sign-on');
    const trail = page.getByRole('region', { name: 'Audit trail', exact: true });
    for (const words of ['SCIM: user deactivated', 'SCIM token created', 'Member created on first sign-in', 'Test sign-in failed']) await trail.getByRole('cell', { name: words }).first().waitFor(SOON);
  }, 90_000);
});

describe('e-mail branding', () => {
  it('previews the sender name and message live, uploads a logo (a refused file says why beside the input), and the e-mails carry them', async () => {
    const message = 'Please sign by Friday, the Acme legal team';
    await openFromNavigation('E-mail branding');
    await page.getByLabel('Sender name').fill('Acme Legal Desk');
    await page.getByLabel('Message to recipients').fill(message);
    const preview = page.frameLocator('iframe[title="E-mail preview"]');
    await preview.getByText(message).waitFor(SOON);

    const input = page.getByLabel('Upload a logo');
    await input.setInputFiles({ name: 'logo.txt', mimeType: 'text/plain', buffer: Buffer.from('not an image at all') });
    await expect.poll(() => input.getAttribute('aria-invalid'), SOON).toBe('true');
    const refusal = page.getByRole('region', { name: 'Logo', exact: true }).getByRole('alert');
    expect(await refusal.textContent()).toMatch(/PNG|JPEG|SVG|WebP/);

    await input.setInputFiles({ name: 'huge.png', mimeType: 'image/png', buffer: Buffer.concat([pngLogo(), Buffer.alloc(600 * 1024)]) });
    await expect.poll(() => refusal.textContent(), SOON).toMatch(/512 KB|too large/i);

    await input.setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: pngLogo() });
    await page.getByRole('status').filter({ hasText: 'Uploaded logo.png.' }).waitFor(SOON);
    const current = page.getByRole('img', { name: 'Your current logo' });
    await current.waitFor(SOON);
    const logoUrl = (await current.getAttribute('src')) as string;
    expect(logoUrl).toMatch(new RegExp(`^${stack.gatewayUrl}/v1/public/logos/`));
    await preview.locator(`img[src="${logoUrl}"]`).waitFor(SOON);
    await page.getByRole('button', { name: 'Save branding' }).click();
    await page.getByRole('status').filter({ hasText: /^Saved: / }).waitFor(SOON);
    await record('branding-preview');

    // An envelope sent with the API: its e-mail to the recipient (a member: test mode e-mails members only) is branded.
    const headers = { cookie, 'sigil-mode': 'test' };
    const templateId = await publishOneRoleTemplate(stack.gatewayUrl, headers, 'Acme NDA', 'signer');
    const since = new Date().toISOString();
    const sent = await call(stack.gatewayUrl, 'POST', '/v1/envelopes', { headers, body: { template: templateId, recipients: [{ role: 'signer', name: 'Olive Owner', email: owner }] } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    const mail = await mailTo(stack.infra.smtp.inboxUrl, owner, since, (m) => m.subject.includes('Acme NDA'));
    expect(mail.html).toContain(`src="${logoUrl}"`);
    expect(mail.html).toContain(message);
    expect(mail.text).toContain(message);
  }, 120_000);
});

describe('OpenID Connect', () => {
  it('connects the local OpenID provider and signs a new person in through it', async () => {
    await openFromNavigation('Single sign-on');
    await page.getByRole('button', { name: 'Add connection' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add an SSO connection' });
    await dialog.getByLabel('Name', { exact: true }).fill('beta-oidc');
    await dialog.getByRole('radio', { name: 'OpenID Connect' }).check();
    await dialog.getByLabel('Issuer URL').fill(stack.localIdp.oidcIssuer);
    await dialog.getByLabel('Client ID').fill(stack.localIdp.oidcClientId);
    await dialog.getByLabel('Client secret').fill(stack.localIdp.oidcClientSecret);
    await dialog.getByLabel('Domains', { exact: true }).fill(oidcDomain);
    await dialog.getByRole('button', { name: 'Save connection' }).click();
    await shows(dialog, dialog.getByRole('status').filter({ hasText: 'beta-oidc is saved' }));
    const redirectUri = (await dialog.locator('dd code').textContent()) ?? '';
    // The redirect URI the stack registered at its local OpenID provider.
    expect(redirectUri).toBe(`${stack.gatewayUrl}/v1/auth/sso/oidc/callback`);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await connectionSection('beta-oidc').waitFor(SOON);

    const person = await newPerson();
    const email = `omar.${tag}@${oidcDomain}`;
    // Signed in at the IdP as someone outside the connection's domains: back on the sign-in page, with the reason.
    await enterEmail(person, email);
    await person.getByRole('link', { name: 'Continue with single sign-on' }).click();
    await signInAtIdp(person, `omar.${tag}@example.org`, 'Omar Okafor');
    await expectHeading(person, 'Sign in');
    const failed = person.getByRole('alert').filter({ hasText: 'Single sign-on did not sign you in.' });
    await failed.waitFor(SOON);
    expect(await failed.textContent()).toContain(`omar.${tag}@example.org`);
    await record('sign-in-sso-error', person);

    await enterEmail(person, email);
    // Not enforced: the password stays offered beside single sign-on.
    await person.getByLabel('Password', { exact: true }).waitFor(SOON);
    await person.getByRole('link', { name: 'Continue with single sign-on' }).click();
    await signInAtIdp(person, email, 'Omar Okafor');
    await expectHeading(person, 'Home');
    await expect.poll(() => person.getByRole('banner').textContent(), SOON).toContain('Omar Okafor (member)');
  }, 90_000);
});
