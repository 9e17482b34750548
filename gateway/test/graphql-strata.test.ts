import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import express from 'express';
import request from 'supertest';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWTPayload } from 'jose';
import {
  PRINCIPAL_HEADER,
  STRATA_PRINCIPAL_HEADER,
  createStrataPrincipalSigner,
  createStrataPrincipalVerifier,
  generateInternalKeyPair,
  type StrataPrincipalSigner,
  type StrataPrincipalVerifier,
} from '@sigil/kit/auth';
import { mountStrataSubgraph, mountSubgraph, principalWith, strataPrincipalWith, type StrataSubgraphContext, type SubgraphContext } from '@sigil/kit/graphql';
import { silentLogger } from '@sigil/kit/testing';
import { SIGIL } from '@sigil/proto';
import { createGatewayApp, type GatewayApp } from '../src/app.ts';
import { createAuthenticator } from '../src/authenticator.ts';
import { composeSdl } from '../src/compose.ts';
import { createStrataAuthenticator, type StrataAuthenticatorOptions } from '../src/strata-auth.ts';
import { createTestKeys, listen, startFakeAccounts, type FakeAccounts, type TestKeys } from './helpers.ts';

const ISS = 'https://team.access.example.test';
const AUD = 'strata-graph-aud';
const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])\n';
const USERS_SDL = `${LINK}
type User @key(fields: "id") { id: ID! }
type Query { viewer: User }`;
const CATALOG_SDL = `${LINK}
type Target @key(fields: "namespace name") { namespace: String! name: String! seenBy: String! }
type Query { strataTargets: [Target!]! strataAudit: [String!]! }`;
const SANDBOX_SDL = `${LINK}
type Sandbox @key(fields: "name") { name: String! target: Target }
type Target @key(fields: "namespace name", resolvable: false) { namespace: String! name: String! }
type Query { strataSandboxes: [Sandbox!]! }`;

interface SubgraphCall {
  service: string;
  headers: Record<string, unknown>;
}

let keys: TestKeys;
let accounts: FakeAccounts;
let signStrata: StrataPrincipalSigner;
let verifyStrata: StrataPrincipalVerifier;
let accessKey: CryptoKey;
let strataAuth: StrataAuthenticatorOptions;
let serviceUrls: Record<'accounts' | 'backup-catalog' | 'sandbox', string>;
let supergraphSdl: string;
let gateway: GatewayApp;
const gateways: GatewayApp[] = [];
const servers: Array<{ close(): Promise<void> }> = [];
const calls: SubgraphCall[] = [];

/** A fake subgraph that records the headers of every fetch the gateway makes to it. */
async function startSubgraph(service: string, mount: (app: express.Express) => Promise<unknown>): Promise<string> {
  const app = express();
  app.use((req, _res, next) => {
    calls.push({ service, headers: { ...req.headers } });
    next();
  });
  await mount(app);
  const server = await listen(app);
  servers.push(server);
  return server.url;
}

const seenBy = (context: StrataSubgraphContext) => {
  const principal = strataPrincipalWith(context, 'viewer');
  return `${principal.email} (${principal.role}, orgs ${principal.orgs.join(',')})`;
};

async function startSubgraphs(): Promise<void> {
  const accountsUrl = await startSubgraph('accounts', (app) =>
    mountSubgraph(app, {
      typeDefs: USERS_SDL,
      resolvers: { Query: { viewer: (_: unknown, __: unknown, context: SubgraphContext) => ({ id: principalWith(context, 'template:read').actorId }) } },
      verifyPrincipal: keys.verify,
    }),
  );
  const catalogUrl = await startSubgraph('backup-catalog', (app) =>
    mountStrataSubgraph(app, {
      typeDefs: CATALOG_SDL,
      resolvers: {
        Query: {
          strataTargets: (_: unknown, __: unknown, context: StrataSubgraphContext) => [{ namespace: 'default', name: 'pg', seenBy: seenBy(context) }],
          strataAudit: (_: unknown, __: unknown, context: StrataSubgraphContext) => [strataPrincipalWith(context, 'operator').email],
        },
        Target: {
          __resolveReference: (ref: { namespace: string; name: string }, context: StrataSubgraphContext) => ({ ...ref, seenBy: seenBy(context) }),
        },
      },
      verifyStrataPrincipal: verifyStrata,
    }),
  );
  const sandboxUrl = await startSubgraph('sandbox', (app) =>
    mountStrataSubgraph(app, {
      typeDefs: SANDBOX_SDL,
      resolvers: {
        Query: {
          strataSandboxes: (_: unknown, __: unknown, context: StrataSubgraphContext) => {
            strataPrincipalWith(context, 'viewer');
            return [{ name: 'pg-sandbox', target: { namespace: 'default', name: 'pg' } }];
          },
        },
      },
      verifyStrataPrincipal: verifyStrata,
    }),
  );
  serviceUrls = { accounts: accountsUrl, 'backup-catalog': catalogUrl, sandbox: sandboxUrl };
}

async function buildGateway(strata: Partial<StrataAuthenticatorOptions> | 'off' = {}): Promise<GatewayApp> {
  const log = silentLogger();
  const built = await createGatewayApp({
    serviceUrls,
    signPrincipal: keys.sign,
    log,
    authenticator: createAuthenticator({ accountsUrl: accounts.url, signPrincipal: keys.sign, log }),
    supergraphSdl,
    ...(strata === 'off'
      ? {}
      : { strata: { authenticator: createStrataAuthenticator({ ...strataAuth, ...strata }), signPrincipal: signStrata } }),
  });
  gateways.push(built);
  return built;
}

async function accessToken(claims: JWTPayload = {}, audience = AUD): Promise<string> {
  return new SignJWT({ email: 'ada@example.com', groups: ['strata:operator', 'org:acme'], ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: 'ec-1' })
    .setIssuer(ISS)
    .setAudience(audience)
    .setSubject('user-ada')
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(accessKey);
}

beforeAll(async () => {
  keys = await createTestKeys();
  accounts = await startFakeAccounts(keys.verify);
  const internal = await generateInternalKeyPair();
  signStrata = await createStrataPrincipalSigner(internal.privateJwk);
  verifyStrata = await createStrataPrincipalVerifier(internal.publicJwk);
  const pair = await generateKeyPair('ES256', { extractable: true });
  accessKey = pair.privateKey;
  strataAuth = { issuers: [ISS], audiences: [AUD], jwks: { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'ec-1', alg: 'ES256', use: 'sig' }] } };
  await startSubgraphs();
  supergraphSdl = composeSdl([
    { name: 'accounts', sdl: USERS_SDL },
    { name: 'backup-catalog', sdl: CATALOG_SDL },
    { name: 'sandbox', sdl: SANDBOX_SDL },
  ]);
  gateway = await buildGateway();
});

afterAll(async () => {
  for (const built of gateways) await built.close();
  await Promise.all(servers.map((server) => server.close()));
  await accounts?.close();
});

const query = (app: express.Express, text: string) => request(app).post('/graphql').send({ query: text });

describe('Strata callers on /graphql', () => {
  it('hands every Strata subgraph of a plan the caller as x-strata-principal, and never the raw token', async () => {
    calls.length = 0;
    const token = await accessToken();
    const res = await query(gateway.app, '{ strataSandboxes { name target { name seenBy } } }').set('Cf-Access-Jwt-Assertion', token).expect(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.strataSandboxes).toEqual([{ name: 'pg-sandbox', target: { name: 'pg', seenBy: 'ada@example.com (operator, orgs acme)' } }]);
    expect(calls.map((call) => call.service)).toEqual(['sandbox', 'backup-catalog']);
    for (const { headers } of calls) {
      expect(await verifyStrata(String(headers[STRATA_PRINCIPAL_HEADER]))).toMatchObject({ id: 'user-ada', email: 'ada@example.com', role: 'operator', orgs: ['acme'] });
      expect(headers[PRINCIPAL_HEADER]).toBeUndefined();
      expect(headers['cf-access-jwt-assertion']).toBeUndefined();
    }
  });

  it.each([
    ['the cf-access-token header', (token: string) => ({ 'cf-access-token': token })],
    ['the CF_Authorization cookie', (token: string) => ({ cookie: `theme=dark; CF_Authorization=${token}` })],
  ])('reads the access token from %s', async (_place, headersFor) => {
    calls.length = 0;
    const res = await query(gateway.app, '{ strataTargets { seenBy } }').set(headersFor(await accessToken({ groups: ['strata:viewer'] }))).expect(200);
    expect(res.body.data.strataTargets).toEqual([{ seenBy: 'ada@example.com (viewer, orgs )' }]);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.headers.cookie ?? '').not.toContain('CF_Authorization');
  });

  it('forwards both principals when the request carries an API key and an access token', async () => {
    const { key, principal } = accounts.addKey();
    calls.length = 0;
    const res = await query(gateway.app, '{ viewer { id } strataTargets { name } }').set('authorization', `Bearer ${key}`).set('cf-access-token', await accessToken()).expect(200);
    expect(res.body).toEqual({ data: { viewer: { id: principal.actorId }, strataTargets: [{ name: 'pg' }] } });
    expect(calls).toHaveLength(2);
    for (const { headers } of calls) {
      expect((await keys.verify(String(headers[PRINCIPAL_HEADER]))).apiKeyId).toBe(principal.apiKeyId);
      expect((await verifyStrata(String(headers[STRATA_PRINCIPAL_HEADER]))).email).toBe('ada@example.com');
    }
  });

  it("lets a Strata-only caller in: Sigil's fields answer their own UNAUTHENTICATED error", async () => {
    const res = await query(gateway.app, '{ viewer { id } strataTargets { name } }').set('cf-access-token', await accessToken()).expect(200);
    expect(res.body.data).toEqual({ viewer: null, strataTargets: [{ name: 'pg' }] });
    expect(res.body.errors).toEqual([expect.objectContaining({ path: ['viewer'], extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) })]);
  });

  it("answers FORBIDDEN for a field above the caller's role", async () => {
    const res = await query(gateway.app, '{ strataAudit }').set('cf-access-token', await accessToken({ groups: ['strata:viewer'] })).expect(200);
    expect(res.body.errors).toEqual([expect.objectContaining({ message: 'This query needs the role operator; you are viewer.', extensions: expect.objectContaining({ code: 'FORBIDDEN' }) })]);
  });

  it('refuses an invalid access token with a 401 problem before GraphQL runs, even beside a valid API key', async () => {
    const { key } = accounts.addKey();
    calls.length = 0;
    for (const token of [await accessToken({}, 'another-audience'), `${await accessToken()}x`, 'not-a-jwt']) {
      const res = await query(gateway.app, '{ strataTargets { name } }').set('authorization', `Bearer ${key}`).set('cf-access-jwt-assertion', token).expect(401);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ type: `${SIGIL.problemsBaseUrl}/unauthorized`, detail: expect.stringMatching(/^The access token is invalid: /), requestId: res.headers['x-request-id'] });
    }
    expect(calls).toHaveLength(0);
  });

  it('refuses a caller with neither credential, spoofed principals or not, before planning', async () => {
    calls.length = 0;
    const res = await query(gateway.app, '{ strataTargets { name } }').set(STRATA_PRINCIPAL_HEADER, 'eyJhbGciOiJFZERTQSJ9.e30.AAAA').expect(401);
    expect(res.body).toEqual({ errors: [{ message: 'A valid API key, dashboard session or access token is required.', extensions: { code: 'UNAUTHENTICATED' } }] });
    expect(calls).toHaveLength(0);
  });

  it('answers 403 when the groups grant no role under STRATA_DEFAULT_ROLE=none', async () => {
    const strict = await buildGateway({ defaultRole: 'none' });
    const res = await query(strict.app, '{ strataTargets { name } }').set('cf-access-token', await accessToken({ groups: ['eng'] })).expect(403);
    expect(res.body).toMatchObject({ type: `${SIGIL.problemsBaseUrl}/forbidden`, detail: 'Your groups grant no Strata role.' });
  });

  it('ignores access tokens where Strata authentication is not configured', async () => {
    const sigilOnly = await buildGateway('off');
    const res = await query(sigilOnly.app, '{ strataTargets { name } }').set('cf-access-token', await accessToken()).expect(401);
    expect(res.body.errors[0].message).toBe('A valid API key or dashboard session is required.');
  });
});
