import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyPrincipal } from '@sigil/kit/testing';
import { startTemplatesHarness, type TemplatesHarness } from './helpers.ts';

let h: TemplatesHarness;
const org = apiKeyPrincipal();
let templateId: string;

beforeAll(async () => {
  h = await startTemplatesHarness('subgraph');
  const res = await request(h.app).post('/v1/templates').set(await h.auth.headers(org)).send({ name: 'Graph NDA' });
  templateId = res.body.id;
});
afterAll(async () => h?.close());

const gql = async (query: string, variables: object = {}, principal = org) =>
  request(h.app).post('/graphql').set(await h.auth.headers(principal)).send({ query, variables });

describe('templates subgraph', () => {
  it('lists and reads templates of the caller organization', async () => {
    const res = await gql('{ templates(first: 5) { nodes { id name hasDraft organization { id } } hasMore } }');
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.templates).toEqual({ nodes: [{ id: templateId, name: 'Graph NDA', hasDraft: false, organization: { id: org.organizationId } }], hasMore: false });
    const one = await gql('query($id: ID!) { template(id: $id) { name } }', { id: templateId });
    expect(one.body.data.template).toEqual({ name: 'Graph NDA' });
  });

  it('lists a template\'s versions: published newest first, then the draft, with roles, fields and variables', async () => {
    const as = await h.auth.headers(org);
    const body = (content: string) => ({ format: 'html', content });
    const draft = (content: string) => ({ body: body(content), roles: [{ name: 'client', order: 1 }], fields: [{ id: 'sig', role: 'client', type: 'signature' }], variables: [{ name: 'company', required: true }] });
    await request(h.app).put(`/v1/templates/${templateId}/draft`).set(as).send(draft('<p>{{company}} v1 {{field:sig}}</p>'));
    expect((await request(h.app).post(`/v1/templates/${templateId}/publish`).set(as)).status).toBe(201);
    await request(h.app).put(`/v1/templates/${templateId}/draft`).set(as).send(draft('<p>{{company}} v2 {{field:sig}}</p>'));
    const res = await gql('query($id: ID!) { template(id: $id) { versions { version pageCount publishedAt roles { name order } fields { id role type page } variables { name required } } } }', { id: templateId });
    expect(res.body.errors).toBeUndefined();
    const versions = res.body.data.template.versions;
    expect(versions.map((v: { version: string }) => v.version)).toEqual(['1', 'draft']);
    expect(versions[0]).toMatchObject({ pageCount: 1, publishedAt: expect.any(String), roles: [{ name: 'client', order: 1 }], variables: [{ name: 'company', required: true }] });
    expect(versions[0].fields[0]).toMatchObject({ id: 'sig', role: 'client', type: 'signature', page: 1 });
    expect(versions[1]).toMatchObject({ pageCount: null, publishedAt: null });
  }, 60_000);

  it('resolves Template entities for the gateway', async () => {
    const res = await gql('query($r: [_Any!]!) { _entities(representations: $r) { ... on Template { id name } } }', { r: [{ __typename: 'Template', id: templateId }] });
    expect(res.body.data._entities).toEqual([{ id: templateId, name: 'Graph NDA' }]);
  });

  it('exposes the federation SDL', async () => {
    const res = await gql('{ _service { sdl } }');
    expect(res.body.data._service.sdl).toMatch(/type Template\s+@key\(fields: "id"\)/);
  });

  it("returns null for another organization's template", async () => {
    const res = await gql('query($id: ID!) { template(id: $id) { name } }', { id: templateId }, apiKeyPrincipal());
    expect(res.body.data.template).toBeNull();
  });

  it('reports UNAUTHENTICATED without a caller and FORBIDDEN without template:read', async () => {
    const anonymous = await request(h.app).post('/graphql').send({ query: '{ templates { nodes { id } } }' });
    expect(anonymous.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const noRead = await gql('{ templates { nodes { id } } }', {}, apiKeyPrincipal({ permissions: ['envelope:read'] }));
    expect(noRead.body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(noRead.body.errors[0].message).toBe('Missing permission: template:read.');
  });

  it('bounds first', async () => {
    const res = await gql('{ templates(first: 101) { nodes { id } } }');
    expect(res.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });
});
