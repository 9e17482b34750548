import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { ROLE_PERMISSIONS } from '@sigil/kit/auth';
import { apiKeyPrincipal, sessionPrincipal } from '@sigil/kit/testing';
import { authenticate, createHarness, gatewayPrincipal, sha256, signUp, type Harness, type SignedUp } from './helpers.ts';

let h: Harness;
let owner: SignedUp;
beforeAll(async () => {
  h = await createHarness('internal_auth');
  owner = await signUp(h);
});
afterAll(async () => {
  await h?.close();
});

async function newKey(body: object = {}): Promise<{ id: string; secret: string; scopes: string[] }> {
  const res = await request(h.app).post('/v1/api-keys').set(owner.headers).send({ name: 'k', mode: 'test', ...body });
  expect(res.status).toBe(201);
  return res.body;
}

describe('POST /internal/v1/authenticate: API keys', () => {
  it('returns the key principal and records last use at most once a minute', async () => {
    const key = await newKey({ mode: 'live', scopes: ['template:read', 'envelope:send'] });
    const result = await authenticate(h, { type: 'api_key', secretHash: sha256(key.secret) });
    expect(result).toEqual({
      principal: {
        kind: 'api_key',
        organizationId: owner.organizationId,
        actorId: key.id,
        apiKeyId: key.id,
        mode: 'live',
        permissions: ['template:read', 'envelope:send'],
      },
      expiresAt: null,
    });
    const first = (await h.db.apiKey.findUniqueOrThrow({ where: { id: key.id } })).lastUsedAt;
    expect(first).toBeInstanceOf(Date);
    await authenticate(h, { type: 'api_key', secretHash: sha256(key.secret) });
    expect((await h.db.apiKey.findUniqueOrThrow({ where: { id: key.id } })).lastUsedAt).toEqual(first);
    await h.db.apiKey.update({ where: { id: key.id }, data: { lastUsedAt: new Date(Date.now() - 61_000) } });
    await authenticate(h, { type: 'api_key', secretHash: sha256(key.secret) });
    expect((await h.db.apiKey.findUniqueOrThrow({ where: { id: key.id } })).lastUsedAt!.getTime()).toBeGreaterThan(Date.now() - 5_000);
  });

  it('says unknown, revoked and expired', async () => {
    expect(await authenticate(h, { type: 'api_key', secretHash: sha256('sgl_test_nope') })).toEqual({ principal: null, reason: 'unknown' });

    const revoked = await newKey();
    await request(h.app).delete(`/v1/api-keys/${revoked.id}`).set(owner.headers).expect(204);
    expect(await authenticate(h, { type: 'api_key', secretHash: sha256(revoked.secret) })).toEqual({ principal: null, reason: 'revoked' });

    const expiring = await newKey({ expiresInDays: 1 });
    const live = await authenticate(h, { type: 'api_key', secretHash: sha256(expiring.secret) });
    expect(live.principal).not.toBeNull();
    expect('expiresAt' in live && live.expiresAt).toEqual(expect.any(String));
    await h.db.apiKey.update({ where: { id: expiring.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect(await authenticate(h, { type: 'api_key', secretHash: sha256(expiring.secret) })).toEqual({ principal: null, reason: 'expired' });
  });
});

describe('POST /internal/v1/authenticate: sessions', () => {
  it('returns the session principal with the role permissions', async () => {
    const org = await signUp(h);
    const result = await authenticate(h, { type: 'session', tokenHash: sha256(org.token) });
    const session = await h.db.session.findUniqueOrThrow({ where: { tokenHash: sha256(org.token) } });
    expect(result).toEqual({
      principal: {
        kind: 'session',
        organizationId: org.organizationId,
        actorId: org.userId,
        userId: org.userId,
        sessionId: session.id,
        role: 'owner',
        permissions: ROLE_PERMISSIONS.owner.slice(),
        mode: 'live',
      },
      expiresAt: session.expiresAt.toISOString(),
    });
  });

  it('says unknown, revoked (signed out or no longer a member) and expired', async () => {
    expect(await authenticate(h, { type: 'session', tokenHash: sha256('nope') })).toEqual({ principal: null, reason: 'unknown' });

    const signedOut = await signUp(h);
    await request(h.app).post('/v1/auth/sign-out').set(signedOut.headers).expect(204);
    expect(await authenticate(h, { type: 'session', tokenHash: sha256(signedOut.token) })).toEqual({ principal: null, reason: 'revoked' });

    const removed = await signUp(h);
    await h.db.membership.deleteMany({ where: { userId: removed.userId } });
    expect(await authenticate(h, { type: 'session', tokenHash: sha256(removed.token) })).toEqual({ principal: null, reason: 'revoked' });

    const expired = await signUp(h);
    await h.db.session.updateMany({ where: { tokenHash: sha256(expired.token) }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect(await authenticate(h, { type: 'session', tokenHash: sha256(expired.token) })).toEqual({ principal: null, reason: 'expired' });
  });
});

describe('POST /internal/v1/authenticate: callers and input', () => {
  const body = { type: 'session', tokenHash: sha256('x') };

  it('rejects everyone but the gateway with a 401 problem', async () => {
    const callers = [
      {},
      { 'x-sigil-principal': 'not-a-jwt' },
      await h.auth.headers(sessionPrincipal()),
      await h.auth.headers(apiKeyPrincipal()),
      await h.auth.headers({ ...gatewayPrincipal, actorId: 'templates' }),
    ];
    for (const headers of callers) {
      const res = await request(h.app).post('/internal/v1/authenticate').set(headers).send(body);
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.type).toBe('https://sigil.dev/problems/unauthorized');
    }
  });

  it('rejects a token signed by another key', async () => {
    const { createTestAuth } = await import('@sigil/kit/testing');
    const stranger = await createTestAuth();
    const res = await request(h.app).post('/internal/v1/authenticate').set(await stranger.headers(gatewayPrincipal)).send(body);
    expect(res.status).toBe(401);
  });

  it.each([
    [{ type: 'password', tokenHash: sha256('x') }, '/body/type'],
    [{ type: 'api_key', tokenHash: sha256('x') }, '/body/secretHash'],
    [{ type: 'session', tokenHash: 'ABC' }, '/body/tokenHash'],
    [{ type: 'api_key', secretHash: sha256('x').toUpperCase() }, '/body/secretHash'],
  ])('answers 400 for %j', async (bad, pointer) => {
    const res = await request(h.app).post('/internal/v1/authenticate').set(await h.auth.headers(gatewayPrincipal)).send(bad);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ pointer })]);
  });
});

describe('housekeeping', () => {
  it('deletes finished attempt windows and long-ended sessions, keeps live ones', async () => {
    const { runHousekeeping } = await import('../src/jobs/housekeeping.ts');
    const org = await signUp(h);
    const old = new Date(Date.now() - 40 * 86_400_000);
    const ended = await signUp(h);
    await h.db.session.updateMany({ where: { userId: ended.userId }, data: { expiresAt: old } });
    await h.db.authThrottle.create({ data: { key: 'old-window', attempts: 3, expiresAt: new Date(Date.now() - 1000) } });
    await h.db.authThrottle.create({ data: { key: 'open-window', attempts: 3, expiresAt: new Date(Date.now() + 60_000) } });
    const deleted = await runHousekeeping(h.db, async () => 0, new Date());
    expect(deleted.throttles).toBeGreaterThanOrEqual(1);
    expect(deleted.sessions).toBeGreaterThanOrEqual(1);
    expect(await h.db.authThrottle.findUnique({ where: { key: 'old-window' } })).toBeNull();
    expect(await h.db.authThrottle.findUnique({ where: { key: 'open-window' } })).not.toBeNull();
    expect(await h.db.session.count({ where: { userId: ended.userId } })).toBe(0);
    expect((await authenticate(h, { type: 'session', tokenHash: sha256(org.token) })).principal).not.toBeNull();
  });
});
