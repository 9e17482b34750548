import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import express from 'express';
import request from 'supertest';
import { GraphQLError } from 'graphql';
import { PRINCIPAL_HEADER } from '@sigil/kit/auth';
import { mountSubgraph, principalWith, type SubgraphContext, type SubgraphResolvers } from '@sigil/kit/graphql';
import { SIGIL } from '@sigil/proto';
import { composeSdl } from '../src/compose.ts';
import { buildGateway, createTestKeys, listen, startFakeAccounts, type FakeAccounts, type GatewayUnderTest, type TestKeys } from './helpers.ts';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])\n';
const USERS_SDL = `${LINK}
type User @key(fields: "id") { id: ID! name: String! }
type Query { viewer: User }`;
const TEMPLATES_SDL = `${LINK}
type Template @key(fields: "id") { id: ID! name: String! author: User! }
type User @key(fields: "id", resolvable: false) { id: ID! }
type Query { templates: [Template!]! }`;

const unauthenticated = () => new GraphQLError('Sign in first.', { extensions: { code: 'UNAUTHENTICATED' } });

let keys: TestKeys;
let accounts: FakeAccounts;
let gateway: GatewayUnderTest;
let supergraphSdl: string;
const servers: Array<{ close(): Promise<void> }> = [];
const subgraphHeaders: Array<Record<string, unknown>> = [];

async function startSubgraph(typeDefs: string, resolvers: SubgraphResolvers) {
  const app = express();
  app.use((req, _res, next) => {
    subgraphHeaders.push({ ...req.headers });
    next();
  });
  await mountSubgraph(app, { typeDefs, resolvers, verifyPrincipal: keys.verify });
  const server = await listen(app);
  servers.push(server);
  return server.url;
}

beforeAll(async () => {
  keys = await createTestKeys();
  accounts = await startFakeAccounts(keys.verify);
  const usersUrl = await startSubgraph(USERS_SDL, {
    Query: {
      viewer: (_: unknown, __: unknown, { principal }: SubgraphContext) => {
        if (!principal) throw unauthenticated();
        return { id: principal.actorId, name: `user ${principal.actorId}` };
      },
    },
    User: {
      __resolveReference: (ref: { id: string }, { principal }: SubgraphContext) => {
        if (!principal) throw unauthenticated();
        return { id: ref.id, name: `user ${ref.id} of ${principal.organizationId}` };
      },
    },
  });
  const templatesUrl = await startSubgraph(TEMPLATES_SDL, {
    Query: {
      templates: (_: unknown, __: unknown, context: SubgraphContext) => {
        const principal = principalWith(context, 'template:read');
        return [{ id: 'tpl_1', name: 'NDA', author: { id: principal.actorId } }];
      },
    },
  });
  supergraphSdl = composeSdl([
    { name: 'accounts', sdl: USERS_SDL },
    { name: 'templates', sdl: TEMPLATES_SDL },
  ]);
  gateway = await buildGateway(
    keys,
    { accounts: usersUrl, templates: templatesUrl },
    { supergraphSdl, authenticator: { accountsUrl: accounts.url } },
  );
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all(servers.map((server) => server.close()));
  await accounts?.close();
});

const query = (text: string) => request(gateway.app).post('/graphql').send({ query: text });

describe('federated GraphQL at /graphql', () => {
  it('plans across subgraphs and hands every subgraph the caller principal (API key)', async () => {
    const { key, principal } = accounts.addKey();
    subgraphHeaders.length = 0;
    const res = await query('{ templates { name author { name } } }').set('authorization', `Bearer ${key}`).set('x-request-id', 'gql-trace-01').expect(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.templates).toEqual([{ name: 'NDA', author: { name: `user ${principal.actorId} of ${principal.organizationId}` } }]);
    expect(subgraphHeaders).toHaveLength(2);
    for (const headers of subgraphHeaders) {
      expect(headers.authorization).toBeUndefined();
      expect(headers['x-request-id']).toBe('gql-trace-01');
      expect((await keys.verify(String(headers[PRINCIPAL_HEADER]))).apiKeyId).toBe(principal.apiKeyId);
    }
  });

  it('resolves a dashboard session cookie', async () => {
    const { token, principal } = accounts.addSession();
    const res = await query('{ viewer { id name } }').set('cookie', `${SIGIL.sessionCookie}=${token}`).expect(200);
    expect(res.body.data.viewer).toEqual({ id: principal.actorId, name: `user ${principal.actorId}` });
  });

  it('refuses an anonymous caller with 401 UNAUTHENTICATED before planning, even with a spoofed principal', async () => {
    subgraphHeaders.length = 0;
    const spoofed = await keys.sign({ kind: 'api_key', organizationId: 'org_x', actorId: 'key_x', mode: 'live', permissions: ['template:read'] });
    const res = await query('{ viewer { id } }').set(PRINCIPAL_HEADER, spoofed).expect(401);
    expect(res.body).toEqual({ errors: [{ message: 'A valid API key or dashboard session is required.', extensions: { code: 'UNAUTHENTICATED' } }] });
    expect(res.body.data).toBeUndefined();
    expect(subgraphHeaders).toHaveLength(0);
  });

  it('never answers with a stack trace or a server path', async () => {
    const { key } = accounts.addKey();
    const res = await query('{ templatez { name } }').set('authorization', `Bearer ${key}`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const text = JSON.stringify(res.body);
    expect(text).not.toContain('stacktrace');
    expect(text).not.toMatch(/node_modules|\/work\/|\.ts:\d|at [A-Za-z]+ \(/);
  });

  it('refuses queries that are too deep, too costly or too aliased, without asking any subgraph', async () => {
    const { key } = accounts.addKey();
    subgraphHeaders.length = 0;
    const limited = await buildGateway(keys, {}, { supergraphSdl, authenticator: { accountsUrl: accounts.url }, graphLimits: { maxDepth: 2, maxCost: 4, maxAliases: 1 } });
    try {
      const ask = (text: string) => request(limited.app).post('/graphql').set('authorization', `Bearer ${key}`).send({ query: text });
      const deep = await ask('{ templates { author { name } } }');
      expect(deep.status).toBe(400);
      expect(deep.body.errors[0].message).toMatch(/depth/i);
      const aliased = await ask('{ a: viewer { id } b: viewer { id } }');
      expect(aliased.body.errors.map((e: { message: string }) => e.message).join(' ')).toMatch(/aliases/i);
      const costly = await ask('{ viewer { id name } templates { id name } }');
      expect(costly.body.errors.map((e: { message: string }) => e.message).join(' ')).toMatch(/cost/i);
      expect(subgraphHeaders).toHaveLength(0);
    } finally {
      await limited.close();
    }
  });

  it('answers 401 problem+json for an invalid key before GraphQL runs', async () => {
    subgraphHeaders.length = 0;
    const res = await query('{ templates { name } }').set('x-api-key', 'sgl_live_bad').expect(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ type: `${SIGIL.problemsBaseUrl}/unauthorized`, requestId: res.headers['x-request-id'] });
    expect(subgraphHeaders).toHaveLength(0);
  });

  it('reports a subgraph that is not configured as a GraphQL error', async () => {
    const partial = await buildGateway(keys, {}, {
      supergraphSdl: composeSdl([{ name: 'accounts', sdl: USERS_SDL }]),
      authenticator: { accountsUrl: accounts.url },
    });
    try {
      const { key } = accounts.addKey();
      const res = await request(partial.app).post('/graphql').set('authorization', `Bearer ${key}`).send({ query: '{ viewer { id } }' }).expect(200);
      expect(res.body.errors[0].message).toContain('accounts service is not configured');
    } finally {
      await partial.close();
    }
  });
});
