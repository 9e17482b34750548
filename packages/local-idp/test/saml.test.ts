/**
 * The SAML identity provider as a service provider meets it: node-saml (the SP library accounts uses) reads its
 * metadata certificate, sends a person through the real sign-in flow over HTTP, and accepts the signed response; the
 * deliberately bad responses `samlResponse` builds are each refused for their own reason.
 */
import { SAML, ValidateInResponseTo, type SamlConfig } from '@node-saml/node-saml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalIdp, type LocalIdp } from '../src/index.ts';
import { CookieJar, postForm, readForm } from '../src/browser.ts';

const SP_ENTITY_ID = 'https://sp.example.test/saml/metadata';
const ACS_URL = 'https://sp.example.test/saml/acs';
let idp: LocalIdp;

beforeAll(async () => {
  idp = await startLocalIdp({ users: [{ email: 'grace@example.com', name: 'Grace Hopper', groups: ['admins'] }] });
});
afterAll(async () => {
  await idp?.close();
});

/** A service provider configured from the IdP's metadata, as an administrator would. */
async function serviceProvider(overrides: Partial<SamlConfig> = {}): Promise<SAML> {
  const metadata = await (await fetch(idp.saml.metadataUrl)).text();
  const certificate = /<(?:ds:)?X509Certificate>([^<]+)</.exec(metadata)![1]!;
  const ssoUrl = /SingleSignOnService[^>]*Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"[^>]*Location="([^"]+)"/.exec(metadata)?.[1];
  return new SAML({
    entryPoint: ssoUrl,
    issuer: SP_ENTITY_ID,
    callbackUrl: ACS_URL,
    idpCert: certificate,
    idpIssuer: idp.saml.entityId,
    audience: SP_ENTITY_ID,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: true,
    validateInResponseTo: ValidateInResponseTo.always,
    ...overrides,
  });
}

/** Through the IdP's pages: the AuthnRequest, the sign-in form, the form that posts the response. */
async function signIn(sp: SAML, person: Record<string, string>, relayState = 'relay-1'): Promise<Record<string, string>> {
  const jar = new CookieJar();
  const authorizeUrl = await sp.getAuthorizeUrlAsync(relayState, undefined, {});
  const page = await jar.fetch(authorizeUrl);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toMatch(/<label for="email">Email<\/label>/);
  expect(html).toMatch(/<label for="name">Name<\/label>/);
  expect(html).toMatch(/<button type="submit">Sign in<\/button>/);
  const signedIn = await postForm(jar, readForm(html, authorizeUrl), person);
  expect(signedIn.status).toBe(200);
  const autoPost = readForm(await signedIn.text(), signedIn.url);
  expect(autoPost.action).toBe(ACS_URL);
  return autoPost.fields;
}

describe('the SAML flow', () => {
  it('publishes metadata with its signing certificate and sign-in endpoints', async () => {
    const response = await fetch(idp.saml.metadataUrl);
    expect(response.headers.get('content-type')).toMatch(/^application\/samlmetadata\+xml/);
    const xml = await response.text();
    expect(xml).toBe(idp.saml.metadataXml);
    expect(xml).toContain(`entityID="${idp.saml.entityId}"`);
    expect(xml).toContain(`Location="${idp.saml.ssoUrl}"`);
    const body = idp.saml.signingCertPem.replace(/-----[A-Z ]+-----|\s/g, '');
    expect(xml.replace(/\s/g, '')).toContain(body);
  });

  it('signs a person in: node-saml accepts the response and reads e-mail, names and groups', async () => {
    const sp = await serviceProvider();
    const fields = await signIn(sp, { email: 'Ada@Example.com', name: 'Ada King Lovelace', groups: 'engineering, admins' });
    expect(fields.RelayState).toBe('relay-1');
    const { profile } = await sp.validatePostResponseAsync(fields);
    expect(profile).toMatchObject({
      nameID: 'ada@example.com',
      nameIDFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
      issuer: idp.saml.entityId,
      email: 'ada@example.com',
      firstName: 'Ada',
      lastName: 'King Lovelace',
      groups: ['engineering', 'admins'],
    });
    const xml = Buffer.from(fields.SAMLResponse!, 'base64').toString('utf8');
    expect(xml).toContain(`<saml:Audience>${SP_ENTITY_ID}</saml:Audience>`);
    expect(xml).toContain(`Recipient="${ACS_URL}"`);
    expect(xml.match(/<ds:Signature /g)).toHaveLength(2);
    // The request it answered is spent: the same response again is refused.
    await expect(sp.validatePostResponseAsync(fields)).rejects.toThrow(/InResponseTo is not valid/);
  });

  it('completes a known address from the users option and accepts the POST binding', async () => {
    const sp = await serviceProvider();
    const authorizeUrl = await sp.getAuthorizeUrlAsync('', undefined, {});
    const samlRequest = new URL(authorizeUrl).searchParams.get('SAMLRequest')!;
    const { inflateRawSync } = await import('node:zlib');
    const jar = new CookieJar();
    const page = await jar.fetch(idp.saml.ssoUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ SAMLRequest: inflateRawSync(Buffer.from(samlRequest, 'base64')).toString('base64') }).toString() });
    const html = await page.text();
    expect(html).toContain('<option value="grace@example.com">');
    const posted = readForm(await (await postForm(jar, readForm(html, idp.saml.ssoUrl), { email: 'grace@example.com' })).text(), idp.url);
    expect(posted.fields.RelayState).toBeUndefined();
    const { profile } = await sp.validatePostResponseAsync(posted.fields);
    expect(profile).toMatchObject({ email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper', groups: 'admins' });
  });

  it('asks again for an e-mail that is not one, and refuses a request it cannot answer', async () => {
    const sp = await serviceProvider();
    const jar = new CookieJar();
    const authorizeUrl = await sp.getAuthorizeUrlAsync('', undefined, {});
    const form = readForm(await (await jar.fetch(authorizeUrl)).text(), authorizeUrl);
    const again = await postForm(jar, form, { email: 'not an address' });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('role="alert"');
    expect((await jar.fetch(`${idp.saml.ssoUrl}?SAMLRequest=bm90IHhtbA`)).status).toBe(400);
    expect((await jar.fetch(idp.saml.ssoUrl)).status).toBe(400);
    // Once answered, a sign-in form cannot be used again.
    expect((await postForm(jar, form, { email: 'ada@example.com' })).status).toBe(200);
    expect((await postForm(jar, form, { email: 'ada@example.com' })).status).toBe(400);
  });
});

describe('samlResponse, for tests of what a service provider refuses', () => {
  /** A service provider that expects the response to `requestId` (node-saml's cache holds what it sent). */
  async function expecting(): Promise<{ sp: SAML; requestId: string }> {
    const sp = await serviceProvider();
    const url = await sp.getAuthorizeUrlAsync('', undefined, {});
    const { inflateRawSync } = await import('node:zlib');
    const xml = inflateRawSync(Buffer.from(new URL(url).searchParams.get('SAMLRequest')!, 'base64')).toString('utf8');
    return { sp, requestId: /ID="([^"]+)"/.exec(xml)![1]! };
  }
  const base = { audience: SP_ENTITY_ID, acsUrl: ACS_URL, email: 'ada@example.com' };

  it('builds a response node-saml accepts when nothing is wrong', async () => {
    const { sp, requestId } = await expecting();
    const { profile } = await sp.validatePostResponseAsync({ SAMLResponse: idp.samlResponse({ ...base, inResponseTo: requestId, name: 'Ada Lovelace' }) });
    expect(profile).toMatchObject({ email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' });
  });

  it.each([
    ['unsigned', { signed: false }, /^Invalid document signature$/],
    ['an unsigned assertion in a signed response', { signAssertion: false }, /^Invalid signature$/],
    ['signed with another key', { signWithOtherKey: true }, /^Invalid document signature$/],
    ['for another audience', { audience: 'https://other.example.test' }, /^SAML assertion audience mismatch/],
    ['expired', { notOnOrAfter: new Date(Date.now() - 60_000) }, /^No valid subject confirmation found/],
    ['not yet valid', { notBefore: new Date(Date.now() + 10 * 60_000) }, /^SAML assertion not yet valid/],
    ['in response to another request', { inResponseTo: '_not-the-request' }, /^InResponseTo is not valid/],
  ])('is refused when %s', async (_case, wrong, reason) => {
    const { sp, requestId } = await expecting();
    await expect(sp.validatePostResponseAsync({ SAMLResponse: idp.samlResponse({ ...base, inResponseTo: requestId, ...wrong }) })).rejects.toThrow(reason);
  });

  it('repeats an assertion ID when asked (a replay)', async () => {
    const first = Buffer.from(idp.samlResponse({ ...base, assertionId: '_same-assertion' }), 'base64').toString('utf8');
    const second = Buffer.from(idp.samlResponse({ ...base, assertionId: '_same-assertion' }), 'base64').toString('utf8');
    expect(first).toContain('<saml:Assertion xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" ID="_same-assertion"');
    expect(second).toContain('ID="_same-assertion"');
    expect(first).not.toBe(second);
  });
});
