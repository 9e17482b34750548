/**
 * SSO tests' harness: the accounts app with SSO's options (a local IdP on loopback allowed, a stub resolver), a
 * business-plan owner, and what a browser does with the local IdP's pages.
 */
import { inflateRawSync } from 'node:zlib';
import request from 'supertest';
import type { TestPlan } from '@sigil/kit/testing';
import type { SsoOptions } from '../src/sso/handlers.ts';
import { createHarness, signUp, type Harness, type SignedUp } from './helpers.ts';

import { CookieJar, readForm } from '@sigil/local-idp/browser';

export { CookieJar, readForm };

export const PUBLIC_URL = 'http://127.0.0.1:8080';
export const ACS_URL = `${PUBLIC_URL}/v1/auth/sso/saml/acs`;
export const OIDC_CALLBACK = `${PUBLIC_URL}/v1/auth/sso/oidc/callback`;
/** The browser's SSO binding cookie (browser-binding.ts): a login must come back to the browser that started it. */
export const BROWSER = `sigil_sso=${'b'.repeat(43)}`;
export const OTHER_BROWSER = `sigil_sso=${'o'.repeat(43)}`;

/** The accounts app whose SSO may fetch the local IdP on loopback (`SSO_ALLOWED_ORIGINS` of the local stack). */
export function createSsoHarness(name: string, sso: SsoOptions = {}): Promise<Harness> {
  return createHarness(name, { publicUrl: PUBLIC_URL, sso: { allowedOrigins: ['http://127.0.0.1:*'], ...sso } });
}

let domainCounter = 0;
/** A domain no other test uses (domains are unique across organizations). */
export function freshDomain(tag = 'corp'): string {
  domainCounter += 1;
  return `${tag}${domainCounter}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}.example`;
}

/** An owner of a new organization on `plan`. */
export async function ownerOn(h: Harness, plan: TestPlan, email?: string): Promise<SignedUp> {
  const owner = await signUp(h, email ? { email } : {});
  h.plans.set(owner.organizationId, plan);
  return owner;
}

export function putConnection(h: Harness, headers: Record<string, string>, providerId: string, body: Record<string, unknown>) {
  return request(h.app).put(`/v1/sso/connections/${providerId}/settings`).set(headers).send(body);
}

/** The AuthnRequest ID of an HTTP-Redirect URL (what the IdP answers InResponseTo). */
export function samlRequestIdOf(location: string): string {
  const xml = inflateRawSync(Buffer.from(new URL(location).searchParams.get('SAMLRequest') ?? '', 'base64')).toString('utf8');
  const id = /\sID="([^"]+)"/.exec(xml)?.[1];
  if (!id) throw new Error(`no ID in ${xml}`);
  return id;
}

export const relayStateOf = (location: string) => new URL(location).searchParams.get('RelayState') ?? '';

/**
 * Signs a person in at the local IdP from our redirect `location` (SAML): the sign-in form, then the auto-post form
 * it answers, whose fields (SAMLResponse, RelayState) are returned with its action.
 */
export async function samlAtIdp(location: string, person: { email: string; name?: string; groups?: string }): Promise<{ action: string; fields: Record<string, string> }> {
  const jar = new CookieJar();
  const page = await jar.fetch(location);
  if (page.status !== 200) throw new Error(`IdP sign-in page: ${page.status}`);
  const form = readForm(await page.text(), location);
  const signedIn = await jar.post(form.action, { ...form.fields, email: person.email, name: person.name ?? 'Pat Example', groups: person.groups ?? '' });
  if (signedIn.status !== 200) throw new Error(`IdP sign-in: ${signedIn.status} ${await signedIn.text()}`);
  return readForm(await signedIn.text(), form.action);
}

/**
 * Signs a person in at the local OpenID provider from our redirect `location`: the sign-in form and the pages that
 * submit themselves, until the provider redirects to `redirectUri`; answers that URL (with code and state).
 */
export async function oidcAtIdp(location: string, person: { email: string; name?: string }, redirectUri = OIDC_CALLBACK): Promise<URL> {
  const jar = new CookieJar();
  let url = location;
  let response = await jar.fetch(url);
  for (let hops = 0; hops < 20; hops++) {
    if (response.status >= 300 && response.status < 400) {
      const next = new URL(response.headers.get('location') ?? '', url).href;
      if (next.startsWith(redirectUri)) return new URL(next);
      url = next;
      response = await jar.fetch(url);
      continue;
    }
    if (response.status !== 200) throw new Error(`OpenID provider answered ${response.status}: ${await response.text()}`);
    const form = readForm(await response.text(), url);
    const fields = 'email' in form.fields ? { ...form.fields, email: person.email, name: person.name ?? 'Pat Example', groups: '' } : form.fields;
    response = await jar.post(form.action, fields);
    url = form.action;
  }
  throw new Error('the OpenID sign-in did not come back');
}
