import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import express from 'express';
import request from 'supertest';
import { PRINCIPAL_HEADER } from '@sigil/kit/auth';
import { connectBus, type NatsBus } from '@sigil/kit/bus';
import { testNatsUrl } from '@sigil/kit/testing';
import { SIGIL, createEvent, eventSubject } from '@sigil/proto';
import { sha256Hex } from '../src/authenticator.ts';
import {
  buildGateway,
  createTestKeys,
  echoHandler,
  listen,
  startFakeAccounts,
  waitFor,
  type FakeAccounts,
  type GatewayUnderTest,
  type TestKeys,
} from './helpers.ts';

let keys: TestKeys;
let accounts: FakeAccounts;
let service: { url: string; close(): Promise<void> };
let gateway: GatewayUnderTest;
let bus: NatsBus;
let subscription: { unsubscribe(): void };

beforeAll(async () => {
  keys = await createTestKeys();
  accounts = await startFakeAccounts(keys.verify);
  const app = express();
  app.use(echoHandler());
  service = await listen(app);
  gateway = await buildGateway(keys, { accounts: accounts.url, templates: service.url });
  bus = await connectBus(testNatsUrl(), 'gateway-revocation-test');
  subscription = await gateway.authenticator.subscribeRevocations(bus);
});

afterAll(async () => {
  subscription?.unsubscribe();
  await bus?.close();
  await gateway?.close();
  await service?.close();
  await accounts?.close();
});

const lookupsOf = (hash: string) =>
  accounts.lookups.filter((l) => (l.type === 'api_key' ? l.secretHash : l.tokenHash) === hash).length;

const listTemplates = (key: string) => request(gateway.app).get('/v1/templates').set('authorization', `Bearer ${key}`);

describe('credential cache', () => {
  it('answers the second request from the cache without a second look-up', async () => {
    const { key } = accounts.addKey();
    await listTemplates(key).expect(200);
    await listTemplates(key).expect(200);
    await request(gateway.app).get('/v1/templates').set('x-api-key', key).expect(200);
    expect(lookupsOf(sha256Hex(key))).toBe(1);
  });

  it('looks up concurrent first requests of one key once', async () => {
    const { key } = accounts.addKey();
    await Promise.all(Array.from({ length: 5 }, () => listTemplates(key).expect(200)));
    expect(lookupsOf(sha256Hex(key))).toBe(1);
  });

  it('does not cache negative answers', async () => {
    const { key } = accounts.addKey({}, { state: 'expired' });
    await listTemplates(key).expect(401);
    accounts.setKeyState(key, 'active');
    await listTemplates(key).expect(200);
  });

  it('expires cached entries after the TTL', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const short = await buildGateway(keys, { accounts: accounts.url, templates: service.url }, { authenticator: { ttlMs: 100, now: () => now } });
    try {
      const { key } = accounts.addKey();
      await request(short.app).get('/v1/templates').set('x-api-key', key).expect(200);
      accounts.setKeyState(key, 'revoked');
      await request(short.app).get('/v1/templates').set('x-api-key', key).expect(200); // cached
      now += 101;
      await request(short.app).get('/v1/templates').set('x-api-key', key).expect(401);
    } finally {
      await short.close();
    }
  });

  it('caches sessions too, and evicts one on a successful sign-out through the gateway', async () => {
    const { token } = accounts.addSession();
    const cookie = `${SIGIL.sessionCookie}=${token}`;
    await request(gateway.app).get('/v1/api-keys').set('cookie', cookie).expect(200);
    await request(gateway.app).get('/v1/api-keys').set('cookie', cookie).expect(200);
    expect(lookupsOf(sha256Hex(token))).toBe(1);

    await request(gateway.app).post('/v1/auth/sign-out').set('cookie', cookie).expect(204);
    const after = await request(gateway.app).get('/v1/api-keys').set('cookie', cookie).expect(200);
    expect(after.body.headers[PRINCIPAL_HEADER]).toBeUndefined(); // the session is gone at once
    expect(lookupsOf(sha256Hex(token))).toBe(2); // sign-out itself was served from the cache
  });
});

describe('revocation', () => {
  it('evicts a key as soon as DELETE /v1/api-keys/{id} succeeds through this gateway', async () => {
    const { key, principal } = accounts.addKey();
    const { token } = accounts.addSession({ organizationId: principal.organizationId });
    await listTemplates(key).expect(200);
    await listTemplates(key).expect(200);
    expect(lookupsOf(sha256Hex(key))).toBe(1);

    await request(gateway.app)
      .delete(`/v1/api-keys/${principal.apiKeyId}`)
      .set('cookie', `${SIGIL.sessionCookie}=${token}`)
      .expect(204);
    const res = await listTemplates(key).expect(401);
    expect(res.body.detail).toContain('revoked');
  });

  it('keeps the cache when the DELETE fails', async () => {
    const { key, principal } = accounts.addKey();
    await listTemplates(key).expect(200);
    // No session: the fake accounts service answers 401 and revokes nothing.
    await request(gateway.app).delete(`/v1/api-keys/${principal.apiKeyId}`).expect(401);
    await listTemplates(key).expect(200);
    expect(lookupsOf(sha256Hex(key))).toBe(1);
  });

  it('evicts a key when an apikey.revoked event arrives on NATS', async () => {
    const { key, principal } = accounts.addKey();
    await listTemplates(key).expect(200);
    // Revoked elsewhere (another gateway replica, or the expiry sweeper): this gateway still has it cached.
    accounts.setKeyState(key, 'revoked');
    await listTemplates(key).expect(200);

    const event = createEvent('apikey.revoked', principal.organizationId, { apiKeyId: principal.apiKeyId as string, keyHash: sha256Hex(key) });
    bus.notify(eventSubject('apikey.revoked'), event);
    await waitFor(async () => (await listTemplates(key)).status === 401);
    expect(lookupsOf(sha256Hex(key))).toBe(2);
  });

  it('evicts by api key id alone (event without a known hash)', async () => {
    const { key, principal } = accounts.addKey();
    await listTemplates(key).expect(200);
    accounts.setKeyState(key, 'revoked');
    const event = createEvent('apikey.revoked', principal.organizationId, { apiKeyId: principal.apiKeyId as string, keyHash: 'f'.repeat(64) });
    bus.notify(eventSubject('apikey.revoked'), event);
    await waitFor(async () => (await listTemplates(key)).status === 401);
  });

  it('evicts a session when a session.revoked event arrives on NATS', async () => {
    const { token, principal } = accounts.addSession();
    const cookie = `${SIGIL.sessionCookie}=${token}`;
    const before = await request(gateway.app).get('/v1/api-keys').set('cookie', cookie).expect(200);
    expect(before.body.headers[PRINCIPAL_HEADER]).toBeDefined();
    // Make the next look-up fail: the fake store marks every session of this id revoked via sign-out semantics.
    await request(accounts.url).post('/v1/auth/sign-out').set(PRINCIPAL_HEADER, await keys.sign(principal)).expect(204);

    bus.notify(eventSubject('session.revoked'), createEvent('session.revoked', principal.organizationId, { sessionHash: sha256Hex(token) }));
    await waitFor(async () => {
      const res = await request(gateway.app).get('/v1/api-keys').set('cookie', cookie);
      return res.body.headers[PRINCIPAL_HEADER] === undefined;
    });
  });

  it('ignores malformed events', async () => {
    const { key } = accounts.addKey();
    await listTemplates(key).expect(200);
    bus.nc.publish(eventSubject('apikey.revoked'), 'not json');
    bus.notify(eventSubject('apikey.revoked'), { data: null });
    await bus.ping();
    await listTemplates(key).expect(200);
    expect(lookupsOf(sha256Hex(key))).toBe(1);
  });
});
