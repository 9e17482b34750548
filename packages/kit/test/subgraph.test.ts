import { describe, expect, it } from 'vitest';
import express from 'express';
import request from 'supertest';
import { mountSubgraph, principalWith, type SubgraphContext } from '../src/graphql/index.ts';
import { apiKeyPrincipal, createTestAuth } from '../src/testing.ts';

const SDL = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
type Query { viewer: String }`;
const resolvers = { Query: { viewer: (_: unknown, __: unknown, context: SubgraphContext) => principalWith(context, 'template:read').actorId } };

describe('a subgraph mounted at /graphql', () => {
  it('is started by its first requests, once, and answers them all', async () => {
    const auth = await createTestAuth();
    const app = express();
    await mountSubgraph(app, { typeDefs: SDL, resolvers, verifyPrincipal: auth.verify });
    const principal = apiKeyPrincipal({ actorId: 'key_first', permissions: ['template:read'] });
    const ask = async () => request(app).post('/graphql').set(await auth.headers(principal)).send({ query: '{ viewer }' });

    const answers = await Promise.all([ask(), ask(), ask()]);
    expect(answers.map((res) => [res.status, res.body])).toEqual(Array(3).fill([200, { data: { viewer: 'key_first' } }]));
  });

  it('fails the request of a schema that does not build, and builds it again for the next request', async () => {
    const auth = await createTestAuth();
    const app = express();
    const definition = { typeDefs: 'type Query {', resolvers, verifyPrincipal: auth.verify };
    await mountSubgraph(app, definition);
    const ask = async () => request(app).post('/graphql').set(await auth.headers(apiKeyPrincipal({ actorId: 'key_retry' }))).send({ query: '{ viewer }' });

    expect((await ask()).status).toBe(500);
    definition.typeDefs = SDL;
    const res = await ask();
    expect([res.status, res.body]).toEqual([200, { data: { viewer: 'key_retry' } }]);
  });
});
