// /scim/v2 (outside the contract): forwarded to accounts with the SCIM bearer token untouched, never looked up as an
// API key, no principal; Sigil's other credentials stripped; unsafe paths and a missing accounts refused in SCIM's format.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { PRINCIPAL_HEADER } from '@sigil/kit/auth';
import { SIGIL } from '@sigil/proto';
import { buildGateway, createTestKeys, startFakeAccounts, type Echo, type FakeAccounts, type GatewayUnderTest, type TestKeys } from './helpers.ts';

let keys: TestKeys;
let accounts: FakeAccounts;
let gateway: GatewayUnderTest;

beforeAll(async () => {
  keys = await createTestKeys();
  accounts = await startFakeAccounts(keys.verify);
  gateway = await buildGateway(keys, { accounts: accounts.url });
});

afterAll(async () => {
  await gateway?.close();
  await accounts?.close();
});

const echoOf = (res: request.Response): Echo => res.body as Echo;
const TOKEN = 'sglscim_0123456789abcdefghijABCDEFGHIJ0123456789abc';

describe('/scim/v2', () => {
  it('forwards the SCIM bearer token untouched, resolves no principal and keeps path and query', async () => {
    const lookups = accounts.lookups.length;
    const { token: session } = accounts.addSession();
    const res = await request(gateway.app)
      .get('/scim/v2/Users?filter=userName%20eq%20%22a%40b.c%22&startIndex=1&count=100')
      .set('authorization', `Bearer ${TOKEN}`)
      .set('x-api-key', 'sgl_test_should-not-pass')
      .set('cookie', `${SIGIL.sessionCookie}=${session}; theme=dark`)
      .set(PRINCIPAL_HEADER, 'forged')
      .expect(200);
    const echo = echoOf(res);
    expect(echo.url).toBe('/scim/v2/Users?filter=userName%20eq%20%22a%40b.c%22&startIndex=1&count=100');
    expect(echo.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(echo.headers[PRINCIPAL_HEADER]).toBeUndefined();
    expect(echo.headers['x-api-key']).toBeUndefined();
    expect(echo.headers.cookie).toBe('theme=dark');
    expect(echo.headers['x-forwarded-for']).toMatch(/127\.0\.0\.1/);
    expect(accounts.lookups.length).toBe(lookups);
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
  });

  it('streams request bodies through (POST, PUT, PATCH, DELETE)', async () => {
    const body = JSON.stringify({ schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
    for (const method of ['post', 'put', 'patch', 'delete'] as const) {
      const res = await request(gateway.app)[method]('/scim/v2/Users/scimu_1').set('authorization', `Bearer ${TOKEN}`).set('content-type', 'application/scim+json').send(body).expect(200);
      expect(echoOf(res)).toMatchObject({ method: method.toUpperCase(), url: '/scim/v2/Users/scimu_1', bodyBytes: Buffer.byteLength(body) });
      expect(echoOf(res).headers.authorization).toBe(`Bearer ${TOKEN}`);
    }
  });

  it('never forwards a path with dot segments or encoded slashes', async () => {
    const seen = accounts.seen.length;
    for (const path of ['/scim/v2/%2e%2e/v1/api-keys', '/scim/v2/Users/%2F..%2Fx', '/scim/v2//Users']) {
      const res = await request(gateway.app).get(path).set('authorization', `Bearer ${TOKEN}`);
      expect(res.status, path).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(JSON.parse(res.text)).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '404' });
    }
    expect(accounts.seen.length).toBe(seen);
  });

  it('does not take over neighbouring paths', async () => {
    const res = await request(gateway.app).get('/scim/v2x/Users').set('authorization', `Bearer ${TOKEN}`);
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('answers 503 in SCIM format when accounts is not configured', async () => {
    const bare = await buildGateway(keys, {});
    try {
      const res = await request(bare.app).get('/scim/v2/ServiceProviderConfig').set('authorization', `Bearer ${TOKEN}`).expect(503);
      expect(JSON.parse(res.text)).toMatchObject({ status: '503', detail: expect.stringContaining('accounts') });
    } finally {
      await bare.close();
    }
  });
});
