import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { apiKeyPrincipal, silentLogger } from '@sigil/kit/testing';
import { createApp } from '../src/app.ts';
import { PASSWORD, cheapPasswords, cookieOf, createHarness, freshIp, outbox, sessionHeaders, sessionTokenOf, sha256, signUp, uniqueEmail, authenticate, testEntitlements, type Harness } from './helpers.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness('auth');
});
afterAll(async () => {
  await h?.close();
});

describe('sign-up', () => {
  it('creates the organization, the owner and a session, and sets the cookie', async () => {
    const email = uniqueEmail('Signup');
    const res = await request(h.app)
      .post('/v1/auth/sign-up')
      .set('x-forwarded-for', freshIp())
      .send({ organizationName: 'Acme Corp', name: 'Ada', email: `  ${email.toUpperCase()} `.trim(), password: PASSWORD });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      object: 'session',
      user: { object: 'user', email: email.toLowerCase(), name: 'Ada' },
      organization: { object: 'organization', name: 'Acme Corp' },
      role: 'owner',
    });
    expect(res.body.user.id).toMatch(/^usr_[A-Za-z0-9]{24}$/);
    expect(res.body.organization.id).toMatch(/^org_[A-Za-z0-9]{24}$/);
    expect(res.body.permissions).toContain('billing:manage');
    expect(new Date(res.body.expiresAt).getTime() - Date.now()).toBeGreaterThan(11.9 * 3600 * 1000);
    expect(res.headers['cache-control']).toBe('no-store');

    const cookie = cookieOf(res) as string;
    expect(cookie).toMatch(/^sigil_session=[A-Za-z0-9_-]{43}; HttpOnly; Secure; SameSite=Lax; Path=\/; Max-Age=43200$/);

    const token = sessionTokenOf(res);
    const stored = await h.db.session.findFirstOrThrow({ where: { userId: res.body.user.id } });
    expect(stored.tokenHash).toBe(sha256(token));
    expect(JSON.stringify(stored)).not.toContain(token);
    const user = await h.db.user.findUniqueOrThrow({ where: { id: res.body.user.id } });
    expect(user.passwordHash).toMatch(/^\$argon2id\$v=19\$m=64,t=1,p=1\$/); // the hasher the app was given (cheap in tests)

    const orgId = res.body.organization.id as string;
    const [created] = await outbox(h, 'organization.created', orgId);
    expect(created?.subject).toBe('sigil.events.organization.created');
    expect(created?.payload.data).toEqual({ name: 'Acme Corp', ownerUserId: res.body.user.id, ownerEmail: email.toLowerCase() });
    const [added] = await outbox(h, 'member.added', orgId);
    expect(added?.payload.data).toMatchObject({ userId: res.body.user.id, role: 'owner', email: email.toLowerCase() });
  });

  it('is 409 conflict when the e-mail already has an account (any case)', async () => {
    const { email } = await signUp(h);
    const res = await request(h.app)
      .post('/v1/auth/sign-up')
      .set('x-forwarded-for', freshIp())
      .send({ organizationName: 'Other', name: 'B', email: email.toUpperCase(), password: PASSWORD });
    expect(res.status).toBe(409);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body).toMatchObject({ type: 'https://sigil.dev/problems/conflict', status: 409 });
  });

  it('limits sign-ups per address (configurable)', async () => {
    const { app } = await createApp({ db: h.db, log: silentLogger(), verifyPrincipal: h.auth.verify, rateLimits: { signUpPerIp: 2 }, passwords: cheapPasswords, entitlements: (await testEntitlements()).entitlements });
    const ip = freshIp();
    const attempt = () =>
      request(app).post('/v1/auth/sign-up').set('x-forwarded-for', `203.0.113.9, ${ip}`).send({ organizationName: 'A', name: 'B', email: uniqueEmail(), password: PASSWORD });
    expect((await attempt()).status).toBe(201);
    expect((await attempt()).status).toBe(201);
    const blocked = await attempt();
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(blocked.headers['ratelimit-limit']).toBe('2');
    // The right-most x-forwarded-for entry (added by the gateway) is the address; the client's own entries are ignored.
    expect((await request(app).post('/v1/auth/sign-up').set('x-forwarded-for', `${ip}, ${freshIp()}`).send({ organizationName: 'A', name: 'B', email: uniqueEmail(), password: PASSWORD })).status).toBe(201);
    // The same address written IPv4-mapped or with a port is the same client (the platform's clientAddress).
    for (const written of [`::ffff:${ip}`, `${ip}:4431`]) {
      expect((await request(app).post('/v1/auth/sign-up').set('x-forwarded-for', written).send({ organizationName: 'A', name: 'B', email: uniqueEmail(), password: PASSWORD })).status).toBe(429);
    }
  });

  it('validates the body against the contract', async () => {
    const short = await request(h.app).post('/v1/auth/sign-up').send({ organizationName: 'A', name: 'B', email: uniqueEmail(), password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body.errors).toContainEqual(expect.objectContaining({ pointer: '/body/password' }));
    const badEmail = await request(h.app).post('/v1/auth/sign-up').send({ organizationName: 'A', name: 'B', email: 'not-an-email', password: PASSWORD });
    expect(badEmail.status).toBe(400);
    expect(badEmail.body.errors).toContainEqual(expect.objectContaining({ pointer: '/body/email' }));
  });
});

describe('sign-in', () => {
  it('opens a session with the same cookie attributes', async () => {
    const { email, organizationId } = await signUp(h);
    const res = await request(h.app).post('/v1/auth/sign-in').set('x-forwarded-for', freshIp()).send({ email: email.toUpperCase(), password: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'session', organization: { id: organizationId }, role: 'owner' });
    expect(cookieOf(res)).toMatch(/^sigil_session=[^;]+; HttpOnly; Secure; SameSite=Lax; Path=\/; Max-Age=43200$/);
  });

  it('answers the same 401 for a wrong password and an unknown e-mail', async () => {
    const { email } = await signUp(h);
    const wrong = await request(h.app).post('/v1/auth/sign-in').set('x-forwarded-for', freshIp()).send({ email, password: 'not the password' });
    const unknown = await request(h.app).post('/v1/auth/sign-in').set('x-forwarded-for', freshIp()).send({ email: uniqueEmail('nobody'), password: PASSWORD });
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ type: 'https://sigil.dev/problems/unauthorized', detail: 'Invalid e-mail or password.' });
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });

  it('limits attempts per e-mail and address: 429 with Retry-After', async () => {
    const { email } = await signUp(h);
    const ip = freshIp();
    for (let i = 0; i < 10; i++) {
      const res = await request(h.app).post('/v1/auth/sign-in').set('x-forwarded-for', ip).send({ email, password: `wrong password ${i}` });
      expect(res.status).toBe(401);
    }
    const blocked = await request(h.app).post('/v1/auth/sign-in').set('x-forwarded-for', ip).send({ email, password: PASSWORD });
    expect(blocked.status).toBe(429);
    expect(blocked.body).toMatchObject({ type: 'https://sigil.dev/problems/rate-limited', status: 429 });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(blocked.headers['retry-after'])).toBeLessThanOrEqual(15 * 60);
    // Another address is not affected.
    const elsewhere = await request(h.app).post('/v1/auth/sign-in').set('x-forwarded-for', freshIp()).send({ email, password: PASSWORD });
    expect(elsewhere.status).toBe(200);
  });

  it('a successful sign-in clears the counter of that e-mail and address', async () => {
    const { email } = await signUp(h);
    const ip = freshIp();
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 9; i++) {
        expect((await request(h.app).post('/v1/auth/sign-in').set('x-forwarded-for', ip).send({ email, password: 'wrong password' })).status).toBe(401);
      }
      expect((await request(h.app).post('/v1/auth/sign-in').set('x-forwarded-for', ip).send({ email, password: PASSWORD })).status).toBe(200);
    }
  });

  it('uses organizationId when the user belongs to it, else the most recently joined organization', async () => {
    const owner = await signUp(h);
    const other = await signUp(h, { organizationName: 'Second' });
    // Invite the first owner into the second organization and accept.
    const invite = await request(h.app).post('/v1/organization/invitations').set(other.headers).send({ email: owner.email, role: 'member' });
    expect(invite.status).toBe(201);
    const accepted = await request(h.app).post('/v1/auth/accept-invitation').set('x-forwarded-for', freshIp()).send({ token: invite.body.token, name: 'x', password: PASSWORD });
    expect(accepted.status).toBe(201);

    const latest = await request(h.app).post('/v1/auth/sign-in').set('x-forwarded-for', freshIp()).send({ email: owner.email, password: PASSWORD });
    expect(latest.body.organization.id).toBe(other.organizationId);
    expect(latest.body.role).toBe('member');
    const chosen = await request(h.app)
      .post('/v1/auth/sign-in')
      .set('x-forwarded-for', freshIp())
      .send({ email: owner.email, password: PASSWORD, organizationId: owner.organizationId });
    expect(chosen.body.organization.id).toBe(owner.organizationId);
    expect(chosen.body.role).toBe('owner');
    const notMember = await request(h.app)
      .post('/v1/auth/sign-in')
      .set('x-forwarded-for', freshIp())
      .send({ email: owner.email, password: PASSWORD, organizationId: 'org_000000000000000000000000' });
    expect(notMember.status).toBe(200);
    expect(notMember.body.organization.id).toBe(other.organizationId);
  });
});

describe('session and sign-out', () => {
  it('returns the current session', async () => {
    const { headers, organizationId, email } = await signUp(h);
    const res = await request(h.app).get('/v1/auth/session').set(headers);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'session', organization: { id: organizationId }, user: { email }, role: 'owner' });
  });

  it('signs out: clears the cookie, revokes the session and emits session.revoked with the token hash', async () => {
    const { headers, token, organizationId } = await signUp(h);
    const res = await request(h.app).post('/v1/auth/sign-out').set(headers);
    expect(res.status).toBe(204);
    expect(cookieOf(res)).toBe('sigil_session=; HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=0');
    expect(await authenticate(h, { type: 'session', tokenHash: sha256(token) })).toEqual({ principal: null, reason: 'revoked' });
    const events = await outbox(h, 'session.revoked', organizationId);
    expect(events.map((e) => e.payload.data)).toEqual([{ sessionHash: sha256(token) }]);
    // The principal token the gateway minted earlier no longer finds a live session.
    expect((await request(h.app).get('/v1/auth/session').set(headers)).status).toBe(401);
  });

  it('rejects API keys and anonymous callers on dashboard-only operations', async () => {
    const key = await h.auth.headers(apiKeyPrincipal());
    expect((await request(h.app).get('/v1/auth/session').set(key)).status).toBe(401);
    expect((await request(h.app).post('/v1/auth/sign-out')).status).toBe(401);
  });

  it('a new sign-in gives a different token each time', async () => {
    const { email } = await signUp(h);
    const a = await request(h.app).post('/v1/auth/sign-in').set('x-forwarded-for', freshIp()).send({ email, password: PASSWORD });
    const b = await request(h.app).post('/v1/auth/sign-in').set('x-forwarded-for', freshIp()).send({ email, password: PASSWORD });
    expect(sessionTokenOf(a)).not.toBe(sessionTokenOf(b));
    await sessionHeaders(h, sessionTokenOf(a));
  });
});
