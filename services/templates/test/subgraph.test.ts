import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument } from 'pdf-lib';
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

  it("gives a document-mode version's body, and a file version's page sizes in points", async () => {
    const as = await h.auth.headers(org);
    const created = await request(h.app).post('/v1/templates').set(as).send({ name: 'Graph lease' });
    const doc = await PDFDocument.create();
    doc.addPage([612, 792]);
    doc.addPage([842, 595]);
    const upload = await request(h.app).post(`/v1/templates/${created.body.id}/files`).set(as).set('content-type', 'application/pdf').send(Buffer.from(await doc.save()));
    expect(upload.status).toBe(201);
    const query = 'query($id: ID!) { template(id: $id) { versions { version body { format content } pages { width height } } } }';
    const fileDraft = await gql(query, { id: created.body.id });
    expect(fileDraft.body.errors).toBeUndefined();
    expect(fileDraft.body.data.template.versions).toEqual([{ version: 'draft', body: null, pages: [{ width: 612, height: 792 }, { width: 842, height: 595 }] }]);
    const content = '<p>{{company}} {{field:sig}}</p>';
    const saved = await request(h.app).put(`/v1/templates/${created.body.id}/draft`).set(as).send({ body: { format: 'html', content }, roles: [{ name: 'client', order: 1 }], fields: [{ id: 'sig', role: 'client', type: 'signature' }], variables: [{ name: 'company', required: true }] });
    expect(saved.status).toBe(200);
    const bodyDraft = await gql(query, { id: created.body.id });
    expect(bodyDraft.body.data.template.versions).toEqual([{ version: 'draft', body: { format: 'html', content }, pages: [] }]);
  }, 60_000);

  it('counts the templates a search matches, across pages', async () => {
    const counted = apiKeyPrincipal();
    const mine = await h.auth.headers(counted);
    for (const name of ['Lease north', 'Lease south', 'Invoice']) await request(h.app).post('/v1/templates').set(mine).send({ name });
    const res = await gql('query($q: String) { templates(first: 1, q: $q) { totalCount hasMore nodes { name } } }', { q: 'lease' }, counted);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.templates).toEqual({ totalCount: 2, hasMore: true, nodes: [{ name: 'Lease south' }] });
    const all = await gql('{ templates(first: 100) { totalCount } }', {}, counted);
    expect(all.body.data.templates.totalCount).toBe(3);
  });

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
