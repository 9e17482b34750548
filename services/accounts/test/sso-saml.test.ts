import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { startLocalIdp, type LocalIdp } from '@sigil/local-idp';
import { SIGIL } from '@sigil/proto';
import { freshIp, outbox, PASSWORD, sessionHeaders, sessionTokenOf, signUp, type Harness, type SignedUp } from './helpers.ts';
import { ACS_URL, BROWSER, OTHER_BROWSER, createSsoHarness, freshDomain, ownerOn, PUBLIC_URL, putConnection, relayStateOf, samlAtIdp, samlRequestIdOf } from './sso-helpers.ts';

let h: Harness;
let idp: LocalIdp;
let owner: SignedUp;
let domain: string;
let entityId: string;

beforeAll(async () => {
  idp = await startLocalIdp();
  h = await createSsoHarness('sso_saml');
  domain = freshDomain('saml');
  owner = await ownerOn(h, 'business', `boss@${domain}`);
  entityId = `${PUBLIC_URL}/v1/auth/sso/saml/metadata/${owner.organizationId}/corp`;
  await putConnection(h, owner.headers, 'corp', { protocol: 'saml', metadataXml: idp.saml.metadataXml, domains: [domain], jitProvisioning: true, defaultRole: 'member' }).expect(200);
});
afterAll(async () => {
  await h?.close();
  await idp?.close();
});

/** GET /v1/auth/sso/start: the redirect to the IdP, the AuthnRequest's ID and our RelayState. */
async function start(email: string, next?: string) {
  const res = await request(h.app)
    .get('/v1/auth/sso/start')
    .query({ email, ...(next === undefined ? {} : { next }) })
    .set('x-forwarded-for', freshIp())
    .set('cookie', BROWSER);
  expect(res.status).toBe(302);
  expect(res.headers['set-cookie']).toEqual([`${BROWSER}; HttpOnly; Secure; SameSite=None; Path=/; Max-Age=600`]);
  const location = res.headers.location as string;
  expect(location.startsWith(idp.saml.ssoUrl)).toBe(true);
  return { location, requestId: samlRequestIdOf(location), relayState: relayStateOf(location) };
}

const acs = (fields: Record<string, string>, cookie = BROWSER) => request(h.app).post('/v1/auth/sso/saml/acs').set('cookie', cookie).type('form').send(fields);

function ssoErrorOf(res: request.Response): string {
  expect(res.status).toBe(303);
  const location = new URL(res.headers.location as string);
  expect(`${location.origin}${location.pathname}`).toBe(`${PUBLIC_URL}/app/sign-in`);
  expect(res.headers['set-cookie']).toBeUndefined();
  return location.searchParams.get('sso_error') ?? '';
}

async function lastAudit(action: string) {
  return h.db.ssoAuditEvent.findFirstOrThrow({ where: { organizationId: owner.organizationId, action }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
}

describe('SAML sign-in through the local IdP', () => {
  it('provisions a new employee just in time with the default role and lands them in the dashboard', async () => {
    const email = `new.hire@${domain}`;
    const { location } = await start(email);
    const posted = await samlAtIdp(location, { email, name: 'New Hire' });
    expect(posted.action).toBe(ACS_URL);
    const res = await acs(posted.fields);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`${PUBLIC_URL}/app/`);
    expect(res.headers['cache-control']).toBe('no-store');
    const token = sessionTokenOf(res);
    const session = await request(h.app).get('/v1/auth/session').set(await sessionHeaders(h, token));
    expect(session.body).toMatchObject({ user: { email, name: 'New Hire' }, organization: { id: owner.organizationId }, role: 'member' });

    const added = (await outbox(h, 'member.added', owner.organizationId)).filter((e) => e.payload.data.email === email);
    expect(added).toHaveLength(1);
    expect(added[0]?.payload.data).toMatchObject({ role: 'member' });
    expect((await lastAudit('sso.member_provisioned')).subject).toBe(email);
    expect(await lastAudit('sso.sign_in')).toMatchObject({ subject: email, providerId: 'corp', outcome: 'success' });
    const connection = await h.db.ssoConnection.findFirstOrThrow({ where: { organizationId: owner.organizationId } });
    expect(connection.lastSuccessAt).not.toBeNull();

    // A user SSO created has no usable password.
    const password = await request(h.app).post('/v1/auth/sign-in').set('x-forwarded-for', freshIp()).send({ email, password: PASSWORD });
    expect(password.status).toBe(401);
  });

  it('never adds an account that already exists to the organization (domains are not verified): an invitation does', async () => {
    const email = `founder@${domain}`;
    const elsewhere = await signUp(h, { email, organizationName: 'Side Project' });
    const { location } = await start(email);
    const res = await acs((await samlAtIdp(location, { email })).fields);
    expect(ssoErrorOf(res)).toMatch(/already has a Sigil account and is not a member of Acme; ask an admin to invite you/);
    expect((await lastAudit('sso.sign_in_failed')).details).toEqual({ reasonCode: 'not_a_member' });
    expect(await h.db.membership.count({ where: { userId: elsewhere.userId } })).toBe(1);
    const password = await request(h.app).post('/v1/auth/sign-in').set('x-forwarded-for', freshIp()).send({ email, password: PASSWORD });
    expect(password.body).toMatchObject({ organization: { id: elsewhere.organizationId } });
  });

  it('takes back an account an identity provider made once it belongs to no organization, not while it belongs to one', async () => {
    const email = `returning.${Date.now()}@${domain}`;
    const first = await start(email);
    const joined = await acs((await samlAtIdp(first.location, { email })).fields);
    expect(joined.headers.location).toBe(`${PUBLIC_URL}/app/`);
    const user = await h.db.user.findUniqueOrThrow({ where: { email } });
    const other = await signUp(h, { organizationName: 'Other Co' });
    await h.db.membership.update({ where: { organizationId_userId: { organizationId: owner.organizationId, userId: user.id } }, data: { organizationId: other.organizationId } });
    const refused = await start(email);
    expect(ssoErrorOf(await acs((await samlAtIdp(refused.location, { email })).fields))).toMatch(/already has a Sigil account/);

    await h.db.membership.deleteMany({ where: { userId: user.id } });
    const again = await start(email);
    expect((await acs((await samlAtIdp(again.location, { email })).fields)).headers.location).toBe(`${PUBLIC_URL}/app/`);
    expect(await h.db.membership.findUnique({ where: { organizationId_userId: { organizationId: owner.organizationId, userId: user.id } } })).toMatchObject({ role: 'member' });
  });

  it('does not bring back a person the organization’s SCIM deactivated', async () => {
    const email = `leaver.${Date.now()}@${domain}`;
    const first = await start(email);
    expect((await acs((await samlAtIdp(first.location, { email })).fields)).headers.location).toBe(`${PUBLIC_URL}/app/`);
    const user = await h.db.user.findUniqueOrThrow({ where: { email } });
    // What SCIM's deactivation leaves: the SCIM user inactive, no membership.
    await h.db.scimUser.create({ data: { id: `scimu_${Date.now().toString(36)}`, organizationId: owner.organizationId, userId: user.id, userName: email, userNameKey: email, email, displayName: 'Leaver', active: false, resource: {} } });
    await h.db.membership.deleteMany({ where: { userId: user.id } });

    const again = await start(email);
    expect(ssoErrorOf(await acs((await samlAtIdp(again.location, { email })).fields))).toMatch(/was deactivated by Acme's identity provider \(SCIM\)/);
    expect((await lastAudit('sso.sign_in_failed')).details).toEqual({ reasonCode: 'deprovisioned' });
    expect(await h.db.membership.count({ where: { userId: user.id } })).toBe(0);
  });

  it('keeps the address in the form accounts use: a full-width spelling of the domain is that domain', async () => {
    const wide = [...domain].map((c) => (/[a-z0-9]/.test(c) ? String.fromCodePoint(c.codePointAt(0)! + 0xfee0) : c)).join('');
    const { location } = await start(`wide@${domain}`);
    const res = await acs((await samlAtIdp(location, { email: `Wide@${wide}` })).fields);
    expect(res.headers.location).toBe(`${PUBLIC_URL}/app/`);
    const session = await request(h.app).get('/v1/auth/session').set(await sessionHeaders(h, sessionTokenOf(res)));
    expect(session.body).toMatchObject({ user: { email: `wide@${domain}` } });
  });

  it('lands on the dashboard path given as `next`, and ignores one that leaves the dashboard', async () => {
    const email = `next.${Date.now()}@${domain}`;
    const valid = await start(email, '/app/envelopes/env_x?tab=recipients');
    expect((await acs((await samlAtIdp(valid.location, { email })).fields)).headers.location).toBe(`${PUBLIC_URL}/app/envelopes/env_x?tab=recipients`);
    for (const next of ['//evil.test', 'https://evil.test', '/\\evil.test', '/app/\\evil.test', '/v1/organization/members', '/app//evil.test', '/app/../v1/x', '/app/%2e%2e/v1/x', '/application', 'javascript:alert(1)']) {
      const { location } = await start(email, next);
      const res = await acs((await samlAtIdp(location, { email })).fields);
      expect(res.headers.location, next).toBe(`${PUBLIC_URL}/app/`);
    }
  });

  it('signs an existing member in with their own role', async () => {
    const { location } = await start(owner.email);
    const res = await acs((await samlAtIdp(location, { email: owner.email })).fields);
    expect(res.status).toBe(303);
    const session = await request(h.app).get('/v1/auth/session').set(await sessionHeaders(h, sessionTokenOf(res)));
    expect(session.body).toMatchObject({ user: { id: owner.userId }, role: 'owner' });
    expect(String(res.headers['set-cookie'])).toMatch(new RegExp(`^${SIGIL.sessionCookie}=`));
  });

  it('refuses a response brought to another browser than the one that started the login (login CSRF)', async () => {
    const who = `victim@${domain}`;
    const { location } = await start(who);
    const posted = await samlAtIdp(location, { email: who });
    expect(ssoErrorOf(await acs(posted.fields, OTHER_BROWSER))).toMatch(/started in another browser/);
    expect((await lastAudit('sso.sign_in_failed')).details).toEqual({ reasonCode: 'other_browser' });
    expect(ssoErrorOf(await acs(posted.fields, ''))).toMatch(/already used/);
  });
});

describe('refused SAML responses (each with its reason, audited, no session)', () => {
  const email = () => `refused.${Math.random().toString(36).slice(2, 8)}@${domain}`;
  const cases: Array<[string, string, (ctx: { requestId: string; email: string }) => Record<string, unknown>]> = [
    ['an unsigned response', 'unsigned', () => ({ signed: false })],
    ['an unsigned assertion in a signed response', 'unsigned', () => ({ signAssertion: false, signResponse: true })],
    ['a signature by another key', 'bad_signature', () => ({ signWithOtherKey: true })],
    ['the wrong audience', 'wrong_audience', () => ({ audience: 'https://other.example/sp' })],
    ['an expired assertion', 'expired', () => ({ notBefore: new Date(Date.now() - 20 * 60_000), notOnOrAfter: new Date(Date.now() - 10 * 60_000) })],
    ['an assertion not valid yet', 'not_yet_valid', () => ({ notBefore: new Date(Date.now() + 10 * 60_000), notOnOrAfter: new Date(Date.now() + 20 * 60_000) })],
    ['the wrong InResponseTo', 'wrong_in_response_to', () => ({ inResponseTo: '_not_our_request' })],
    ['no InResponseTo (unsolicited)', 'wrong_in_response_to', () => ({ inResponseTo: undefined })],
    ['another recipient', 'wrong_destination', () => ({ acsUrl: 'https://other.example/acs' })],
  ];
  for (const [name, code, change] of cases) {
    it(`refuses ${name} (${code})`, async () => {
      const who = email();
      const { requestId, relayState } = await start(who);
      const SAMLResponse = idp.samlResponse({ inResponseTo: requestId, audience: entityId, acsUrl: ACS_URL, email: who, ...change({ requestId, email: who }) });
      const message = ssoErrorOf(await acs({ SAMLResponse, RelayState: relayState }));
      const audit = await lastAudit('sso.sign_in_failed');
      expect(audit.details).toEqual({ reasonCode: code });
      expect(audit.reason).toBe(message);
      expect(await h.db.user.findUnique({ where: { email: who } })).toBeNull();
    });
  }

  it('refuses an assertion whose signed subject confirmation answers no request, wrapped in a response to ours', async () => {
    const who = email();
    const { requestId, relayState } = await start(who);
    // Signed assertion without InResponseTo (as an unsolicited one), in an unsigned Response that names our request.
    const unsolicited = idp.samlResponse({ audience: entityId, acsUrl: ACS_URL, email: who, signAssertion: true, signResponse: false });
    const xml = Buffer.from(unsolicited, 'base64').toString('utf8').replace('<samlp:Response ', `<samlp:Response InResponseTo="${requestId}" `);
    const message = ssoErrorOf(await acs({ SAMLResponse: Buffer.from(xml, 'utf8').toString('base64'), RelayState: relayState }));
    expect(message).toMatch(/does not answer our sign-in request/);
    expect((await lastAudit('sso.sign_in_failed')).details).toEqual({ reasonCode: 'wrong_in_response_to' });
    expect(await h.db.user.findUnique({ where: { email: who } })).toBeNull();
  });

  it('refuses a replayed assertion (its id seen before) and a response posted twice', async () => {
    const first = email();
    const assertionId = `_replay${Date.now()}`;
    const one = await start(first);
    const fields = { SAMLResponse: idp.samlResponse({ inResponseTo: one.requestId, audience: entityId, acsUrl: ACS_URL, email: first, assertionId }), RelayState: one.relayState };
    expect((await acs(fields)).headers.location).toBe(`${PUBLIC_URL}/app/`);
    // The same POST again: its state was used.
    expect(ssoErrorOf(await acs(fields))).toMatch(/already used/);
    expect((await lastAudit('sso.sign_in_failed')).details).toEqual({ reasonCode: 'replayed' });
    // The same assertion id in a response to a new request.
    const two = await start(first);
    const again = idp.samlResponse({ inResponseTo: two.requestId, audience: entityId, acsUrl: ACS_URL, email: first, assertionId });
    expect(ssoErrorOf(await acs({ SAMLResponse: again, RelayState: two.relayState }))).toMatch(/already used/);
    expect((await lastAudit('sso.sign_in_failed')).details).toEqual({ reasonCode: 'replayed' });
  });

  it('refuses a tampered or unknown RelayState without touching any organization', async () => {
    const who = email();
    const { requestId, relayState } = await start(who);
    const SAMLResponse = idp.samlResponse({ inResponseTo: requestId, audience: entityId, acsUrl: ACS_URL, email: who });
    expect(ssoErrorOf(await acs({ SAMLResponse, RelayState: `${relayState}x` }))).toMatch(/unknown or has expired/);
    expect(ssoErrorOf(await acs({ SAMLResponse }))).toMatch(/unknown or has expired/);
  });

  it('refuses an address outside the connection domains and a non-member when JIT is off', async () => {
    const outsider = `someone@${freshDomain('elsewhere')}`;
    const a = await start(`x@${domain}`);
    const other = idp.samlResponse({ inResponseTo: a.requestId, audience: entityId, acsUrl: ACS_URL, email: outsider });
    expect(ssoErrorOf(await acs({ SAMLResponse: other, RelayState: a.relayState }))).toMatch(/not in a domain of this connection/);
    expect((await lastAudit('sso.sign_in_failed')).details).toEqual({ reasonCode: 'domain_not_allowed' });

    await putConnection(h, owner.headers, 'corp', { jitProvisioning: false }).expect(200);
    try {
      const who = email();
      const b = await start(who);
      const res = await acs((await samlAtIdp(b.location, { email: who })).fields);
      expect(ssoErrorOf(res)).toMatch(/is not a member of Acme; ask an admin to invite you/);
      expect((await lastAudit('sso.sign_in_failed')).details).toEqual({ reasonCode: 'not_a_member' });
    } finally {
      await putConnection(h, owner.headers, 'corp', { jitProvisioning: true }).expect(200);
    }
  });
});

describe('test logins', () => {
  async function createTest() {
    const res = await request(h.app).post('/v1/sso/connections/corp/tests').set(owner.headers);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ object: 'sso_connection_test', status: 'pending', providerId: 'corp' });
    const path = new URL(res.body.url as string).pathname;
    expect(path).toBe(`/v1/sso/connections/corp/tests/${res.body.id}/start`);
    const started = await request(h.app).get(path).set(owner.headers).set('cookie', BROWSER);
    expect(started.status).toBe(302);
    return { id: res.body.id as string, location: started.headers.location as string };
  }

  it('records success with the attributes received and never creates a session or a member', async () => {
    const sessionsBefore = await h.db.session.count();
    const email = `tester@${domain}`;
    const { id, location } = await createTest();
    const res = await acs((await samlAtIdp(location, { email, name: 'Tess Ter', groups: 'admins' })).fields);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.text).toContain('Test login succeeded');
    expect(res.text).toContain('You can close this window');
    expect(await h.db.session.count()).toBe(sessionsBefore);
    expect(await h.db.user.findUnique({ where: { email } })).toBeNull();

    const test = await request(h.app).get(`/v1/sso/connections/corp/tests/${id}`).set(owner.headers);
    expect(test.body).toMatchObject({ status: 'succeeded', reason: null, error: null, attributes: { email, firstName: 'Tess', lastName: 'Ter' } });
    expect((await lastAudit('connection.test_succeeded')).subject).toBe(email);
    // It ran: it cannot start again.
    expect((await request(h.app).get(`/v1/sso/connections/corp/tests/${id}/start`).set(owner.headers)).status).toBe(409);
  });

  it('records the exact reason of a failure and marks the connection failing until a success', async () => {
    const { id, location } = await createTest();
    const requestId = samlRequestIdOf(location);
    const SAMLResponse = idp.samlResponse({ inResponseTo: requestId, audience: 'https://wrong.example/sp', acsUrl: ACS_URL, email: `t@${domain}` });
    const res = await acs({ SAMLResponse, RelayState: relayStateOf(location) });
    expect(res.status).toBe(200);
    expect(res.text).toContain('Test login failed');
    expect(res.text).toContain('another audience');
    const test = await request(h.app).get(`/v1/sso/connections/corp/tests/${id}`).set(owner.headers);
    expect(test.body).toMatchObject({ status: 'failed', reasonCode: 'wrong_audience' });
    expect(test.body.reason).toMatch(/another audience/);
    expect(test.body.error).toBe(test.body.reason);
    const connection = await request(h.app).get('/v1/sso/connections/corp').set(owner.headers);
    expect(connection.body).toMatchObject({ status: 'failing', health: { lastError: test.body.reason } });
    expect((await lastAudit('connection.test_failed')).details).toMatchObject({ testId: id, reasonCode: 'wrong_audience' });

    const ok = await createTest();
    await acs((await samlAtIdp(ok.location, { email: `t@${domain}` })).fields).expect(200);
    const healed = await request(h.app).get('/v1/sso/connections/corp').set(owner.headers);
    expect(healed.body).toMatchObject({ status: 'active', health: { lastError: null } });
  });

  it('a test login of an existing member signs nobody in', async () => {
    const { location } = await createTest();
    const res = await acs((await samlAtIdp(location, { email: owner.email })).fields);
    expect(res.status).toBe(200);
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('is 404 for an unknown test', async () => {
    expect((await request(h.app).get('/v1/sso/connections/corp/tests/ssot_unknownunknown1').set(owner.headers)).status).toBe(404);
  });
});
