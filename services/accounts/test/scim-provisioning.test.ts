// What SCIM does to Sigil: password-less accounts, memberships and roles from groups; deprovisioning ends the
// person's sessions at once (the gateway's session look-up refuses them, `member.removed` is in the outbox); the last
// owner is never removed; the protocol's discovery endpoints, paging and refusals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { PASSWORD, authenticate, createHarness, freshIp, outbox, sessionTokenOf, sha256, uniqueEmail, type Harness } from './helpers.ts';
import { NO_PASSWORD } from '../src/provisioning.ts';
import { issueSession } from '../src/sessions.ts';
import { scim, scimBody, scimOrganization, type ScimOrg } from './scim-support.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness('scim_provisioning');
});
afterAll(async () => {
  await h?.close();
});

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

async function provision(org: ScimOrg, email: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await scim(h, org.token, 'post', '/Users', { schemas: [USER], userName: email, name: { givenName: 'Pat', familyName: 'Doe' }, emails: [{ value: email, primary: true }], active: true, ...extra });
  expect(res.status, res.text).toBe(201);
  return scimBody(res).id as string;
}

const deactivate = (org: ScimOrg, id: string) => scim(h, org.token, 'patch', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] });

async function memberRole(org: ScimOrg, email: string): Promise<string | null> {
  const membership = await h.db.membership.findFirst({ where: { organizationId: org.owner.organizationId, user: { email } } });
  return membership?.role ?? null;
}

describe('provisioning a user', () => {
  it('creates a password-less account and a membership; no password ever signs in', async () => {
    const org = await scimOrganization(h);
    const email = uniqueEmail('scim');
    await provision(org, email);
    const user = await h.db.user.findUniqueOrThrow({ where: { email } });
    expect(user).toMatchObject({ name: 'Pat Doe', passwordHash: NO_PASSWORD });
    expect(await memberRole(org, email)).toBe('member');
    const added = await outbox(h, 'member.added', org.owner.organizationId);
    expect(added.at(-1)?.payload.data).toMatchObject({ userId: user.id, email, role: 'member' });
    for (const password of [NO_PASSWORD, PASSWORD, '']) {
      const res = await request(h.app).post('/v1/auth/sign-in').set('x-forwarded-for', freshIp()).send({ email, password: password || 'x' });
      expect(res.status).toBe(401);
    }
  });

  it('refuses an existing account of someone who is not a member: an unverified domain must not pull their account in', async () => {
    const org = await scimOrganization(h);
    const other = await scimOrganization(h);
    const email = other.owner.email;
    const res = await scim(h, org.token, 'post', '/Users', { schemas: [USER], userName: email, emails: [{ value: email, primary: true }], active: true });
    expect(res.status).toBe(409);
    expect(scimBody(res)).toMatchObject({ scimType: 'uniqueness', detail: expect.stringContaining('invite them from the dashboard') });
    expect(await memberRole(org, email)).toBeNull();
    expect(await memberRole(other, email)).toBe('owner');
  });

  it('links the existing account of a member (invited before) with its password and its name, instead of creating one', async () => {
    const org = await scimOrganization(h);
    const other = await scimOrganization(h);
    const email = other.owner.email;
    await h.db.membership.create({ data: { id: `mem_${Date.now().toString(36)}linked`, organizationId: org.owner.organizationId, userId: other.owner.userId, role: 'viewer' } });
    const id = await provision(org, email);
    expect(await memberRole(org, email)).toBe('viewer');
    expect(await memberRole(other, email)).toBe('owner');
    const put = await scim(h, org.token, 'put', `/Users/${id}`, { schemas: [USER], userName: email, name: { givenName: 'Renamed', familyName: 'ByIdP' }, emails: [{ value: email, primary: true }], active: true });
    expect(put.status).toBe(200);
    expect((await h.db.user.findUniqueOrThrow({ where: { email } })).name).toBe('Ada Owner');
    const signIn = await request(h.app).post('/v1/auth/sign-in').set('x-forwarded-for', freshIp()).send({ email, password: PASSWORD });
    expect(signIn.status).toBe(200);
  });

  it('refuses a user without an e-mail address, a body that is not JSON, and a second userName for one account', async () => {
    const org = await scimOrganization(h);
    const noEmail = await scim(h, org.token, 'post', '/Users', { schemas: [USER], userName: 'just-a-name', active: true });
    expect(noEmail.status).toBe(400);
    expect(scimBody(noEmail)).toMatchObject({ status: '400', scimType: 'invalidValue', detail: expect.stringContaining('e-mail') });
    const broken = await request(h.app).post('/scim/v2/Users').set('authorization', `Bearer ${org.token}`).set('content-type', 'application/scim+json').send('{"userName":');
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.text)).toMatchObject({ status: '400', scimType: 'invalidSyntax' });
    const email = uniqueEmail('twice');
    await provision(org, email);
    const again = await scim(h, org.token, 'post', '/Users', { schemas: [USER], userName: 'other-name', emails: [{ value: email }], active: true });
    expect(again.status).toBe(409);
    expect(scimBody(again)).toMatchObject({ scimType: 'uniqueness' });
  });
});

describe('deprovisioning', () => {
  it("ends a deactivated member's open dashboard session at once (member.removed, sessions revoked)", async () => {
    const org = await scimOrganization(h);
    const email = uniqueEmail('leaver');
    // The person joined by invitation and signed in with a password: a real dashboard session.
    const invitation = await request(h.app).post('/v1/organization/invitations').set(org.owner.headers).send({ email, role: 'admin' });
    const joined = await request(h.app).post('/v1/auth/accept-invitation').set('x-forwarded-for', freshIp()).send({ token: invitation.body.token, name: 'Leaver', password: PASSWORD });
    expect(joined.status).toBe(201);
    const session = sessionTokenOf(joined);
    expect((await authenticate(h, { type: 'session', tokenHash: sha256(session) })).principal).toMatchObject({ role: 'admin' });

    const id = await provision(org, email);
    expect(await memberRole(org, email)).toBe('admin');
    const res = await deactivate(org, id);
    expect(res.status).toBe(200);
    expect(scimBody(res)).toMatchObject({ id, active: false });

    expect(await authenticate(h, { type: 'session', tokenHash: sha256(session) })).toEqual({ principal: null, reason: 'revoked' });
    const userId = joined.body.user.id as string;
    const removed = await outbox(h, 'member.removed', org.owner.organizationId);
    expect(removed.map((r) => r.payload.data.userId)).toContain(userId);
    const revoked = await outbox(h, 'session.revoked', org.owner.organizationId);
    expect(revoked.map((r) => r.payload.data.sessionHash)).toContain(sha256(session));
    expect(await memberRole(org, email)).toBeNull();

    // Reactivation adds the membership back (as a member: the old session stays ended).
    const back = await scim(h, org.token, 'patch', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: true } }] });
    expect(back.status).toBe(200);
    expect(await memberRole(org, email)).toBe('member');
    expect((await authenticate(h, { type: 'session', tokenHash: sha256(session) })).principal).toBeNull();
  });

  it('deleting a provisioned user ends their session too and keeps the account', async () => {
    const org = await scimOrganization(h);
    const email = uniqueEmail('deleted');
    const id = await provision(org, email);
    const user = await h.db.user.findUniqueOrThrow({ where: { email } });
    const issued = await h.db.$transaction((tx) => issueSession(tx, user.id, org.owner.organizationId, new Date()));
    expect((await authenticate(h, { type: 'session', tokenHash: sha256(issued.token) })).principal).not.toBeNull();
    expect((await scim(h, org.token, 'delete', `/Users/${id}`)).status).toBe(204);
    expect(await authenticate(h, { type: 'session', tokenHash: sha256(issued.token) })).toEqual({ principal: null, reason: 'revoked' });
    expect((await outbox(h, 'member.removed', org.owner.organizationId)).map((r) => r.payload.data.userId)).toContain(user.id);
    expect(await h.db.user.count({ where: { id: user.id } })).toBe(1);
    expect(await h.db.scimUser.count({ where: { id } })).toBe(0);
  });

  it('never removes the last owner (400 mutability, audited as a failure); the owner stays signed in', async () => {
    const org = await scimOrganization(h);
    const id = await provision(org, org.owner.email);
    expect(await memberRole(org, org.owner.email)).toBe('owner');
    for (const res of [await deactivate(org, id), await scim(h, org.token, 'delete', `/Users/${id}`)]) {
      expect(res.status, res.text).toBe(400);
      expect(scimBody(res)).toMatchObject({ status: '400', scimType: 'mutability', detail: expect.stringContaining('last owner') });
    }
    expect(await memberRole(org, org.owner.email)).toBe('owner');
    expect(scimBody(await scim(h, org.token, 'get', `/Users/${id}`))).toMatchObject({ active: true });
    expect((await authenticate(h, { type: 'session', tokenHash: sha256(org.owner.token) })).principal).not.toBeNull();
    const trail = (await request(h.app).get('/v1/sso/audit').set(org.owner.headers)).body.data as { action: string; outcome: string; reason: string | null }[];
    expect(trail.slice(0, 2)).toEqual([
      expect.objectContaining({ action: 'scim.user_deleted', outcome: 'failure', reason: expect.stringContaining('last owner') }),
      expect.objectContaining({ action: 'scim.user_deactivated', outcome: 'failure', reason: expect.stringContaining('last owner') }),
    ]);
  });
});

describe('groups give roles', () => {
  it('the highest role group wins, other groups give none, owners keep their role; GET /v1/scim shows it', async () => {
    const org = await scimOrganization(h);
    const email = uniqueEmail('grouped');
    const id = await provision(org, email);
    const ownerId = await provision(org, org.owner.email);
    const group = async (displayName: string, members: string[]) => {
      const res = await scim(h, org.token, 'post', '/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName, members: members.map((value) => ({ value })) });
      expect(res.status, res.text).toBe(201);
      return scimBody(res).id as string;
    };
    await group('Engineering', [id]);
    expect(await memberRole(org, email)).toBe('member');
    const viewers = await group('sigil_viewer', [id]);
    expect(await memberRole(org, email)).toBe('viewer');
    await group('Admins', [id, ownerId, 'scimu_not-in-this-org']);
    expect(await memberRole(org, email)).toBe('admin');
    expect(await memberRole(org, org.owner.email)).toBe('owner');
    expect((await scim(h, org.token, 'delete', `/Groups/${viewers}`)).status).toBe(204);
    expect(await memberRole(org, email)).toBe('admin');
    const duplicate = await scim(h, org.token, 'post', '/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Admins' });
    expect(duplicate.status).toBe(409);

    const state = (await request(h.app).get('/v1/scim').set(org.owner.headers)).body;
    expect(state.users).toHaveLength(2);
    expect(state.users.find((u: { email: string }) => u.email === email)).toMatchObject({ id, userName: email, name: 'Pat Doe', active: true, role: 'admin', groups: expect.arrayContaining(['Engineering', 'Admins']) });
    expect(await outbox(h, 'member.role_changed', org.owner.organizationId)).not.toHaveLength(0);
  });
});

describe('the protocol', () => {
  it('ServiceProviderConfig, Schemas and ResourceTypes describe what is supported', async () => {
    const org = await scimOrganization(h);
    const config = scimBody(await scim(h, org.token, 'get', '/ServiceProviderConfig'));
    expect(config).toMatchObject({
      patch: { supported: true },
      filter: { supported: true, maxResults: 200 },
      bulk: { supported: false },
      sort: { supported: false },
      etag: { supported: false },
      changePassword: { supported: false },
      authenticationSchemes: [expect.objectContaining({ type: 'oauthbearertoken' })],
    });
    const schemas = scimBody(await scim(h, org.token, 'get', '/Schemas'));
    expect((schemas.Resources as { id: string }[]).map((s) => s.id)).toEqual(
      expect.arrayContaining([USER, 'urn:ietf:params:scim:schemas:core:2.0:Group', 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User']),
    );
    const types = scimBody(await scim(h, org.token, 'get', '/ResourceTypes'));
    expect((types.Resources as { name: string; endpoint: string }[]).map((t) => [t.name, t.endpoint])).toEqual(expect.arrayContaining([['User', '/Users'], ['Group', '/Groups']]));
    for (const [method, path] of [['post', '/Bulk'], ['get', '/Me'], ['post', '/Users/.search']] as const) {
      expect((await scim(h, org.token, method, path, method === 'post' ? {} : undefined)).status).toBe(501);
    }
  });

  it('pages with startIndex and count, oldest first, with the exact totalResults', async () => {
    const org = await scimOrganization(h);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await provision(org, uniqueEmail(`page${i}`)));
    const page = scimBody(await scim(h, org.token, 'get', '/Users?startIndex=2&count=2'));
    expect(page).toMatchObject({ totalResults: 5, startIndex: 2, itemsPerPage: 2 });
    expect((page.Resources as { id: string }[]).map((r) => r.id)).toEqual(ids.slice(1, 3));
    const last = scimBody(await scim(h, org.token, 'get', '/Users?startIndex=5&count=10'));
    expect((last.Resources as { id: string }[]).map((r) => r.id)).toEqual(ids.slice(4));
    expect(scimBody(await scim(h, org.token, 'get', '/Users?count=0'))).toMatchObject({ totalResults: 5, itemsPerPage: 0, Resources: [] });
    const attributes = scimBody(await scim(h, org.token, 'get', '/Users?attributes=userName&count=1'));
    expect(Object.keys((attributes.Resources as Record<string, unknown>[])[0] as object).sort()).toEqual(['id', 'userName']);
  });

  it('a PATCH that changes nothing is 204; a changed e-mail is kept in SCIM but never moves the account', async () => {
    const org = await scimOrganization(h);
    const email = uniqueEmail('stays');
    const id = await provision(org, email);
    const same = await scim(h, org.token, 'patch', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: true }] });
    expect(same.status).toBe(204);
    const moved = await scim(h, org.token, 'patch', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'emails', value: [{ value: 'someone.else@example.com', primary: true }] }] });
    expect(moved.status).toBe(200);
    expect(scimBody(moved)).toMatchObject({ emails: [{ value: 'someone.else@example.com' }] });
    expect(await memberRole(org, email)).toBe('member');
    expect(await h.db.user.count({ where: { email: 'someone.else@example.com' } })).toBe(0);
    const trail = (await request(h.app).get('/v1/sso/audit').set(org.owner.headers)).body.data as { action: string; details: Record<string, unknown> }[];
    expect(trail[0]).toMatchObject({ action: 'scim.user_updated', details: { emailIgnored: 'someone.else@example.com' } });
  });

  it('answers other filters by matching in memory, and refuses a filter it cannot parse', async () => {
    const org = await scimOrganization(h);
    const email = uniqueEmail('memory');
    await provision(org, email);
    await provision(org, uniqueEmail('other'));
    const found = scimBody(await scim(h, org.token, 'get', `/Users?filter=${encodeURIComponent('userName sw "memory." and active eq true')}`));
    expect(found).toMatchObject({ totalResults: 1, Resources: [{ userName: email }] });
    const bad = await scim(h, org.token, 'get', `/Users?filter=${encodeURIComponent('userName !! "x"')}`);
    expect(bad.status).toBe(400);
    expect(scimBody(bad)).toMatchObject({ status: '400', scimType: 'invalidFilter' });
  });
});
