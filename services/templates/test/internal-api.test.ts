// The internal endpoints envelopes calls (proto/src/internal-templates.ts): version snapshots, recorded uses under the
// template's row lock, the version's PDF; for the envelopes and signing services only.
import { createHash } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument } from 'pdf-lib';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal } from '@sigil/kit/testing';
import type { Principal } from '@sigil/kit/auth';
import { templateDocumentPath, templateUsesPath, templateVersionPath } from '@sigil/proto/internal-templates';
import { startTemplatesHarness, type TemplatesHarness } from './helpers.ts';

let h: TemplatesHarness;
const org = apiKeyPrincipal();
const envelopes: Principal = { kind: 'service', organizationId: org.organizationId, actorId: 'envelopes', mode: 'test', permissions: [] };
let pdf: Buffer;

async function publishedTemplate(versions = 1): Promise<string> {
  const as = await h.auth.headers(org);
  const id = (await request(h.app).post('/v1/templates').set(as).send({ name: 'Lease' })).body.id as string;
  for (let v = 1; v <= versions; v++) {
    const file = (await request(h.app).post(`/v1/templates/${id}/files`).set(as).set('content-type', 'application/pdf').send(pdf)).body.id;
    await request(h.app).put(`/v1/templates/${id}/draft`).set(as).send({
      file,
      roles: [{ name: 'tenant', order: 1 }],
      fields: [{ id: `sig_v${v}`, role: 'tenant', type: 'signature', required: true, page: 1, x: 72, y: 600, width: 200, height: 40 }],
      variables: [{ name: 'rent', required: true }],
    });
    expect((await request(h.app).post(`/v1/templates/${id}/publish`).set(as)).status).toBe(201);
  }
  return id;
}
const get = async (url: string, principal: Principal = envelopes) => request(h.app).get(url).set(await h.auth.headers(principal));
const use = async (id: string, body: unknown, principal: Principal = envelopes) => request(h.app).post(templateUsesPath(id)).set(await h.auth.headers(principal)).send(body as object);

beforeAll(async () => {
  h = await startTemplatesHarness('internal');
  const doc = await PDFDocument.create();
  doc.addPage([612, 792]);
  pdf = Buffer.from(await doc.save());
}, 60_000);
afterAll(async () => h?.close());

describe('internal template endpoints', () => {
  it('answers a published version, `latest`, never the draft, and 404 for another organization', async () => {
    const id = await publishedTemplate(2);
    await request(h.app).put(`/v1/templates/${id}/draft`).set(await h.auth.headers(org)).send({ body: { format: 'html', content: '<p>draft</p>' }, roles: [], fields: [], variables: [] });
    const latest = await get(templateVersionPath(id, 'latest'));
    expect(latest.status, JSON.stringify(latest.body)).toBe(200);
    expect(latest.body).toMatchObject({ templateId: id, templateName: 'Lease', version: 2, roles: [{ name: 'tenant', order: 1 }], pageCount: 1, pages: [{ width: 612, height: 792 }], variables: [{ name: 'rent', required: true }] });
    expect(latest.body.fields.map((f: { id: string }) => f.id)).toEqual(['sig_v2']);
    expect((await get(templateVersionPath(id, 1))).body.version).toBe(1);
    expect((await get(templateVersionPath(id, 3))).status).toBe(404);
    expect((await get(templateVersionPath(id, 'draft'))).status).toBe(400);
    expect((await get(templateVersionPath(id, 'latest'), { ...envelopes, organizationId: newId('org') })).status).toBe(404);
  });

  it('serves the version\'s PDF as stored', async () => {
    const id = await publishedTemplate();
    const snapshot = (await get(templateVersionPath(id, 1))).body;
    const doc = await request(h.app).get(templateDocumentPath(id, 1)).set(await h.auth.headers(envelopes)).buffer(true).parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
    expect(doc.status).toBe(200);
    expect(doc.headers['content-type']).toBe('application/pdf');
    expect(createHash('sha256').update(doc.body as Buffer).digest('hex')).toBe(snapshot.sha256);
  });

  it('records a use once; the template can then never be deleted', async () => {
    const id = await publishedTemplate();
    const envelopeId = newId('env');
    for (let i = 0; i < 2; i++) expect((await use(id, { version: 'latest', usedBy: { kind: 'envelope', id: envelopeId } })).status).toBe(200);
    expect(await h.db.templateUsage.count({ where: { templateId: id } })).toBe(1);
    const remove = await request(h.app).delete(`/v1/templates/${id}`).set(await h.auth.headers(org));
    expect(remove.status).toBe(409);
    expect(remove.body.detail).toContain(envelopeId);
  });

  it('records a signing link\'s use (lnk_) the same way', async () => {
    const id = await publishedTemplate();
    const linkId = newId('lnk');
    expect((await use(id, { version: 1, usedBy: { kind: 'signing_link', id: linkId } })).status).toBe(200);
    const remove = await request(h.app).delete(`/v1/templates/${id}`).set(await h.auth.headers(org));
    expect(remove.status).toBe(409);
    expect(remove.body.detail).toContain(linkId);
  });

  it('never leaves a deleted template with a recorded use when uses and a delete race', async () => {
    const id = await publishedTemplate();
    const as = await h.auth.headers(org);
    const [deleted, ...uses] = await Promise.all([
      request(h.app).delete(`/v1/templates/${id}`).set(as),
      ...Array.from({ length: 20 }, () => use(id, { version: 1, usedBy: { kind: 'envelope', id: newId('env') } })),
    ]);
    const recorded = await h.db.templateUsage.count({ where: { templateId: id } });
    if (deleted!.status === 204) {
      expect(await h.db.template.count({ where: { id } })).toBe(0);
      expect(recorded).toBe(0);
      expect(uses.every((u) => u.status === 200 || u.status === 404)).toBe(true);
      expect(uses.filter((u) => u.status === 200)).toHaveLength(0);
    } else {
      expect(deleted!.status).toBe(409);
      expect(recorded).toBe(uses.filter((u) => u.status === 200).length);
    }
  });

  it('refuses callers other than envelopes and signing, and bad bodies with pointers', async () => {
    const id = await publishedTemplate();
    expect((await request(h.app).get(templateVersionPath(id, 1))).status).toBe(401);
    expect((await get(templateVersionPath(id, 1), org)).status).toBe(401);
    expect((await get(templateVersionPath(id, 1), { ...envelopes, actorId: 'gateway' })).status).toBe(401);
    const bad = await use(id, { version: 'draft', usedBy: { kind: 'envelope', id: 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([expect.objectContaining({ pointer: '/body/version' })]);
    const badKind = await use(id, { version: 1, usedBy: { kind: 'robot', id: newId('env') } });
    expect(badKind.body.errors).toEqual([expect.objectContaining({ pointer: '/body/usedBy/kind' })]);
  });
});
