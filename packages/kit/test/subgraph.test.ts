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

  it('refuses text PostgreSQL cannot store in variables and in literals, as bad input (400), before any resolver runs', async () => {
    const auth = await createTestAuth();
    const app = express();
    const echoed: string[] = [];
    const typeDefs = `${SDL}\ntype Mutation { rename(input: RenameInput!): String }\ninput RenameInput { names: [String!]! }`;
    const rename = (_: unknown, args: { input: { names: string[] } }) => (echoed.push(...args.input.names), 'ok');
    await mountSubgraph(app, { typeDefs, resolvers: { ...resolvers, Mutation: { rename } }, verifyPrincipal: auth.verify });
    const headers = await auth.headers(apiKeyPrincipal({ permissions: ['template:read'] }));
    const ask = async (body: string) => request(app).post('/graphql').set(headers).set('content-type', 'application/json').send(body);
    const mutation = 'mutation($input: RenameInput!) { rename(input: $input) }';

    const surrogate = await ask(JSON.stringify({ query: mutation, variables: { input: { names: ['fine', 'lone \ud800'] } } }));
    expect(surrogate.status).toBe(400);
    expect(surrogate.body.errors[0]).toMatchObject({ message: '$input.names[1] must be well-formed Unicode (it holds an unpaired surrogate).', extensions: { code: 'BAD_USER_INPUT' } });
    const nul = await ask(JSON.stringify({ query: 'mutation { rename(input: { names: ["a\\u0000b"] }) }' }));
    expect(nul.status).toBe(400);
    expect(nul.body.errors[0].message).toMatch(/must not contain the NUL character/);
    expect(echoed).toEqual([]);
    expect((await ask(JSON.stringify({ query: mutation, variables: { input: { names: ['Zoë 😀'] } } }))).body).toEqual({ data: { rename: 'ok' } });
  });
});
