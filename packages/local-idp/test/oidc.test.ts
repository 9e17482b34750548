/**
 * The OpenID provider as a relying party meets it: openid-client discovers it over plain http, sends a person through
 * the authorization code flow with PKCE, state and nonce (the sign-in form over HTTP, cookies kept), and reads the ID
 * token's claims; what the provider refuses (an unregistered redirect URI, no PKCE, a wrong secret) it refuses.
 */
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalIdp, type LocalIdp } from '../src/index.ts';
import { CookieJar, postForm, readForm } from '../src/browser.ts';

const CALLBACK = 'http://127.0.0.1:9/v1/auth/sso/oidc/callback';
const LATER_CALLBACK = 'http://127.0.0.1:9/later/callback';
let idp: LocalIdp;
let config: client.Configuration;

beforeAll(async () => {
  idp = await startLocalIdp({ redirectUris: [CALLBACK], users: [{ email: 'grace@example.com', name: 'Grace Hopper', groups: ['admins'] }] });
  config = await client.discovery(new URL(idp.oidc.issuer), idp.oidc.clientId, undefined, client.ClientSecretBasic(idp.oidc.clientSecret), { execute: [client.allowInsecureRequests] });
});
afterAll(async () => {
  await idp?.close();
});

interface Checks {
  state: string;
  nonce: string;
  verifier: string;
}

async function authorizationUrl(redirectUri = CALLBACK, extra: Record<string, string> = {}): Promise<{ url: URL; checks: Checks }> {
  const checks = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier() };
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    state: checks.state,
    nonce: checks.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(checks.verifier),
    code_challenge_method: 'S256',
    ...extra,
  });
  return { url, checks };
}

/**
 * From the authorization URL through the sign-in form to the redirect back to the relying party (not followed),
 * submitting the pages that submit themselves on the way (ending a previous person's session) as a browser would.
 */
async function signIn(jar: CookieJar, url: URL, person: Record<string, string>, redirectUri = CALLBACK): Promise<URL> {
  const toForm = await jar.follow(url.href);
  expect(toForm.response.status).toBe(200);
  const html = await toForm.response.text();
  expect(html).toMatch(/<label for="email">Email<\/label>/);
  expect(html).toMatch(/<button type="submit">Sign in<\/button>/);
  let response = await postForm(jar, readForm(html, toForm.url), person);
  let at = toForm.url;
  for (let pages = 0; pages < 3; pages++) {
    expect(response.status).toBe(303);
    const next = await jar.follow(new URL(response.headers.get('location')!, at).href, (target) => target.startsWith(redirectUri));
    if (next.url.startsWith(redirectUri)) return new URL(next.url);
    expect(next.response.status).toBe(200);
    const form = readForm(await next.response.text(), next.url);
    expect(form.action.startsWith(idp.oidc.issuer)).toBe(true);
    response = await postForm(jar, form);
    at = form.action;
  }
  throw new Error('the sign-in did not come back to the relying party');
}

describe('the OpenID provider', () => {
  it('discovers with the issuer, the code flow, PKCE S256 and the client authentication the client was made with', () => {
    const server = config.serverMetadata();
    expect(server.issuer).toBe(idp.oidc.issuer);
    expect(server.response_types_supported).toContain('code');
    expect(server.code_challenge_methods_supported).toEqual(['S256']);
    expect(server.scopes_supported).toEqual(expect.arrayContaining(['openid', 'email', 'profile']));
    expect(idp.oidc.tokenEndpointAuthMethod).toBe('client_secret_basic');
  });

  it('signs a person in with code, PKCE, state and nonce: the ID token carries e-mail, name and groups', async () => {
    const { url, checks } = await authorizationUrl();
    const callback = await signIn(new CookieJar(), url, { email: 'Ada@Example.com', name: 'Ada Lovelace', groups: 'engineering, admins' });
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: checks.verifier, expectedState: checks.state, expectedNonce: checks.nonce, idTokenExpected: true });
    expect(tokens.claims()).toMatchObject({
      iss: idp.oidc.issuer,
      aud: idp.oidc.clientId,
      sub: 'ada@example.com',
      email: 'ada@example.com',
      email_verified: true,
      name: 'Ada Lovelace',
      given_name: 'Ada',
      family_name: 'Lovelace',
      groups: ['engineering', 'admins'],
      nonce: checks.nonce,
    });
    // The code is spent.
    await expect(client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: checks.verifier, expectedState: checks.state, expectedNonce: checks.nonce })).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('asks again on the next sign-in in the same browser, prefilled from login_hint', async () => {
    const jar = new CookieJar();
    const first = await authorizationUrl();
    await signIn(jar, first.url, { email: 'ada@example.com', name: 'Ada Lovelace' });
    const second = await authorizationUrl(CALLBACK, { login_hint: 'grace@example.com' });
    const form = await jar.follow(second.url.href);
    expect(await form.response.text()).toContain('value="grace@example.com"');
    const callback = await signIn(jar, second.url, { email: 'grace@example.com' });
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: second.checks.verifier, expectedState: second.checks.state, expectedNonce: second.checks.nonce });
    expect(tokens.claims()).toMatchObject({ email: 'grace@example.com', name: 'Grace Hopper', groups: ['admins'] });
  });

  it('redirects only to registered URIs, and to one registered after start', async () => {
    const refused = await (await authorizationUrl(LATER_CALLBACK)).url;
    const answer = await fetch(refused, { redirect: 'manual' });
    expect(answer.status).toBe(400);
    expect(await answer.text()).toMatch(/redirect_uri did not match/);

    idp.registerRedirectUri(LATER_CALLBACK);
    const { url, checks } = await authorizationUrl(LATER_CALLBACK);
    const callback = await signIn(new CookieJar(), url, { email: 'ada@example.com' }, LATER_CALLBACK);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: checks.verifier, expectedState: checks.state, expectedNonce: checks.nonce });
    expect(tokens.claims()).toMatchObject({ email: 'ada@example.com', name: 'ada' });
  });

  it('requires PKCE, and refuses a tampered state and a wrong client secret', async () => {
    const withoutPkce = new URL(`${config.serverMetadata().authorization_endpoint}?${new URLSearchParams({ client_id: idp.oidc.clientId, response_type: 'code', scope: 'openid', redirect_uri: CALLBACK, state: 's' })}`);
    const answer = await fetch(withoutPkce, { redirect: 'manual' });
    expect(answer.status).toBe(303);
    const error = new URL(answer.headers.get('location')!);
    expect(error.searchParams.get('error')).toBe('invalid_request');
    expect(error.searchParams.get('error_description')).toMatch(/requires PKCE/);

    const { url, checks } = await authorizationUrl();
    const callback = await signIn(new CookieJar(), url, { email: 'ada@example.com' });
    await expect(client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: checks.verifier, expectedState: 'tampered', expectedNonce: checks.nonce })).rejects.toMatchObject({ cause: { message: expect.stringMatching(/"state"/) } });
    const wrongSecret = await client.discovery(new URL(idp.oidc.issuer), idp.oidc.clientId, undefined, client.ClientSecretBasic('wrong'), { execute: [client.allowInsecureRequests] });
    await expect(client.authorizationCodeGrant(wrongSecret, callback, { pkceCodeVerifier: checks.verifier, expectedState: checks.state, expectedNonce: checks.nonce })).rejects.toMatchObject({ status: 401, cause: [{ parameters: { error: 'invalid_client' } }] });
  });
});
