import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { ROLE_PERMISSIONS } from '@sigil/kit/auth';
import { apiKeyPrincipal, sessionPrincipal } from '@sigil/kit/testing';
import { createHarness, signUp, type Harness, type SignedUp } from './helpers.ts';

let h: Harness;
let owner: SignedUp;
beforeAll(async () => {
  h = await createHarness('subgraph');
  owner = await signUp(h, { organizationName: 'Graph Co', name: 'Gina' });
});
afterAll(async () => {
  await h?.close();
});

const gql = (headers: Record<string, string>, query: string, variables: Record<string, unknown> = {}) =>
  request(h.app).post('/graphql').set(headers).set('content-type', 'application/json').send({ query, variables });

describe('accounts subgraph', () => {
  it("returns the caller's organization with its members, and the viewer", async () => {
    const res = await gql(owner.headers, '{ organization { id name createdAt members { id role createdAt user { id name email } } } viewer { id name email } }');
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.organization).toMatchObject({ id: owner.organizationId, name: 'Graph Co' });
    expect(res.body.data.organization.members).toEqual([
      expect.objectContaining({ role: 'owner', user: { id: owner.userId, name: 'Gina', email: owner.email } }),
    ]);
    expect(res.body.data.viewer).toEqual({ id: owner.userId, name: 'Gina', email: owner.email });
  });

  it('API keys see their organization but no viewer, and members only with member:manage', async () => {
    const key = await h.auth.headers(apiKeyPrincipal({ organizationId: owner.organizationId }));
    const res = await gql(key, '{ organization { id name } viewer { id } }');
    expect(res.body.data).toEqual({ organization: { id: owner.organizationId, name: 'Graph Co' }, viewer: null });
    const members = await gql(key, '{ organization { members { id } } }');
    expect(members.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const admin = await h.auth.headers(apiKeyPrincipal({ organizationId: owner.organizationId, permissions: ROLE_PERMISSIONS.owner.slice() }));
    expect((await gql(admin, '{ organization { members { id } } }')).body.data.organization.members).toHaveLength(1);
  });

  it('lists API keys newest first, revoked ones with revokedAt, by mode and page; never the secret', async () => {
    const create = async (name: string, mode: string) => (await request(h.app).post('/v1/api-keys').set(owner.headers).send({ name, mode, expiresInDays: 30 })).body;
    const first = await create('Server', 'test');
    const second = await create('Worker', 'live');
    const third = await create('Laptop', 'test');
    expect((await request(h.app).delete(`/v1/api-keys/${first.id}`).set(owner.headers)).status).toBe(204);

    const all = await gql(owner.headers, '{ organization { apiKeys { nodes { id name mode scopes prefix createdAt expiresAt lastUsedAt revokedAt createdBy } hasMore nextCursor } } }');
    expect(all.body.errors).toBeUndefined();
    const keys = all.body.data.organization.apiKeys;
    expect(keys.nodes.map((k: { id: string }) => k.id)).toEqual([third.id, second.id, first.id]);
    expect(keys.nodes[2]).toEqual({ id: first.id, name: 'Server', mode: 'test', scopes: first.scopes, prefix: first.prefix, createdAt: first.createdAt, expiresAt: first.expiresAt, lastUsedAt: null, revokedAt: expect.any(String), createdBy: owner.userId });
    expect(keys.nodes[0].revokedAt).toBeNull();
    expect(JSON.stringify(all.body)).not.toContain(third.secret);

    const test = await gql(owner.headers, '{ organization { apiKeys(mode: "test", first: 1) { nodes { id } hasMore nextCursor } } }');
    const page1 = test.body.data.organization.apiKeys;
    expect(page1).toMatchObject({ nodes: [{ id: third.id }], hasMore: true });
    const page2 = await gql(owner.headers, 'query ($after: String) { organization { apiKeys(mode: "test", first: 1, after: $after) { nodes { id } hasMore } } }', { after: page1.nextCursor });
    expect(page2.body.data.organization.apiKeys).toEqual({ nodes: [{ id: first.id }], hasMore: false });

    expect((await gql(owner.headers, '{ organization { apiKeys(mode: "staging") { hasMore } } }')).body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect((await gql(owner.headers, '{ organization { apiKeys(first: 0) { hasMore } } }')).body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });

  it('lists pending invitations only, newest first', async () => {
    const invite = async (email: string) => (await request(h.app).post('/v1/organization/invitations').set(owner.headers).send({ email, role: 'member' })).body;
    const kept = await invite(`kept-${Date.now()}@example.com`);
    const revoked = await invite(`revoked-${Date.now()}@example.com`);
    expect((await request(h.app).delete(`/v1/organization/invitations/${revoked.id}`).set(owner.headers)).status).toBe(204);
    const res = await gql(owner.headers, '{ organization { invitations { nodes { id email role expiresAt createdAt } hasMore } } }');
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.organization.invitations).toEqual({
      nodes: [{ id: kept.id, email: kept.email, role: 'member', expiresAt: kept.expiresAt, createdAt: kept.createdAt }],
      hasMore: false,
    });
  });

  it('shows API keys and invitations to dashboard sessions holding the permission only', async () => {
    const key = await h.auth.headers(apiKeyPrincipal({ organizationId: owner.organizationId, permissions: ROLE_PERMISSIONS.owner.slice() }));
    for (const field of ['apiKeys', 'invitations']) {
      const res = await gql(key, `{ organization { ${field} { hasMore } } }`);
      expect(res.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
    const viewer = await h.auth.headers(sessionPrincipal({ organizationId: owner.organizationId, role: 'viewer', permissions: ROLE_PERMISSIONS.viewer.slice() }));
    expect((await gql(viewer, '{ organization { apiKeys { hasMore } } }')).body.errors[0].message).toMatch(/apikey:manage/);
    expect((await gql(viewer, '{ organization { invitations { hasMore } } }')).body.errors[0].message).toMatch(/member:manage/);
  });

  it('answers UNAUTHENTICATED without a caller, not an empty organization', async () => {
    const res = await gql({}, '{ organization { id } viewer { id } }');
    expect(res.body.data).toEqual({ organization: null, viewer: null });
    expect(res.body.errors.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual(['UNAUTHENTICATED', 'UNAUTHENTICATED']);
  });

  it('resolves entity references only for the caller organization', async () => {
    const other = await signUp(h);
    const query = 'query ($representations: [_Any!]!) { _entities(representations: $representations) { ... on Organization { id name } } }';
    const res = await gql(owner.headers, query, {
      representations: [
        { __typename: 'Organization', id: owner.organizationId },
        { __typename: 'Organization', id: other.organizationId },
      ],
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data._entities).toEqual([{ id: owner.organizationId, name: 'Graph Co' }, null]);
  });

  it('publishes a Federation 2 SDL with the Organization entity', async () => {
    const res = await gql({}, '{ _service { sdl } }');
    expect(res.body.data._service.sdl).toMatch(/type Organization\s+@key\(fields: "id"\)/);
    expect(res.body.data._service.sdl).toContain('https://specs.apollo.dev/federation/v2.7');
  });
});
