import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { startLocalIdp, type LocalIdp } from '@sigil/local-idp';
import { freshIp, sessionHeaders, sessionTokenOf, type Harness, type SignedUp } from './helpers.ts';
import { BROWSER, OTHER_BROWSER, createSsoHarness, freshDomain, OIDC_CALLBACK, oidcAtIdp, ownerOn, PUBLIC_URL, putConnection } from './sso-helpers.ts';

let h: Harness;
let idp: LocalIdp;
let owner: SignedUp;
let domain: string;

beforeAll(async () => {
  idp = await startLocalIdp({ redirectUris: [OIDC_CALLBACK] });
  h = await createSsoHarness('sso_oidc');
  domain = freshDomain('oidc');
  owner = await ownerOn(h, 'business', `boss@${domain}`);
  await putConnection(h, owner.headers, 'oidc', {
    protocol: 'oidc',
    issuer: idp.oidc.issuer,
    clientId: idp.oidc.clientId,
    clientSecret: idp.oidc.clientSecret,
    domains: [domain],
    jitProvisioning: true,
    defaultRole: 'viewer',
  }).expect(200);
});
afterAll(async () => {
  await h?.close();
  await idp?.close();
});

async function start(email: string): Promise<URL> {
  const res = await request(h.app).get('/v1/auth/sso/start').query({ email }).set('x-forwarded-for', freshIp()).set('cookie', BROWSER);
  expect(res.status).toBe(302);
  const location = new URL(res.headers.location as string);
  expect(location.href.startsWith(idp.oidc.issuer)).toBe(true);
  // Authorization code with PKCE (S256), state and nonce.
  expect(location.searchParams.get('response_type')).toBe('code');
  expect(location.searchParams.get('code_challenge_method')).toBe('S256');
  expect(location.searchParams.get('state')).toBeTruthy();
  expect(location.searchParams.get('nonce')).toBeTruthy();
  expect(location.searchParams.get('redirect_uri')).toBe(OIDC_CALLBACK);
  expect(location.searchParams.get('login_hint')).toBe(email);
  return location;
}

const lastFailure = () =>
  h.db.ssoAuditEvent.findFirstOrThrow({ where: { organizationId: owner.organizationId, action: 'sso.sign_in_failed' }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });

const callback = (url: URL, cookie = BROWSER) => request(h.app).get(`/v1/auth/sso/oidc/callback${url.search}`).set('cookie', cookie);

function ssoErrorOf(res: request.Response): string {
  expect(res.status).toBe(303);
  const location = new URL(res.headers.location as string);
  expect(location.pathname).toBe('/app/sign-in');
  expect(res.headers['set-cookie']).toBeUndefined();
  return location.searchParams.get('sso_error') ?? '';
}

describe('OIDC sign-in through the local OpenID provider', () => {
  it('provisions a new employee with the default role and lands them in the dashboard', async () => {
    const email = `fresh@${domain}`;
    const back = await oidcAtIdp((await start(email)).href, { email, name: 'Fresh Person' });
    const res = await callback(back);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`${PUBLIC_URL}/app/`);
    const session = await request(h.app).get('/v1/auth/session').set(await sessionHeaders(h, sessionTokenOf(res)));
    expect(session.body).toMatchObject({ user: { email, name: 'Fresh Person' }, role: 'viewer', organization: { id: owner.organizationId } });
    // Both entries are written in the sign-in's transaction, at the same instant.
    const audit = await h.db.ssoAuditEvent.findMany({ where: { organizationId: owner.organizationId, subject: email } });
    expect(audit.map((a) => a.action).sort()).toEqual(['sso.member_provisioned', 'sso.sign_in']);
  });

  it('refuses a tampered state, a callback used twice, and one brought to another browser', async () => {
    const email = `owner.again@${domain}`;
    const back = await oidcAtIdp((await start(email)).href, { email });
    const tampered = new URL(back);
    tampered.searchParams.set('state', `${back.searchParams.get('state')}x`);
    expect(ssoErrorOf(await callback(tampered))).toMatch(/unknown or has expired/);
    expect(await h.db.user.findUnique({ where: { email } })).toBeNull();

    const ok = await callback(back);
    expect(ok.headers.location).toBe(`${PUBLIC_URL}/app/`);
    expect(ssoErrorOf(await callback(back))).toMatch(/already used/);
    expect((await lastFailure()).details).toEqual({ reasonCode: 'replayed' });

    const elsewhere = await oidcAtIdp((await start(email)).href, { email });
    expect(ssoErrorOf(await callback(elsewhere, OTHER_BROWSER))).toMatch(/started in another browser/);
    expect((await lastFailure()).details).toEqual({ reasonCode: 'other_browser' });
  });

  it("refuses another login's code (PKCE and nonce are this login's) and the provider's error", async () => {
    const email = `mixed@${domain}`;
    const first = await oidcAtIdp((await start(email)).href, { email });
    const second = await start(email);
    const swapped = new URL(first);
    swapped.searchParams.set('state', second.searchParams.get('state') ?? '');
    expect(ssoErrorOf(await callback(swapped))).toMatch(/could not be completed/);
    expect((await lastFailure()).details).toEqual({ reasonCode: 'oidc_error' });

    const third = await start(email);
    const denied = new URL(OIDC_CALLBACK);
    denied.searchParams.set('state', third.searchParams.get('state') ?? '');
    denied.searchParams.set('error', 'access_denied');
    denied.searchParams.set('error_description', 'the user said no');
    expect(ssoErrorOf(await callback(denied))).toMatch(/refused the sign-in: access_denied \(the user said no\)/);

    // Whoever holds a state can make up the provider's error: it becomes the connection's lastError as one short line.
    const fourth = await start(email);
    const forged = new URL(OIDC_CALLBACK);
    forged.searchParams.set('state', fourth.searchParams.get('state') ?? '');
    forged.searchParams.set('error', 'x'.repeat(500));
    forged.searchParams.set('error_description', `Your IdP moved.\r\nVisit https://evil.test ${'y'.repeat(1000)}`);
    const said = ssoErrorOf(await callback(forged));
    expect(said).not.toMatch(/[\r\n]/);
    expect(said.length).toBeLessThan(320);
    const connection = await request(h.app).get('/v1/sso/connections/oidc').set(owner.headers);
    expect(connection.body.health.lastError).toBe(said);
  });

  it('audits a sign-in that cannot start because the provider is unreachable, and marks the connection failing', async () => {
    const connection = await h.db.ssoConnection.findFirstOrThrow({ where: { organizationId: owner.organizationId, providerId: 'oidc' } });
    await h.db.ssoConnection.update({ where: { id: connection.id }, data: { oidcIssuer: 'http://127.0.0.1:1/gone' } });
    try {
      const email = `stranded@${domain}`;
      const res = await request(h.app).get('/v1/auth/sso/start').query({ email }).set('x-forwarded-for', freshIp()).set('cookie', BROWSER);
      expect(res.status).toBe(302);
      expect(new URL(res.headers.location as string).searchParams.get('sso_error')).toMatch(/cannot be reached/);
      expect(await lastFailure()).toMatchObject({ subject: email, details: { reasonCode: 'connection_unavailable' } });
      const view = await request(h.app).get('/v1/sso/connections/oidc').set(owner.headers);
      expect(view.body).toMatchObject({ status: 'failing', health: { lastError: expect.stringMatching(/cannot be reached/) } });
    } finally {
      await h.db.ssoConnection.update({ where: { id: connection.id }, data: { oidcIssuer: connection.oidcIssuer } });
    }
  });

  it('runs a test login that records the claims and creates no session', async () => {
    const sessions = await h.db.session.count();
    const created = await request(h.app).post('/v1/sso/connections/oidc/tests').set(owner.headers).expect(201);
    const started = await request(h.app).get(new URL(created.body.url).pathname).set(owner.headers).set('cookie', BROWSER);
    expect(started.status).toBe(302);
    const email = `probe@${domain}`;
    const res = await callback(await oidcAtIdp(started.headers.location as string, { email, name: 'Probe Person' }));
    expect(res.status).toBe(200);
    expect(res.text).toContain('Test login succeeded');
    expect(await h.db.session.count()).toBe(sessions);
    const test = await request(h.app).get(`/v1/sso/connections/oidc/tests/${created.body.id}`).set(owner.headers);
    expect(test.body).toMatchObject({ status: 'succeeded', attributes: { email, name: 'Probe Person', iss: idp.oidc.issuer } });
    const connection = await request(h.app).get('/v1/sso/connections/oidc').set(owner.headers);
    expect(connection.body.health.lastSuccessAt).toBeTruthy();
  });
});
