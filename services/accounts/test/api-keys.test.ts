import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { ADMIN_ONLY_PERMISSIONS, ROLE_PERMISSIONS } from '@sigil/kit/auth';
import { apiKeyPrincipal, sessionPrincipal } from '@sigil/kit/testing';
import { createHarness, outbox, sha256, signUp, type Harness, type SignedUp } from './helpers.ts';

let h: Harness;
let owner: SignedUp;
beforeAll(async () => {
  h = await createHarness('api_keys');
  owner = await signUp(h);
});
afterAll(async () => {
  await h?.close();
});

const create = (headers: Record<string, string>, body: object) => request(h.app).post('/v1/api-keys').set(headers).send(body);

describe('POST /v1/api-keys', () => {
  it('creates a key: secret shown once, stored as SHA-256, default scopes without the administrative five', async () => {
    const res = await create(owner.headers, { name: 'Server', mode: 'test' });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const key = res.body;
    expect(key).toMatchObject({ object: 'api_key', name: 'Server', mode: 'test', expiresAt: null, lastUsedAt: null, revokedAt: null, createdBy: owner.userId });
    expect(key.id).toMatch(/^key_[A-Za-z0-9]{24}$/);
    expect(key.secret).toMatch(/^sgl_test_[A-Za-z0-9]{32}$/);
    expect(key.prefix).toBe(key.secret.slice(0, 12));
    expect(key.scopes).toEqual(ROLE_PERMISSIONS.owner.filter((p) => !ADMIN_ONLY_PERMISSIONS.includes(p)));
    for (const admin of ['org:manage', 'member:manage', 'sso:manage', 'apikey:manage', 'billing:manage']) expect(key.scopes).not.toContain(admin);

    const row = await h.db.apiKey.findUniqueOrThrow({ where: { id: key.id } });
    expect(row.secretHash).toBe(sha256(key.secret));
    expect(JSON.stringify(row)).not.toContain(key.secret);

    const [event] = await outbox(h, 'apikey.created', owner.organizationId);
    expect(event?.payload.data).toEqual({ apiKeyId: key.id, mode: 'test', scopes: key.scopes, createdBy: owner.userId });
    expect(JSON.stringify(event)).not.toContain(key.secret);
  });

  it('live keys start with sgl_live_; expiresInDays sets the expiry', async () => {
    const res = await create(owner.headers, { name: 'Live', mode: 'live', expiresInDays: 30 });
    expect(res.status).toBe(201);
    expect(res.body.secret).toMatch(/^sgl_live_[A-Za-z0-9]{32}$/);
    const days = (new Date(res.body.expiresAt).getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.99);
    expect(days).toBeLessThanOrEqual(30);
  });

  it('grants requested scopes the creator holds, including administrative ones', async () => {
    const res = await create(owner.headers, { name: 'Webhooks', mode: 'live', scopes: ['org:manage', 'template:read'] });
    expect(res.status).toBe(201);
    expect(res.body.scopes).toEqual(['template:read', 'org:manage']);
  });

  it('refuses a scope the creator lacks: 403 naming it', async () => {
    const admin = await h.auth.headers(sessionPrincipal({ organizationId: owner.organizationId, role: 'admin', permissions: ROLE_PERMISSIONS.admin.slice() }));
    const res = await create(admin, { name: 'Billing', mode: 'test', scopes: ['template:read', 'billing:manage'] });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ type: 'https://sigil.dev/problems/forbidden', detail: 'Missing permission: billing:manage.' });
    const defaults = await create(admin, { name: 'Defaults', mode: 'test' });
    expect(defaults.body.scopes).not.toContain('billing:manage');
  });

  it('needs apikey:manage', async () => {
    const member = await h.auth.headers(sessionPrincipal({ organizationId: owner.organizationId, role: 'member', permissions: ROLE_PERMISSIONS.member.slice() }));
    const res = await create(member, { name: 'x', mode: 'test' });
    expect(res.status).toBe(403);
    expect(res.body.detail).toBe('Missing permission: apikey:manage.');
  });

  it('is dashboard-only: an API key principal or no principal is 401', async () => {
    const key = await h.auth.headers(apiKeyPrincipal({ organizationId: owner.organizationId, permissions: ROLE_PERMISSIONS.owner.slice() }));
    for (const headers of [key, {}]) {
      expect((await create(headers, { name: 'x', mode: 'test' })).status).toBe(401);
      expect((await request(h.app).get('/v1/api-keys').set(headers)).status).toBe(401);
      expect((await request(h.app).delete('/v1/api-keys/key_000000000000000000000000').set(headers)).status).toBe(401);
    }
  });

  it.each([0, 366, -1])('expiresInDays %i is 400 at /body/expiresInDays', async (days) => {
    const res = await create(owner.headers, { name: 'x', mode: 'test', expiresInDays: days });
    expect(res.status).toBe(400);
    expect(res.body.type).toBe('https://sigil.dev/problems/validation-failed');
    expect(res.body.errors).toContainEqual(expect.objectContaining({ pointer: '/body/expiresInDays' }));
  });

  it.each([
    [{ name: 42, mode: 'test' }, '/body/name'],
    [{ name: 'x', mode: 'staging' }, '/body/mode'],
    [{ name: 'x' }, '/body/mode'],
    [{ name: 'x', mode: 'test', expiresInDays: '30' }, '/body/expiresInDays'],
    [{ name: 'x', mode: 'test', expiresInDays: 1.5 }, '/body/expiresInDays'],
    [{ name: 'x', mode: 'test', scopes: ['root'] }, '/body/scopes/0'],
    [{ name: 'x', mode: 'test', scopes: [] }, '/body/scopes'],
    [{ name: 'x', mode: 'test', extra: true }, '/body/extra'],
  ])('wrong input %j is 400 at %s', async (body, pointer) => {
    const res = await create(owner.headers, body);
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ pointer }));
  });
});

describe('GET /v1/api-keys', () => {
  it('lists newest first with cursor pagination, never with secrets, including revoked keys', async () => {
    const org = await signUp(h);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(org.headers, { name: `k${i}`, mode: i % 2 ? 'live' : 'test' })).body.id);
    await request(h.app).delete(`/v1/api-keys/${ids[0]}`).set(org.headers).expect(204);

    const first = await request(h.app).get('/v1/api-keys?limit=2').set(org.headers);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'list', hasMore: true });
    expect(first.body.data.map((k: { id: string }) => k.id)).toEqual([ids[4], ids[3]]);
    expect(JSON.stringify(first.body)).not.toContain('secret');
    const second = await request(h.app).get(`/v1/api-keys?limit=2&cursor=${first.body.nextCursor}`).set(org.headers);
    expect(second.body.data.map((k: { id: string }) => k.id)).toEqual([ids[2], ids[1]]);
    const third = await request(h.app).get(`/v1/api-keys?limit=2&cursor=${second.body.nextCursor}`).set(org.headers);
    expect(third.body).toMatchObject({ hasMore: false, nextCursor: null });
    expect(third.body.data).toHaveLength(1);
    expect(third.body.data[0]).toMatchObject({ id: ids[0] });
    expect(third.body.data[0].revokedAt).toEqual(expect.any(String));

    const live = await request(h.app).get('/v1/api-keys?mode=live').set(org.headers);
    expect(live.body.data.map((k: { id: string }) => k.id)).toEqual([ids[3], ids[1]]);
  });

  it('only shows the caller organization', async () => {
    const other = await signUp(h);
    const res = await request(h.app).get('/v1/api-keys').set(other.headers);
    expect(res.body.data).toEqual([]);
  });

  it('rejects bad cursors and limits with 400', async () => {
    const long = await request(h.app).get(`/v1/api-keys?cursor=${'a'.repeat(201)}`).set(owner.headers);
    expect(long.status).toBe(400);
    expect(long.body.errors).toContainEqual(expect.objectContaining({ pointer: '/query/cursor' }));
    const forged = Buffer.from(JSON.stringify(['not a date', 'key_x'])).toString('base64url');
    const bad = await request(h.app).get(`/v1/api-keys?cursor=${forged}`).set(owner.headers);
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toContainEqual(expect.objectContaining({ pointer: '/query/cursor' }));
    const garbage = await request(h.app).get('/v1/api-keys?cursor=@@@').set(owner.headers);
    expect(garbage.status).toBe(400);
    const limit = await request(h.app).get('/v1/api-keys?limit=101').set(owner.headers);
    expect(limit.status).toBe(400);
    expect(limit.body.errors).toContainEqual(expect.objectContaining({ pointer: '/query/limit' }));
  });
});

describe('DELETE /v1/api-keys/{id}', () => {
  it('revokes once, emits apikey.revoked with the key hash, and is 204 again afterwards', async () => {
    const org = await signUp(h);
    const key = (await create(org.headers, { name: 'Doomed', mode: 'live' })).body;
    expect((await request(h.app).delete(`/v1/api-keys/${key.id}`).set(org.headers)).status).toBe(204);
    expect((await request(h.app).delete(`/v1/api-keys/${key.id}`).set(org.headers)).status).toBe(204);
    const events = await outbox(h, 'apikey.revoked', org.organizationId);
    expect(events.map((e) => e.payload.data)).toEqual([{ apiKeyId: key.id, keyHash: sha256(key.secret) }]);
    const row = await h.db.apiKey.findUniqueOrThrow({ where: { id: key.id } });
    expect(row.revokedAt).toBeInstanceOf(Date);
  });

  it("is 404 for an unknown key and for another organization's key", async () => {
    const org = await signUp(h);
    const other = await signUp(h);
    const key = (await create(other.headers, { name: 'Theirs', mode: 'test' })).body;
    const foreign = await request(h.app).delete(`/v1/api-keys/${key.id}`).set(org.headers);
    expect(foreign.status).toBe(404);
    expect(foreign.body.type).toBe('https://sigil.dev/problems/not-found');
    expect((await h.db.apiKey.findUniqueOrThrow({ where: { id: key.id } })).revokedAt).toBeNull();
    expect((await request(h.app).delete('/v1/api-keys/key_000000000000000000000000').set(org.headers)).status).toBe(404);
    expect((await request(h.app).delete('/v1/api-keys/not-a-key').set(org.headers)).status).toBe(400);
  });
});
