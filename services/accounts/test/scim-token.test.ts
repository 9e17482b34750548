// The SCIM token (POST/DELETE /v1/scim/token), the SCIM state (GET /v1/scim), the plan gate, and /scim/v2's
// authentication: shown once, stored as SHA-256, replaced and revoked at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createHarness, sha256, signUp, type Harness } from './helpers.ts';
import { scim, scimBody, scimOrganization } from './scim-support.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness('scim_token', { publicUrl: 'https://sigil.example.test' });
});
afterAll(async () => {
  await h?.close();
});

const trail = async (headers: Record<string, string>) => (await request(h.app).get('/v1/sso/audit').set(headers)).body.data as { action: string; actor: { type: string; id: string | null } }[];

describe('POST /v1/scim/token', () => {
  it('is 403 plan-upgrade-required without the plan feature scim', async () => {
    const owner = await signUp(h);
    for (const plan of ['free', 'team'] as const) {
      h.plans.set(owner.organizationId, plan);
      const res = await request(h.app).post('/v1/scim/token').set(owner.headers);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ type: expect.stringContaining('plan-upgrade-required'), feature: 'scim', detail: expect.stringContaining('SCIM') });
    }
    expect(await h.db.scimToken.count({ where: { organizationId: owner.organizationId } })).toBe(0);
  });

  it('answers the token once (sglscim_, not cached) and keeps only its SHA-256', async () => {
    const owner = await signUp(h);
    h.plans.set(owner.organizationId, 'business');
    const res = await request(h.app).post('/v1/scim/token').set(owner.headers);
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({ object: 'scim_token', token: expect.stringMatching(/^sglscim_[A-Za-z0-9]{43}$/), createdAt: expect.any(String) });
    const row = await h.db.scimToken.findUniqueOrThrow({ where: { organizationId: owner.organizationId } });
    expect(row.tokenHash).toBe(sha256(res.body.token));
    expect(JSON.stringify(row)).not.toContain(res.body.token);

    const state = await request(h.app).get('/v1/scim').set(owner.headers);
    expect(state.status).toBe(200);
    expect(state.body).toEqual({
      object: 'scim',
      endpoint: 'https://sigil.example.test/scim/v2',
      tokenActive: true,
      tokenCreatedAt: res.body.createdAt,
      token: { active: true, createdAt: res.body.createdAt, lastUsedAt: null },
      users: [],
    });
    expect(JSON.stringify(state.body)).not.toContain(res.body.token);
    expect((await trail(owner.headers))[0]).toMatchObject({ action: 'scim.token_created', actor: { type: 'member', id: owner.userId } });
  });

  it('replacing the token revokes the previous one at once', async () => {
    const { owner, token: first } = await scimOrganization(h);
    expect((await scim(h, first, 'get', '/ServiceProviderConfig')).status).toBe(200);
    const second = (await request(h.app).post('/v1/scim/token').set(owner.headers)).body.token as string;
    expect(second).not.toBe(first);
    const refused = await scim(h, first, 'get', '/Users');
    expect(refused.status).toBe(401);
    expect((await scim(h, second, 'get', '/Users')).status).toBe(200);
    expect((await trail(owner.headers)).map((e) => e.action).slice(0, 2)).toEqual(['scim.token_created', 'scim.token_created']);
  });
});

describe('DELETE /v1/scim/token', () => {
  it('stops provisioning at once: the next SCIM request is 401', async () => {
    const { owner, token } = await scimOrganization(h);
    expect((await scim(h, token, 'get', '/Users')).status).toBe(200);
    const lastUsed = (await request(h.app).get('/v1/scim').set(owner.headers)).body.token.lastUsedAt;
    expect(lastUsed).toEqual(expect.any(String));

    expect((await request(h.app).delete('/v1/scim/token').set(owner.headers)).status).toBe(204);
    const res = await scim(h, token, 'post', '/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'late@example.com' });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="SCIM"');
    expect(scimBody(res)).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '401' });
    expect(await h.db.scimUser.count({ where: { organizationId: owner.organizationId } })).toBe(0);

    const state = (await request(h.app).get('/v1/scim').set(owner.headers)).body;
    expect(state).toMatchObject({ tokenActive: false, tokenCreatedAt: null, token: { active: false, createdAt: null, lastUsedAt: null } });
    expect((await trail(owner.headers))[0]).toMatchObject({ action: 'scim.token_revoked', actor: { type: 'member', id: owner.userId } });
    // Revoking again changes nothing and records nothing.
    expect((await request(h.app).delete('/v1/scim/token').set(owner.headers)).status).toBe(204);
    expect((await trail(owner.headers))[1]?.action).toBe('scim.token_created');
  });
});

describe('/scim/v2 authentication', () => {
  it('refuses a missing, malformed or unknown token and another scheme, in SCIM error format', async () => {
    await scimOrganization(h);
    const attempts = [
      request(h.app).get('/scim/v2/Users'),
      request(h.app).get('/scim/v2/Users').set('authorization', 'Bearer sglscim_unknown'),
      request(h.app).get('/scim/v2/Users').set('authorization', 'Basic dXNlcjpwYXNz'),
      request(h.app).get('/scim/v2/Users').set('authorization', 'Bearer sgl_test_not-a-scim-token'),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(scimBody(res)).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '401', detail: expect.stringContaining('SCIM token') });
    }
  });

  it('the token only reaches its own organization', async () => {
    const a = await scimOrganization(h);
    const b = await scimOrganization(h);
    const created = await scim(h, a.token, 'post', '/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: `only.a.${Date.now()}@example.com` });
    expect(created.status).toBe(201);
    const id = scimBody(created).id as string;
    expect((await scim(h, b.token, 'get', `/Users/${id}`)).status).toBe(404);
    expect((await scim(h, b.token, 'delete', `/Users/${id}`)).status).toBe(404);
    expect(scimBody(await scim(h, b.token, 'get', '/Users'))).toMatchObject({ totalResults: 0 });
    const user = { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'taken.over@example.com', active: false };
    expect((await scim(h, b.token, 'put', `/Users/${id}`, user)).status).toBe(404);
    const deactivate = { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', value: { active: false } }] };
    expect((await scim(h, b.token, 'patch', `/Users/${id}`, deactivate)).status).toBe(404);
    expect(scimBody(await scim(h, b.token, 'get', `/Users?filter=${encodeURIComponent(`id eq "${id}"`)}`))).toMatchObject({ totalResults: 0 });
    // A group of B naming A's user: the member is ignored, A's user gets no role from it.
    const group = await scim(h, b.token, 'post', '/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Admins', members: [{ value: id }] });
    expect(group.status).toBe(201);
    expect(scimBody(group).members ?? []).toEqual([]);
    const still = await scim(h, a.token, 'get', `/Users/${id}`);
    expect(scimBody(still)).toMatchObject({ id, active: true, userName: scimBody(created).userName });
    expect(await h.db.membership.findFirst({ where: { organizationId: b.owner.organizationId, user: { email: scimBody(created).userName as string } } })).toBeNull();
  });

  it('is 403 once the plan no longer has scim (the token is kept for when it comes back)', async () => {
    const { owner, token } = await scimOrganization(h);
    h.plans.set(owner.organizationId, 'team');
    const res = await scim(h, token, 'get', '/Users');
    expect(res.status).toBe(403);
    expect(scimBody(res)).toMatchObject({ status: '403', detail: expect.stringContaining('not on the') });
    h.plans.set(owner.organizationId, 'business');
    expect((await scim(h, token, 'get', '/Users')).status).toBe(200);
  });

  it('GET /v1/scim and the token operations need sso:manage', async () => {
    const owner = await signUp(h);
    h.plans.set(owner.organizationId, 'business');
    const member = await h.auth.headers({ kind: 'session', organizationId: owner.organizationId, actorId: 'usr_member', userId: 'usr_member', sessionId: 'ses_x', role: 'member', mode: 'live', permissions: [] });
    expect((await request(h.app).get('/v1/scim').set(member)).status).toBe(403);
    expect((await request(h.app).post('/v1/scim/token').set(member)).status).toBe(403);
    expect((await request(h.app).delete('/v1/scim/token').set(member)).status).toBe(403);
  });
});
