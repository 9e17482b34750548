// PUT /v1/templates/{id}/draft and GET /versions: a draft on an uploaded PDF or a document-mode body, checked member
// by member, and read back as the draft version.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument } from 'pdf-lib';
import { apiKeyPrincipal } from '@sigil/kit/testing';
import { startTemplatesHarness, type TemplatesHarness } from './helpers.ts';

const org = apiKeyPrincipal();
let h: TemplatesHarness;
let templateId: string;
let fileId: string;

const roles = [{ name: 'client', order: 1 }, { name: 'counsel', order: 2 }];
const signature = { id: 'client_signature', role: 'client', type: 'signature', required: true, page: 1, x: 72, y: 640, width: 200, height: 40 };

const put = async (body: unknown, id = templateId) => request(h.app).put(`/v1/templates/${id}/draft`).set(await h.auth.headers(org)).send(body as object);
const get = async (path: string) => request(h.app).get(`/v1/templates/${templateId}${path}`).set(await h.auth.headers(org));

beforeAll(async () => {
  h = await startTemplatesHarness('drafts');
  templateId = (await request(h.app).post('/v1/templates').set(await h.auth.headers(org)).send({ name: 'NDA' })).body.id;
  const doc = await PDFDocument.create();
  doc.addPage([612, 792]);
  doc.addPage([612, 792]);
  const pdf = Buffer.from(await doc.save());
  fileId = (await request(h.app).post(`/v1/templates/${templateId}/files`).set(await h.auth.headers(org)).set('content-type', 'application/pdf').send(pdf)).body.id;
}, 60_000);
afterAll(async () => h?.close());

describe('PUT /v1/templates/{id}/draft', () => {
  it('saves a draft on an uploaded PDF and reads it back as the draft version; hasDraft becomes true', async () => {
    const res = await put({ file: fileId, roles, fields: [signature], variables: [{ name: 'company', required: true }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ object: 'template_version', templateId, version: 'draft', file: fileId, body: null, pageCount: 2, publishedAt: null, roles, fields: [signature] });
    expect((await get('/versions/draft')).body).toEqual(res.body);
    expect((await request(h.app).get(`/v1/templates/${templateId}`).set(await h.auth.headers(org))).body.hasDraft).toBe(true);
    expect((await get('/versions')).body).toEqual({ object: 'list', data: [], hasMore: false, nextCursor: null });
    expect((await get('/versions/latest')).status).toBe(404);
    expect((await get('/versions/1')).status).toBe(404);
  });

  it('saves a document-mode body, sanitized: scripts and handlers never survive', async () => {
    const content = '<h1>Agreement</h1><p onclick="steal()">{{company}} signs here: {{field:client_signature}}</p><script>alert(1)</script>';
    const res = await put({ body: { format: 'html', content }, roles, fields: [{ id: 'client_signature', role: 'client', type: 'signature' }], variables: [{ name: 'company', required: true }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.body).toEqual({ format: 'html', content: '<h1>Agreement</h1><p>{{company}} signs here: {{field:client_signature}}</p>' });
    expect(res.body.file).toBeNull();
  });

  it('answers every problem at once, each with the pointer of its member', async () => {
    const res = await put({
      file: fileId,
      roles,
      fields: [
        signature,
        { ...signature },
        { ...signature, id: 'witness', role: 'witness' },
        { ...signature, id: 'late', page: 3 },
        { ...signature, id: 'wide', x: 500, width: 200 },
        { id: 'name', role: 'client', type: 'text', page: 1, x: 0, y: 0, width: 10, height: 10, variable: 'undeclared' },
      ],
      variables: [],
    });
    expect(res.status).toBe(400);
    expect(res.body.type).toBe('https://sigil.dev/problems/validation-failed');
    expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/body/fields/1/id', '/body/fields/2/role', '/body/fields/5/variable']);
    const placement = await put({ file: fileId, roles, fields: [{ ...signature, id: 'late', page: 3 }, { ...signature, id: 'wide', x: 500, width: 200 }, { id: 'loose', role: 'client', type: 'date' }] });
    expect(placement.status).toBe(400);
    expect(placement.body.errors).toEqual([
      { pointer: '/body/fields/0/page', detail: "is past the file's last page (2)" },
      { pointer: '/body/fields/1', detail: 'lies off page 1 (612 x 792 points)' },
      { pointer: '/body/fields/2/page', detail: expect.stringMatching(/is required when the draft is a file/) },
    ]);
  });

  it('refuses an unknown file, both or neither of file and body, and undeclared tags in a body', async () => {
    expect((await put({ file: 'tfl_000000000000000000000000', roles, fields: [] })).body.errors).toEqual([{ pointer: '/body/file', detail: 'is not a file of this template' }]);
    expect((await put({ roles })).body.errors).toEqual([{ pointer: '/body', detail: 'must have exactly one of file or body' }]);
    const tags = await put({ body: { format: 'html', content: '<p>{{company}} {{field:sig}}</p>' }, roles, fields: [] });
    expect(tags.body.errors).toEqual([
      { pointer: '/body/body/content', detail: 'places field sig, which the draft does not declare' },
      { pointer: '/body/body/content', detail: 'uses variable company, which the draft does not declare' },
    ]);
    expect((await put({ body: { format: 'html', content: '<p>x</p>' } }, 'tpl_000000000000000000000000')).status).toBe(404);
  });

  it('goes with its template: deleting a template that has files and a draft', async () => {
    const other = (await request(h.app).post('/v1/templates').set(await h.auth.headers(org)).send({ name: 'Short-lived' })).body.id;
    const doc = await PDFDocument.create();
    doc.addPage([612, 792]);
    const file = (await request(h.app).post(`/v1/templates/${other}/files`).set(await h.auth.headers(org)).set('content-type', 'application/pdf').send(Buffer.from(await doc.save()))).body.id;
    expect((await put({ file, roles, fields: [signature] }, other)).status).toBe(200);
    expect((await request(h.app).delete(`/v1/templates/${other}`).set(await h.auth.headers(org))).status).toBe(204);
    expect(await h.db.templateVersion.count({ where: { templateId: other } })).toBe(0);
  });
});
