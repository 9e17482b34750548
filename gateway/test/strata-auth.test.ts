import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { once } from 'node:events';
import { spawn } from 'node:child_process';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { SignJWT, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, type CryptoKey, type JSONWebKeySet, type JWK, type JWTPayload } from 'jose';
import { PRINCIPAL_HEADER, createPrincipalSigner, createStrataPrincipalSigner, createStrataPrincipalVerifier, generateInternalKeyPair, type StrataPrincipalVerifier } from '@sigil/kit/auth';
import { silentLogger } from '@sigil/kit/testing';
import { SIGIL, STRATA, type StrataPrincipal } from '@sigil/proto';
import { createGatewayApp, type GatewayApp, type GatewayDeps, type StrataGatewayDeps } from '../src/app.ts';
import { createAuthenticator } from '../src/authenticator.ts';
import { gatewayConfigSchema, serviceUrlsOf, strataAuthOptionsOf, type GatewayConfig } from '../src/config.ts';
import { DEV_ISSUER, createDevIssuer, type DevIssuer } from '../src/dev-issuer.ts';
import { createStrataAuthenticator, type StrataAuthenticatorOptions } from '../src/strata-auth.ts';
import { PING_SUPERGRAPH, closedPortUrl, echoHandler, listen, type Echo } from './helpers.ts';

const ISS = 'https://team.access.example.test';
const AUD = 'strata-aud-1234';
const P_HEADER = STRATA.principalHeader;
const JSON_TYPE = /^application\/json/;

interface SigningKey {
  privateKey: CryptoKey;
  publicJwk: JWK;
  kid: string;
  alg: 'RS256' | 'ES256';
}

async function signingKey(alg: 'RS256' | 'ES256', kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }, kid, alg };
}

interface TokenOptions {
  iss?: string;
  aud?: string | string[];
  sub?: string | null;
  /** Seconds from now; default 600. */
  exp?: number | null;
  kid?: string;
}

/** An access proxy token: `email` and `groups` by default, override or add any claim. */
async function accessToken(key: SigningKey, claims: JWTPayload = {}, options: TokenOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ email: 'ada@example.com', groups: ['strata:operator'], ...claims })
    .setProtectedHeader({ alg: key.alg, kid: options.kid ?? key.kid, typ: 'JWT' })
    .setIssuer(options.iss ?? ISS)
    .setAudience(options.aud ?? AUD)
    .setIssuedAt(now - 5);
  if (options.sub !== null) jwt.setSubject(options.sub ?? 'user-ada');
  if (options.exp !== null) jwt.setExpirationTime(now + (options.exp ?? 600));
  return jwt.sign(key.privateKey);
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

type Server = { url: string; close(): Promise<void> };

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let rsa: SigningKey;
let ec: SigningKey;
let rogue: SigningKey; // same kid as `rsa`, another key: a forged signature
let verifyStrata: StrataPrincipalVerifier;
let deps: Pick<GatewayDeps, 'signPrincipal' | 'log' | 'authenticator' | 'supergraphSdl'>;
let signStrata: StrataGatewayDeps['signPrincipal'];
let jwks: JSONWebKeySet;
let jwksServer: Server;
let jwksFetches = 0;
let catalog: Server;
let sandbox: Server;
const catalogSeen: Echo[] = [];
const sandboxSeen: Echo[] = [];
let sseNext = deferred();
let sseEnd = deferred();
let sseUpstreamEnded = false;
const gateways: GatewayApp[] = [];
let remote: GatewayApp; // remote JWKS, trusted proxy, both services
let inline: GatewayApp; // inline JWKS, no sandbox, untrusted peer

async function build(
  serviceUrls: GatewayDeps['serviceUrls'],
  strata: { auth?: StrataAuthenticatorOptions; devIssuer?: DevIssuer } | undefined,
  trustProxy = false,
  isNotImplemented?: GatewayDeps['isNotImplemented'],
): Promise<GatewayApp> {
  const gateway = await createGatewayApp({
    ...deps,
    serviceUrls,
    trustProxy,
    isNotImplemented,
    ...(strata
      ? {
          strata: {
            signPrincipal: signStrata,
            ...(strata.auth ? { authenticator: createStrataAuthenticator(strata.auth) } : {}),
            ...(strata.devIssuer ? { devIssuer: strata.devIssuer } : {}),
          },
        }
      : {}),
  });
  gateways.push(gateway);
  return gateway;
}

beforeAll(async () => {
  const internal = await generateInternalKeyPair();
  const signPrincipal = await createPrincipalSigner(internal.privateJwk);
  signStrata = await createStrataPrincipalSigner(internal.privateJwk);
  verifyStrata = await createStrataPrincipalVerifier(internal.publicJwk);
  const log = silentLogger();
  deps = { signPrincipal, log, authenticator: createAuthenticator({ accountsUrl: undefined, signPrincipal, log }), supergraphSdl: PING_SUPERGRAPH };

  [rsa, ec, rogue] = await Promise.all([signingKey('RS256', 'rsa-1'), signingKey('ES256', 'ec-1'), signingKey('RS256', 'rsa-1')]);
  jwks = { keys: [rsa.publicJwk, ec.publicJwk] };
  const jwksApp = express();
  jwksApp.get('/certs', (_req, res) => {
    jwksFetches++;
    res.json(jwks);
  });
  jwksServer = await listen(jwksApp);

  const catalogApp = express();
  // Writes one frame, then the next one only when the test says so, then ends.
  catalogApp.get('/api/v1/events', async (req, res) => {
    sseUpstreamEnded = false;
    catalogSeen.push({ method: req.method, url: req.originalUrl, headers: req.headers, bodyBytes: 0 });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write('event: target\ndata: {"seq":1}\n\n');
    await sseNext.promise;
    res.write('event: backup\ndata: {"seq":2}\n\n');
    await sseEnd.promise;
    sseUpstreamEnded = true;
    res.end('event: catalog\ndata: {"seq":3}\n\n');
  });
  catalogApp.use((_req, res, next) => {
    res.setHeader('x-served-by', 'backup-catalog');
    next();
  });
  catalogApp.use(echoHandler(catalogSeen));
  catalog = await listen(catalogApp);
  const sandboxApp = express();
  sandboxApp.use((_req, res, next) => {
    res.setHeader('x-served-by', 'sandbox');
    next();
  });
  sandboxApp.use(echoHandler(sandboxSeen));
  sandbox = await listen(sandboxApp);

  remote = await build(
    { 'backup-catalog': catalog.url, sandbox: sandbox.url },
    { auth: { issuers: [ISS], audiences: [AUD], jwksUrl: `${jwksServer.url}/certs` } },
    true,
  );
  inline = await build({ 'backup-catalog': catalog.url }, { auth: { issuers: [ISS], audiences: [AUD], jwks } });
});

afterAll(async () => {
  for (const gateway of gateways) await gateway.close();
  await Promise.all([jwksServer?.close(), catalog?.close(), sandbox?.close()]);
});

const echoOf = (res: request.Response): Echo => res.body as Echo;
const principalOf = async (res: request.Response): Promise<StrataPrincipal> => verifyStrata(String(echoOf(res).headers[P_HEADER]));

/** Asserts a 401 `{ error }` from the gateway that reached no service. */
async function expectRefused(gateway: GatewayApp, token: string, reason: string | RegExp): Promise<void> {
  const before = catalogSeen.length;
  const res = await request(gateway.app).get('/api/v1/whoami').set('cf-access-jwt-assertion', token).expect(401);
  expect(res.headers['content-type']).toMatch(JSON_TYPE);
  expect(Object.keys(res.body)).toEqual(['error']);
  expect(res.body.error).toMatch(/^The access token is invalid: /);
  expect(res.body.error).toMatch(reason);
  expect(catalogSeen.length).toBe(before);
}

describe('the three credential places', () => {
  it('accepts an RS256 token in Cf-Access-Jwt-Assertion, verified against the remote JWKS', async () => {
    const token = await accessToken(rsa);
    const res = await request(remote.app).get('/api/v1/whoami?verbose=1').set('Cf-Access-Jwt-Assertion', token).expect(200);
    expect(res.headers['x-served-by']).toBe('backup-catalog');
    expect(echoOf(res).url).toBe('/api/v1/whoami?verbose=1');
    expect(await principalOf(res)).toEqual({
      id: 'user-ada',
      email: 'ada@example.com',
      role: 'operator',
      groups: ['strata:operator'],
      orgs: [],
      projects: [],
      service: false,
    });
  });

  it('accepts an ES256 token in cf-access-token', async () => {
    const token = await accessToken(ec, { email: 'bob@example.com' }, { sub: 'user-bob' });
    const res = await request(remote.app).get('/api/v1/targets').set('cf-access-token', token).expect(200);
    expect(await principalOf(res)).toMatchObject({ id: 'user-bob', email: 'bob@example.com', role: 'operator' });
  });

  it('accepts the token in the CF_Authorization cookie (quoted too)', async () => {
    const token = await accessToken(rsa);
    const plain = await request(remote.app).get('/api/v1/settings').set('cookie', `theme=dark; CF_Authorization=${token}`).expect(200);
    expect((await principalOf(plain)).id).toBe('user-ada');
    const quoted = await request(remote.app).get('/api/v1/settings').set('cookie', `CF_Authorization="${token}"`).expect(200);
    expect((await principalOf(quoted)).id).toBe('user-ada');
  });

  it('reads the JWT header first, then the token header, then the cookie', async () => {
    const viewer = await accessToken(rsa, { groups: ['strata:viewer'] });
    const restorer = await accessToken(ec, { groups: ['strata:restorer'] });
    const both = await request(remote.app)
      .get('/api/v1/whoami')
      .set('cf-access-jwt-assertion', viewer)
      .set('cf-access-token', 'garbage')
      .set('cookie', 'CF_Authorization=garbage')
      .expect(200);
    expect((await principalOf(both)).role).toBe('viewer');
    const tokenOverCookie = await request(remote.app).get('/api/v1/whoami').set('cf-access-token', restorer).set('cookie', 'CF_Authorization=garbage').expect(200);
    expect((await principalOf(tokenOverCookie)).role).toBe('restorer');
    // The first place that holds a token is the one judged: a bad JWT header is not rescued by the cookie.
    await request(remote.app).get('/api/v1/whoami').set('cf-access-jwt-assertion', 'garbage').set('cookie', `CF_Authorization=${viewer}`).expect(401);
  });

  it('verifies against an inline JWKS as well (both algorithms)', async () => {
    for (const key of [rsa, ec]) {
      const res = await request(inline.app).get('/api/v1/whoami').set('cf-access-jwt-assertion', await accessToken(key)).expect(200);
      expect((await principalOf(res)).email).toBe('ada@example.com');
    }
  });

  it('fetches the remote JWKS once and serves later requests from jose\'s cache', async () => {
    const before = jwksFetches;
    for (let i = 0; i < 3; i++) {
      await request(remote.app).get('/api/v1/whoami').set('cf-access-jwt-assertion', await accessToken(i % 2 ? ec : rsa)).expect(200);
    }
    expect(before).toBe(1);
    expect(jwksFetches).toBe(before);
  });

  it('honours configured credential names', async () => {
    const gateway = await build(
      { 'backup-catalog': catalog.url },
      { auth: { issuers: [ISS], audiences: [AUD], jwks, jwtHeader: 'X-Access-Jwt', tokenHeader: 'x-access-token', cookie: 'access_cookie' } },
    );
    const token = await accessToken(rsa);
    const fromHeader = await request(gateway.app).get('/api/v1/whoami').set('x-access-jwt', token).set('cookie', 'keep=1').expect(200);
    expect((await principalOf(fromHeader)).id).toBe('user-ada');
    expect(echoOf(fromHeader).headers['x-access-jwt']).toBeUndefined();
    const fromCookie = await request(gateway.app).get('/api/v1/whoami').set('cookie', `access_cookie=${token}; keep=1`).expect(200);
    expect((await principalOf(fromCookie)).id).toBe('user-ada');
    expect(echoOf(fromCookie).headers.cookie).toBe('keep=1');
    // The default names mean nothing to this gateway: forwarded as an anonymous request.
    const defaults = await request(gateway.app).get('/api/v1/whoami').set('cf-access-token', token).expect(200);
    expect(echoOf(defaults).headers[P_HEADER]).toBeUndefined();
  });
});

describe('tokens that are refused at the gateway (401, not forwarded)', () => {
  it('wrong issuer', async () => {
    await expectRefused(remote, await accessToken(rsa, {}, { iss: 'https://evil.example.test' }), /"iss" claim/);
  });

  it('wrong audience', async () => {
    await expectRefused(remote, await accessToken(rsa, {}, { aud: 'another-app' }), /"aud" claim/);
  });

  it('expired beyond the 30 s clock tolerance (within it is fine)', async () => {
    await expectRefused(remote, await accessToken(rsa, {}, { exp: -60 }), /"exp" claim timestamp check failed/);
    await request(remote.app).get('/api/v1/whoami').set('cf-access-jwt-assertion', await accessToken(rsa, {}, { exp: -10 })).expect(200);
  });

  it('bad signature (same kid, another key)', async () => {
    await expectRefused(remote, await accessToken(rogue), /signature verification failed/);
    await expectRefused(inline, await accessToken(rogue), /signature verification failed/);
  });

  it('unknown key id, not a JWT, no exp, HS256, unsigned', async () => {
    await expectRefused(inline, await accessToken(rsa, {}, { kid: 'nope' }), /no applicable key/);
    await expectRefused(remote, 'not-a-jwt', /Invalid Compact JWS/);
    await expectRefused(remote, await accessToken(rsa, {}, { exp: null }), /missing required "exp" claim/);
    const hs = await new SignJWT({ email: 'a@b.c' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(ISS)
      .setAudience(AUD)
      .setSubject('x')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('a shared secret of thirty-two bytes!!'));
    await expectRefused(remote, hs, /"alg" \(Algorithm\) Header Parameter value not allowed/);
    const [, payload] = (await accessToken(rsa)).split('.');
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`;
    await expectRefused(remote, none, /not allowed/);
  });

  it('a user token without sub, or a token with neither email nor common_name', async () => {
    await expectRefused(inline, await accessToken(rsa, {}, { sub: null }), /"sub" claim/);
    await expectRefused(inline, await accessToken(rsa, { email: undefined }), /neither an "email" nor a "common_name"/);
  });

  it('answers 502 when the access proxy\'s keys cannot be fetched', async () => {
    const gateway = await build({ 'backup-catalog': catalog.url }, { auth: { issuers: [ISS], audiences: [AUD], jwksUrl: `${await closedPortUrl()}/certs` } });
    const before = catalogSeen.length;
    const res = await request(gateway.app).get('/api/v1/whoami').set('cf-access-jwt-assertion', await accessToken(rsa)).expect(502);
    expect(res.headers['content-type']).toMatch(JSON_TYPE);
    expect(res.body).toEqual({ error: "The access proxy's signing keys could not be fetched." });
    expect(catalogSeen.length).toBe(before);
  });
});

describe('forwarding', () => {
  it('forwards a request without a token, without a principal (the service answers 401 itself)', async () => {
    const res = await request(remote.app).get('/api/v1/whoami').set('cookie', 'theme=dark').expect(200);
    expect(echoOf(res).headers[P_HEADER]).toBeUndefined();
    expect(echoOf(res).headers.cookie).toBe('theme=dark');
  });

  it('strips the raw credentials and every spoofed principal; other cookies stay', async () => {
    const token = await accessToken(rsa);
    const spoofed = await signStrata({ id: 'evil', email: 'evil@example.com', role: 'restorer-admin', groups: [], orgs: [], projects: [], service: false });
    const res = await request(remote.app)
      .post('/api/v1/targets/prod/orders/backup-now')
      .set('cf-access-jwt-assertion', token)
      .set('cf-access-token', token)
      .set('cookie', `theme=dark; CF_Authorization=${token}; ${SIGIL.sessionCookie}=sess; lang=en`)
      .set('authorization', 'Bearer whatever')
      .set('x-api-key', 'sgl_test_whatever')
      .set(P_HEADER, spoofed)
      .set(PRINCIPAL_HEADER, 'spoofed')
      .send({ reason: 'test' })
      .expect(200);
    const { headers, method, bodyBytes } = echoOf(res);
    expect(method).toBe('POST');
    expect(bodyBytes).toBe(JSON.stringify({ reason: 'test' }).length);
    expect(headers['cf-access-jwt-assertion']).toBeUndefined();
    expect(headers['cf-access-token']).toBeUndefined();
    expect(headers.authorization).toBeUndefined();
    expect(headers['x-api-key']).toBeUndefined();
    expect(headers[PRINCIPAL_HEADER]).toBeUndefined();
    expect(headers.cookie).toBe('theme=dark; lang=en');
    expect(JSON.stringify(headers)).not.toContain(token);
    expect((await verifyStrata(String(headers[P_HEADER]))).id).toBe('user-ada');
  });

  it('removes a spoofed x-strata-principal from an anonymous request (and from Sigil paths)', async () => {
    const spoofed = await signStrata({ id: 'evil', email: 'evil@example.com', role: 'restorer-admin', groups: [], orgs: [], projects: [], service: false });
    const res = await request(remote.app).get('/api/v1/whoami').set(P_HEADER, spoofed).expect(200);
    expect(echoOf(res).headers[P_HEADER]).toBeUndefined();
    const sigil = await build({ templates: sandbox.url }, undefined);
    const onSigil = await request(sigil.app).get('/v1/templates').set(P_HEADER, spoofed).expect(200);
    expect(echoOf(onSigil).url).toBe('/v1/templates');
    expect(echoOf(onSigil).headers[P_HEADER]).toBeUndefined();
  });

  it('forwards the client as the last x-forwarded-for hop (kept behind a trusted proxy, the peer otherwise); keeps the request id', async () => {
    const token = await accessToken(rsa);
    const trusted = await request(remote.app)
      .get('/api/v1/whoami')
      .set('cf-access-jwt-assertion', token)
      .set('x-forwarded-for', '203.0.113.7')
      .set('x-request-id', 'trace-strata-0001')
      .expect(200);
    expect(echoOf(trusted).headers['x-forwarded-for']).toBe('203.0.113.7');
    expect(echoOf(trusted).headers['x-request-id']).toBe('trace-strata-0001');
    expect(trusted.headers['x-request-id']).toBe('trace-strata-0001');

    const forged = await request(remote.app).get('/api/v1/whoami').set('cf-access-jwt-assertion', token).set('x-forwarded-for', '6.6.6.6, 203.0.113.7').expect(200);
    expect(echoOf(forged).headers['x-forwarded-for']).toBe('6.6.6.6, 203.0.113.7');

    const untrusted = await request(inline.app).get('/api/v1/whoami').set('cf-access-jwt-assertion', token).set('x-forwarded-for', '203.0.113.7').expect(200);
    expect(echoOf(untrusted).headers['x-forwarded-for']).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
  });

  it('relays server-sent events frame by frame before the upstream ends', async () => {
    sseNext = deferred();
    sseEnd = deferred();
    const server = await listen(remote.app);
    try {
      const token = await accessToken(rsa);
      const req = http.get(`${server.url}/api/v1/events`, { headers: { 'cf-access-jwt-assertion': token, accept: 'text/event-stream' } });
      const [res] = (await once(req, 'response')) as [http.IncomingMessage];
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/event-stream');
      expect(res.headers['x-request-id']).toMatch(/^req_/);
      const ended = once(res, 'end');
      // Frames as they arrive, split on the blank line that ends each one.
      const frames: string[] = [];
      let buffered = '';
      res.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        for (let end = buffered.indexOf('\n\n'); end !== -1; end = buffered.indexOf('\n\n')) {
          frames.push(buffered.slice(0, end));
          buffered = buffered.slice(end + 2);
        }
      });
      const framesArrived = (count: number) => waitUntil(() => frames.length >= count, `frame ${count}`);
      await framesArrived(1);
      expect(sseUpstreamEnded).toBe(false);
      sseNext.resolve();
      await framesArrived(2);
      expect(sseUpstreamEnded).toBe(false);
      sseEnd.resolve();
      await framesArrived(3);
      await ended;
      expect(frames).toEqual(['event: target\ndata: {"seq":1}', 'event: backup\ndata: {"seq":2}', 'event: catalog\ndata: {"seq":3}']);
      const seen = catalogSeen.at(-1);
      expect(seen?.url).toBe('/api/v1/events');
      expect((await verifyStrata(String(seen?.headers[P_HEADER]))).id).toBe('user-ada');
    } finally {
      sseNext.resolve();
      sseEnd.resolve();
      await server.close();
    }
  });
});

describe('principal mapping', () => {
  it('takes the highest role among the groups, and orgs/projects from groups and claims', async () => {
    const token = await accessToken(ec, {
      groups: ['strata:viewer', 'org:acme', 'strata:restorer', 'project:billing', 'strata:operator', 'org:', 'eng'],
      orgs: ['globex', 'acme'],
      projects: 'payments',
    });
    const res = await request(remote.app).get('/api/v1/whoami').set('cf-access-token', token).expect(200);
    expect(await principalOf(res)).toEqual({
      id: 'user-ada',
      email: 'ada@example.com',
      role: 'restorer',
      groups: ['strata:viewer', 'org:acme', 'strata:restorer', 'project:billing', 'strata:operator', 'org:', 'eng'],
      orgs: ['acme', 'globex'],
      projects: ['billing', 'payments'],
      service: false,
    });
  });

  it('gives the default role (viewer) when no group maps to a role', async () => {
    for (const groups of [['eng'], [], undefined, 'strata-admins-as-a-string']) {
      const res = await request(remote.app).get('/api/v1/whoami').set('cf-access-token', await accessToken(rsa, { groups })).expect(200);
      expect((await principalOf(res)).role).toBe('viewer');
    }
  });

  it('maps a service token (common_name, no email) to a service principal', async () => {
    const token = await accessToken(rsa, { email: undefined, groups: undefined, common_name: 'abc123.access' }, { sub: '' });
    const res = await request(remote.app).get('/api/v1/whoami').set('cf-access-token', token).expect(200);
    expect(await principalOf(res)).toEqual({
      id: 'abc123.access',
      email: 'abc123.access',
      role: 'viewer',
      groups: [],
      orgs: [],
      projects: [],
      service: true,
    });
  });

  it('uses the configured groups claim (also a dotted path) and role groups', async () => {
    const base = { issuers: [ISS], audiences: [AUD], jwks };
    const custom = createStrataAuthenticator({ ...base, groupsClaim: 'custom.teams', roleGroups: { dba: 'restorer-admin', oncall: 'operator' } });
    const token = await accessToken(rsa, { groups: ['strata:restorer'], custom: { teams: ['oncall', 'dba', 'org:acme'] } });
    const result = await custom.authenticate({ 'cf-access-jwt-assertion': token });
    expect(result).toMatchObject({ kind: 'authenticated', principal: { role: 'restorer-admin', groups: ['oncall', 'dba', 'org:acme'], orgs: ['acme'] } });

    const urlClaim = createStrataAuthenticator({ ...base, groupsClaim: 'https://example.test/groups' });
    const withUrlClaim = await urlClaim.authenticate({ 'cf-access-jwt-assertion': await accessToken(rsa, { 'https://example.test/groups': ['strata:restorer'] }) });
    expect(withUrlClaim).toMatchObject({ kind: 'authenticated', principal: { role: 'restorer' } });
    expect(await urlClaim.authenticate({})).toEqual({ kind: 'anonymous' });
    expect(await urlClaim.authenticate({ 'cf-access-token': '  ' })).toEqual({ kind: 'anonymous' });
  });

  it('with the default role none, callers whose groups grant nothing get 403 at the gateway', async () => {
    const gateway = await build({ 'backup-catalog': catalog.url }, { auth: { issuers: [ISS], audiences: [AUD], jwks, defaultRole: 'none' } });
    const before = catalogSeen.length;
    const refused = await request(gateway.app).get('/api/v1/whoami').set('cf-access-token', await accessToken(rsa, { groups: ['eng'] })).expect(403);
    expect(refused.headers['content-type']).toMatch(JSON_TYPE);
    expect(refused.body).toEqual({ error: 'Your groups grant no Strata role.' });
    expect(catalogSeen.length).toBe(before);
    const allowed = await request(gateway.app).get('/api/v1/whoami').set('cf-access-token', await accessToken(rsa, { groups: ['strata:viewer'] })).expect(200);
    expect((await principalOf(allowed)).role).toBe('viewer');
  });

  it('refuses inconsistent options at construction', () => {
    expect(() => createStrataAuthenticator({ issuers: [ISS], audiences: [AUD] })).toThrow(/key set/);
    expect(() => createStrataAuthenticator({ issuers: [], audiences: [AUD] })).toThrow(/issuer/);
    expect(() => createStrataAuthenticator({ issuers: [ISS], audiences: [], jwks })).toThrow(/audience/);
    expect(() => createStrataAuthenticator({ issuers: [ISS], audiences: [AUD], jwks, jwksUrl: 'https://x.test/certs' })).toThrow(/not both/);
  });
});

describe('routing and the gateway\'s own answers on /api/v1', () => {
  it('sends /api/v1/sandboxes and below to sandbox, everything else to backup-catalog', async () => {
    const token = await accessToken(rsa);
    for (const [target, service] of [
      ['/api/v1/sandboxes', 'sandbox'],
      ['/api/v1/sandboxes/sbx-1/query', 'sandbox'],
      ['/api/v1/sandboxesx', 'backup-catalog'],
      ['/api/v1/openapi.yaml', 'backup-catalog'],
      ['/api/v1', 'backup-catalog'],
    ] as const) {
      const res = await request(remote.app).get(target).set('cf-access-jwt-assertion', token).expect(200);
      expect(res.headers['x-served-by'], target).toBe(service);
      expect(echoOf(res).url).toBe(target);
      expect((await verifyStrata(String(echoOf(res).headers[P_HEADER]))).id).toBe('user-ada');
    }
  });

  it('answers 503 { error } on the sandbox operations without SANDBOX_URL, like every operation nobody serves', async () => {
    const token = await accessToken(rsa);
    for (const target of ['/api/v1/sandboxes', '/api/v1/sandboxes/sbx-1/credentials']) {
      const res = await request(inline.app).get(target).set('cf-access-jwt-assertion', token).expect(503);
      expect(res.body, target).toEqual({ error: 'The sandbox service is not available.' });
    }
  });

  it('answers 404 { error } on sandbox paths the contract does not have, and on paths that can never be routed', async () => {
    for (const target of ['/api/v1/sandboxes/nothing/here/at/all', '/api/v1//whoami', '/api/v1/whoami/', '/api/v1/%2e%2e/v1/templates']) {
      const res = await request(inline.app).get(target).expect(404);
      expect(res.headers['content-type'], target).toMatch(JSON_TYPE);
      expect(res.body, target).toEqual({ error: 'No operation exists at this path.' });
    }
    expect(sandboxSeen.filter((seen) => seen.url.includes('credentials'))).toEqual([]);
  });

  it('answers 401 { error } on every /api/v1 path when Strata authentication is not configured', async () => {
    const gateway = await build({ 'backup-catalog': catalog.url }, undefined);
    const before = catalogSeen.length;
    for (const setToken of [false, true]) {
      const req = request(gateway.app).get('/api/v1/whoami');
      if (setToken) req.set('cf-access-jwt-assertion', await accessToken(rsa));
      const res = await req.expect(401);
      expect(res.headers['content-type']).toMatch(JSON_TYPE);
      expect(res.body).toEqual({ error: 'Strata authentication is not configured on this gateway.' });
    }
    expect(catalogSeen.length).toBe(before);
  });

  it('answers 503 { error } when backup-catalog is not configured (501 for an operation nobody implements) and 502 when it cannot be reached', async () => {
    const token = await accessToken(rsa);
    // Every Strata operation may have a handler by now: the test names one as unbuilt (the default is the contract's list).
    const missing = await build({}, { auth: { issuers: [ISS], audiences: [AUD], jwks } }, false, (operationId) => operationId === 'getTargetChanges');
    const unavailable = await request(missing.app).get('/api/v1/whoami').set('cf-access-token', token).expect(503);
    expect(unavailable.headers['content-type']).toMatch(JSON_TYPE);
    expect(unavailable.body).toEqual({ error: 'The backup-catalog service is not available.' });
    const unimplemented = await request(missing.app).get('/api/v1/targets/default/main/changes').set('cf-access-token', token).expect(501);
    expect(unimplemented.body).toEqual({ error: 'The backup-catalog service does not implement getTargetChanges yet.' });

    const down = await build({ 'backup-catalog': await closedPortUrl() }, { auth: { issuers: [ISS], audiences: [AUD], jwks } });
    const unreachable = await request(down.app).get('/api/v1/whoami').set('cf-access-token', token).expect(502);
    expect(unreachable.headers['content-type']).toMatch(JSON_TYPE);
    expect(unreachable.body).toEqual({ error: 'The backup-catalog service could not be reached.' });
    expect(unreachable.headers['x-request-id']).toMatch(/^req_/);
  });

  it('leaves Sigil alone: its paths keep problem+json, /api outside v1 and dev is Sigil\'s 404', async () => {
    const sigil = await request(remote.app).get('/v1/nope').expect(404);
    expect(sigil.headers['content-type']).toMatch(/^application\/problem\+json/);
    const other = await request(remote.app).get('/api/v2/whoami').expect(404);
    expect(other.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});

describe('dev issuer', () => {
  let dev: DevIssuer;
  let devGateway: GatewayApp;

  beforeAll(async () => {
    dev = await createDevIssuer({ audience: AUD, nodeEnv: 'development' });
    devGateway = await build({ 'backup-catalog': catalog.url }, { auth: { issuers: [], audiences: [AUD], extraIssuer: dev.trusted }, devIssuer: dev });
  });

  it('serves its public key at /api/dev/jwks.json', async () => {
    const res = await request(devGateway.app).get('/api/dev/jwks.json').expect(200);
    expect(res.headers['content-type']).toMatch(JSON_TYPE);
    expect(res.body.keys).toHaveLength(1);
    expect(res.body.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: dev.publicJwk.kid });
    expect(res.body.keys[0].d).toBeUndefined();
  });

  it('mints a token that works end to end', async () => {
    const minted = await request(devGateway.app).post('/api/dev/token').send({ email: 'dev@example.com', groups: ['org:acme', 'project:billing'] }).expect(200);
    expect(minted.headers['content-type']).toMatch(JSON_TYPE);
    const { token, expiresAt } = minted.body as { token: string; expiresAt: string };
    const claims = decodeJwt(token);
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'EdDSA', kid: dev.publicJwk.kid });
    expect(claims).toMatchObject({
      iss: DEV_ISSUER,
      aud: AUD,
      sub: 'dev:dev@example.com',
      email: 'dev@example.com',
      groups: ['strata:restorer-admin', 'org:acme', 'project:billing'],
    });
    expect((claims.exp as number) - (claims.iat as number)).toBe(43_200);
    expect(Date.parse(expiresAt)).toBe((claims.exp as number) * 1000);

    const res = await request(devGateway.app).get('/api/v1/whoami').set('cookie', `CF_Authorization=${token}`).expect(200);
    expect(await principalOf(res)).toEqual({
      id: 'dev:dev@example.com',
      email: 'dev@example.com',
      role: 'restorer-admin',
      groups: ['strata:restorer-admin', 'org:acme', 'project:billing'],
      orgs: ['acme'],
      projects: ['billing'],
      service: false,
    });
  });

  it('mints the role and lifetime asked for', async () => {
    const minted = await request(devGateway.app).post('/api/dev/token').send({ email: 'op@example.com', role: 'operator', ttlSeconds: 60 }).expect(200);
    const claims = decodeJwt(minted.body.token as string);
    expect((claims.exp as number) - (claims.iat as number)).toBe(60);
    const res = await request(devGateway.app).get('/api/v1/whoami').set('cf-access-jwt-assertion', minted.body.token as string).expect(200);
    expect((await principalOf(res)).role).toBe('operator');
  });

  it('signs the console in: the token goes into the HttpOnly access cookie, and signing out clears it', async () => {
    const signedIn = await request(devGateway.app).post('/api/dev/session').send({ email: 'viewer@example.com', role: 'viewer', ttlSeconds: 600 }).expect(200);
    expect(signedIn.body).toMatchObject({ email: 'viewer@example.com', role: 'viewer' });
    expect(signedIn.body.token).toBeUndefined();
    const cookie = (signedIn.headers['set-cookie'] as unknown as string[])[0] as string;
    expect(cookie).toMatch(/^CF_Authorization=[\w-]+\.[\w-]+\.[\w-]+; Path=\/; Max-Age=(599|600); HttpOnly; SameSite=Strict$/);
    const whoami = await request(devGateway.app).get('/api/v1/whoami').set('cookie', cookie.split(';')[0] as string).expect(200);
    expect((await principalOf(whoami)).role).toBe('viewer');
    const signedOut = await request(devGateway.app).delete('/api/dev/session').expect(204);
    expect((signedOut.headers['set-cookie'] as unknown as string[])[0]).toBe('CF_Authorization=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict');
    await request(devGateway.app).post('/api/dev/session').send({ email: 'x@example.com', role: 'god' }).expect(400);
    await request(devGateway.app).get('/api/dev/session').expect(405);
    // The configured cookie name (STRATA_ACCESS_COOKIE) is the one set.
    const named = await createDevIssuer({ audience: AUD, nodeEnv: 'development', cookieName: 'strata_access' });
    const gateway = await build({ 'backup-catalog': catalog.url }, { auth: { issuers: [], audiences: [AUD], extraIssuer: named.trusted, cookie: 'strata_access' }, devIssuer: named });
    const res = await request(gateway.app).post('/api/dev/session').send({ email: 'a@example.com' }).expect(200);
    expect((res.headers['set-cookie'] as unknown as string[])[0]).toMatch(/^strata_access=/);
  });

  it('answers 400 { error } to a bad body', async () => {
    const bodies: Array<[string, string | object]> = [
      ['missing email', { role: 'viewer' }],
      ['bad email', { email: 'not-an-email' }],
      ['unknown role', { email: 'a@example.com', role: 'god' }],
      ['ttl too short', { email: 'a@example.com', ttlSeconds: 30 }],
      ['ttl too long', { email: 'a@example.com', ttlSeconds: 86_401 }],
      ['groups not strings', { email: 'a@example.com', groups: [1] }],
      ['unknown member', { email: 'a@example.com', admin: true }],
      ['not an object', ['a@example.com']],
    ];
    for (const [name, body] of bodies) {
      const res = await request(devGateway.app).post('/api/dev/token').send(body);
      expect(res.status, name).toBe(400);
      expect(res.headers['content-type'], name).toMatch(JSON_TYPE);
      expect(Object.keys(res.body), name).toEqual(['error']);
    }
    const broken = await request(devGateway.app).post('/api/dev/token').set('content-type', 'application/json').send('{"email":');
    expect(broken.status).toBe(400);
    expect(broken.body).toEqual({ error: 'The body is not valid JSON.' });
    const text = await request(devGateway.app).post('/api/dev/token').set('content-type', 'text/plain').send('dev@example.com');
    expect(text.status).toBe(400);
    expect(text.body.error).toMatch(/JSON/);
    await request(devGateway.app).get('/api/dev/token').expect(405);
    const unknown = await request(devGateway.app).get('/api/dev/other').expect(404);
    expect(unknown.body).toEqual({ error: 'No operation exists at this path.' });
  });

  it('is trusted beside the configured issuer, and its key signs for its own issuer only', async () => {
    const both = await build({ 'backup-catalog': catalog.url }, { auth: { issuers: [ISS], audiences: [AUD], jwks, extraIssuer: dev.trusted }, devIssuer: dev });
    const devToken = (await dev.issue({ email: 'dev@example.com', role: 'viewer' })).token;
    expect((await principalOf(await request(both.app).get('/api/v1/whoami').set('cf-access-token', devToken).expect(200))).role).toBe('viewer');
    expect((await principalOf(await request(both.app).get('/api/v1/whoami').set('cf-access-token', await accessToken(ec)).expect(200))).role).toBe('operator');
    // A dev-issuer token is worthless where the dev issuer is not trusted.
    await expectRefused(inline, devToken, /no applicable key|"iss" claim/);
    // A token from another issuer is not verified with the dev key (and vice versa).
    await expectRefused(devGateway, await accessToken(rsa), /"iss" claim/);
  });

  it('answers 404 { error } on /api/dev when disabled', async () => {
    for (const [method, target] of [['post', '/api/dev/token'], ['get', '/api/dev/jwks.json']] as const) {
      const res = await request(remote.app)[method](target).send({ email: 'dev@example.com' }).expect(404);
      expect(res.headers['content-type']).toMatch(JSON_TYPE);
      expect(res.body).toEqual({ error: 'No operation exists at this path.' });
    }
  });

  it('reuses a configured key (STRATA_DEV_ISSUER_KEY): same kid, tokens survive a restart', async () => {
    const { privateJwk } = await generateInternalKeyPair();
    const first = await createDevIssuer({ audience: AUD, privateJwk, nodeEnv: 'development' });
    const second = await createDevIssuer({ audience: AUD, privateJwk, nodeEnv: 'development' });
    expect(second.publicJwk).toEqual(first.publicJwk);
    const token = (await first.issue({ email: 'dev@example.com' })).token;
    const auth = createStrataAuthenticator({ issuers: [], audiences: [AUD], extraIssuer: second.trusted });
    expect(await auth.authenticate({ 'cf-access-token': token })).toMatchObject({ kind: 'authenticated', principal: { role: 'restorer-admin' } });
    await expect(createDevIssuer({ audience: AUD, privateJwk: { kty: 'RSA' }, nodeEnv: 'development' })).rejects.toThrow(/Ed25519/);
  });

  it('refuses to start in production', async () => {
    await expect(createDevIssuer({ audience: AUD, nodeEnv: 'production' })).rejects.toThrow(/NODE_ENV=production/);
    const { privateJwk } = await generateInternalKeyPair();
    const child = spawn(process.execPath, [path.resolve(import.meta.dirname, '../src/main.ts')], {
      env: {
        PATH: process.env.PATH ?? '',
        PORT: '0',
        SERVICE_URLS: '{}',
        INTERNAL_JWT_PRIVATE_KEY: JSON.stringify(privateJwk),
        NATS_URL: 'nats://127.0.0.1:1',
        NODE_ENV: 'production',
        STRATA_DEV_ISSUER: 'true',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(stderr).toContain('STRATA_DEV_ISSUER: the dev issuer cannot be enabled with NODE_ENV=production');
  });
});

describe('configuration', () => {
  const base = { PORT: '0', SERVICE_URLS: '{}', NATS_URL: 'nats://127.0.0.1:4222', INTERNAL_JWT_PRIVATE_KEY: '' };
  let env: Record<string, string>;
  beforeAll(async () => {
    env = { ...base, INTERNAL_JWT_PRIVATE_KEY: JSON.stringify((await generateInternalKeyPair()).privateJwk) };
  });
  const parse = (extra: Record<string, string>) => gatewayConfigSchema.safeParse({ ...env, ...extra });
  const problems = (extra: Record<string, string>) => {
    const result = parse(extra);
    return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  };

  it('has Strata off by default, with the documented defaults', () => {
    const result = parse({});
    expect(result.success).toBe(true);
    const config = result.data as GatewayConfig;
    expect(strataAuthOptionsOf(config)).toBeUndefined();
    expect(config).toMatchObject({
      STRATA_ACCESS_AUDIENCE: ['strata'],
      STRATA_ACCESS_JWT_HEADER: 'cf-access-jwt-assertion',
      STRATA_ACCESS_TOKEN_HEADER: 'cf-access-token',
      STRATA_ACCESS_COOKIE: 'CF_Authorization',
      STRATA_GROUPS_CLAIM: 'groups',
      STRATA_DEFAULT_ROLE: 'viewer',
      STRATA_DEV_ISSUER: false,
      STRATA_ROLE_GROUPS: {
        'strata:viewer': 'viewer',
        'strata:operator': 'operator',
        'strata:restorer': 'restorer',
        'strata:restorer-admin': 'restorer-admin',
      },
    });
  });

  it('builds the authenticator options and the service URLs', () => {
    const result = parse({
      STRATA_ACCESS_ISSUER: `${ISS}, https://other.example.test`,
      STRATA_ACCESS_AUDIENCE: AUD,
      STRATA_ACCESS_JWKS: JSON.stringify(jwks),
      STRATA_ROLE_GROUPS: '{"dba":"restorer-admin"}',
      STRATA_DEFAULT_ROLE: 'none',
      STRATA_GROUPS_CLAIM: 'custom.groups',
      BACKUP_CATALOG_URL: 'http://127.0.0.1:4301',
      SANDBOX_URL: '',
    });
    expect(result.success, JSON.stringify(result.error?.issues)).toBe(true);
    const config = result.data as GatewayConfig;
    expect(strataAuthOptionsOf(config)).toMatchObject({
      issuers: [ISS, 'https://other.example.test'],
      audiences: [AUD],
      jwks,
      roleGroups: { dba: 'restorer-admin' },
      defaultRole: 'none',
      groupsClaim: 'custom.groups',
    });
    expect(serviceUrlsOf(config)).toEqual({ 'backup-catalog': 'http://127.0.0.1:4301' });
    const viaList = parse({ SERVICE_URLS: JSON.stringify({ 'backup-catalog': 'http://127.0.0.1:4301', sandbox: 'http://127.0.0.1:4302' }) });
    expect(serviceUrlsOf(viaList.data as GatewayConfig)).toEqual({ 'backup-catalog': 'http://127.0.0.1:4301', sandbox: 'http://127.0.0.1:4302' });
  });

  it('refuses inconsistent or unsafe Strata settings at boot', () => {
    expect(problems({ STRATA_ACCESS_ISSUER: ISS })).toEqual([
      "STRATA_ACCESS_ISSUER: needs the issuer's keys: STRATA_ACCESS_JWKS_URL or STRATA_ACCESS_JWKS",
    ]);
    expect(problems({ STRATA_ACCESS_JWKS_URL: 'https://team.example.test/certs' })).toEqual([
      'STRATA_ACCESS_ISSUER: is required when a Strata key set is configured',
    ]);
    expect(problems({ STRATA_ACCESS_ISSUER: ISS, STRATA_ACCESS_JWKS_URL: 'http://team.example.test/certs' })).toEqual([
      'STRATA_ACCESS_JWKS_URL: must be an https URL (http only on loopback)',
    ]);
    expect(problems({ STRATA_ACCESS_ISSUER: ISS, STRATA_ACCESS_JWKS: JSON.stringify({ keys: [{ ...rsa.publicJwk, d: 'secret' }] }) })).toEqual([
      'STRATA_ACCESS_JWKS: must hold public keys only',
    ]);
    expect(problems({ STRATA_ACCESS_ISSUER: ISS, STRATA_ACCESS_JWKS: '{"keys":[{"kty":"RSA"}]}' })[0]).toMatch(/^STRATA_ACCESS_JWKS: is not a valid JSON Web Key Set/);
    expect(problems({ STRATA_ROLE_GROUPS: '{"admins":"god"}' })[0]).toMatch(/^STRATA_ROLE_GROUPS\.admins/);
    expect(problems({ STRATA_DEFAULT_ROLE: 'admin' })[0]).toMatch(/^STRATA_DEFAULT_ROLE/);
    expect(problems({ STRATA_ACCESS_JWT_HEADER: 'bad header' })[0]).toMatch(/^STRATA_ACCESS_JWT_HEADER/);
    expect(problems({ STRATA_DEV_ISSUER: 'true', NODE_ENV: 'production' })).toEqual([
      'STRATA_DEV_ISSUER: the dev issuer cannot be enabled with NODE_ENV=production',
    ]);
    expect(problems({ BACKUP_CATALOG_URL: 'http://a.test', SERVICE_URLS: '{"backup-catalog":"http://b.test"}' })[0]).toMatch(/^BACKUP_CATALOG_URL: disagrees/);
    expect(problems({ STRATA_DEV_ISSUER: 'true' })).toEqual([]);
  });
});
