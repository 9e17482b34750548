import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { ROLE_PERMISSIONS } from '@sigil/kit/auth';
import { apiKeyPrincipal } from '@sigil/kit/testing';
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
