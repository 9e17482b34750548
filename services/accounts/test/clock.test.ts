import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { PASSWORD, authenticate, createHarness, freshIp, sessionHeaders, sessionTokenOf, sha256, uniqueEmail, type Harness } from './helpers.ts';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;
const START = new Date('2031-03-04T05:06:07.000Z');

let now = START;
let h: Harness;
beforeAll(async () => {
  h = await createHarness('clock', { clock: () => now });
});
afterAll(async () => {
  await h?.close();
});

const at = (ms: number) => new Date(START.getTime() + ms);

async function signUpAt(): Promise<{ token: string; headers: Record<string, string>; expiresAt: string }> {
  now = START;
  const res = await request(h.app)
    .post('/v1/auth/sign-up')
    .set('x-forwarded-for', freshIp())
    .send({ organizationName: 'Clockwork', name: 'Ada Owner', email: uniqueEmail('clock'), password: PASSWORD });
  expect(res.status).toBe(201);
  const token = sessionTokenOf(res);
  return { token, headers: await sessionHeaders(h, token), expiresAt: res.body.expiresAt };
}

describe('time comes from the injected clock', () => {
  it('a session opened at T ends at T + 12 hours', async () => {
    const owner = await signUpAt();
    expect(owner.expiresAt).toBe(at(12 * HOUR_MS).toISOString());

    now = at(12 * HOUR_MS - 1);
    expect(await authenticate(h, { type: 'session', tokenHash: sha256(owner.token) })).toMatchObject({ expiresAt: at(12 * HOUR_MS).toISOString() });
    expect((await request(h.app).get('/v1/auth/session').set(owner.headers)).status).toBe(200);

    now = at(12 * HOUR_MS);
    expect(await authenticate(h, { type: 'session', tokenHash: sha256(owner.token) })).toEqual({ principal: null, reason: 'expired' });
    expect((await request(h.app).get('/v1/auth/session').set(owner.headers)).status).toBe(401);
  });

  it('an API key created at T with expiresInDays 1 records its use at T and ends at T + 1 day', async () => {
    const owner = await signUpAt();
    const created = await request(h.app).post('/v1/api-keys').set(owner.headers).send({ name: 'k', mode: 'test', expiresInDays: 1 });
    expect(created.status).toBe(201);
    expect(created.body.expiresAt).toBe(at(DAY_MS).toISOString());

    expect((await authenticate(h, { type: 'api_key', secretHash: sha256(created.body.secret) })).principal).not.toBeNull();
    expect((await h.db.apiKey.findUniqueOrThrow({ where: { id: created.body.id } })).lastUsedAt).toEqual(START);

    now = at(DAY_MS);
    expect(await authenticate(h, { type: 'api_key', secretHash: sha256(created.body.secret) })).toEqual({ principal: null, reason: 'expired' });
  });

  it('an invitation made at T is pending until T + 7 days, then unknown', async () => {
    const owner = await signUpAt();
    const invited = await request(h.app).post('/v1/organization/invitations').set(owner.headers).send({ email: uniqueEmail('invitee'), role: 'member' });
    expect(invited.status).toBe(201);
    expect(invited.body.expiresAt).toBe(at(7 * DAY_MS).toISOString());

    now = at(7 * DAY_MS);
    const pending = await request(h.app).get('/v1/organization/invitations').set(owner.headers);
    expect(pending.body.data).toEqual([]);
    const accept = await request(h.app).post('/v1/auth/accept-invitation').set('x-forwarded-for', freshIp()).send({ token: invited.body.token, name: 'Late', password: PASSWORD });
    expect(accept.status).toBe(404);
  });
});
