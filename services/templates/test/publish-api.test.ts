// POST /v1/templates/{id}/publish: a file draft and a document-mode draft (printed by Chromium) become numbered,
// immutable versions; the earlier version reads back unchanged after the next publish.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument } from 'pdf-lib';
import { apiKeyPrincipal } from '@sigil/kit/testing';
import { startTemplatesHarness, type TemplatesHarness } from './helpers.ts';

const org = apiKeyPrincipal();
const work = mkdtempSync(path.join(tmpdir(), 'template-publish-'));
let h: TemplatesHarness;

const as = async () => h.auth.headers(org);
const newTemplate = async (name: string) => (await request(h.app).post('/v1/templates').set(await as()).send({ name })).body.id as string;
const publish = async (id: string, key?: string) => request(h.app).post(`/v1/templates/${id}/publish`).set(await as()).set(key ? { 'idempotency-key': key } : {});
const saveDraft = async (id: string, body: unknown) => request(h.app).put(`/v1/templates/${id}/draft`).set(await as()).send(body as object);
const roles = [{ name: 'client', order: 1 }];

beforeAll(async () => {
  h = await startTemplatesHarness('publish');
}, 60_000);
afterAll(async () => h?.close());

describe('POST /v1/templates/{id}/publish', () => {
  it('is 409 no-draft without a draft', async () => {
    const res = await publish(await newTemplate('Empty'));
    expect(res.status).toBe(409);
    expect(res.body.type).toBe('https://sigil.dev/problems/no-draft');
  });

  it('freezes a file draft into version 1, then 2; version 1 reads back unchanged and cannot be altered', async () => {
    const id = await newTemplate('NDA');
    const doc = await PDFDocument.create();
    doc.addPage([612, 792]);
    const file = (await request(h.app).post(`/v1/templates/${id}/files`).set(await as()).set('content-type', 'application/pdf').send(Buffer.from(await doc.save()))).body.id;
    const field = { id: 'sig', role: 'client', type: 'signature', required: true, page: 1, x: 72, y: 600, width: 200, height: 40 };
    expect((await saveDraft(id, { file, roles, fields: [field] })).status).toBe(200);
    const v1 = await publish(id, `pub-${id}-1`);
    expect(v1.status, JSON.stringify(v1.body)).toBe(201);
    expect(v1.body).toMatchObject({ object: 'template_version', templateId: id, version: 1, file, pageCount: 1, fields: [field], publishedAt: expect.any(String) });
    expect((await publish(id, `pub-${id}-1`)).headers['idempotent-replayed']).toBe('true');
    const template = (await request(h.app).get(`/v1/templates/${id}`).set(await as())).body;
    expect(template).toMatchObject({ latestVersion: 1, hasDraft: false });
    expect((await publish(id)).status).toBe(409); // the draft was consumed

    expect((await saveDraft(id, { file, roles, fields: [{ ...field, x: 300 }] })).status).toBe(200);
    expect((await publish(id)).body.version).toBe(2);
    const first = await request(h.app).get(`/v1/templates/${id}/versions/1`).set(await as());
    expect(first.body).toEqual(v1.body);
    const list = await request(h.app).get(`/v1/templates/${id}/versions`).set(await as());
    expect(list.body.data.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect((await request(h.app).get(`/v1/templates/${id}/versions/latest`).set(await as())).body.version).toBe(2);
    await expect(h.db.templateVersion.updateMany({ where: { templateId: id, number: 1 }, data: { pageCount: 9 } })).rejects.toThrow(/immutable/);
  });

  it('prints a document-mode body with Chromium and records where each field tag stands', async () => {
    const id = await newTemplate('Offer');
    const filler = Array.from({ length: 60 }, (_, i) => `<p>Clause ${i + 1}: the parties agree to the terms of this clause.</p>`).join('');
    const content = `<h1>Offer Letter</h1><p>Dear {{candidate}},</p>${filler}<p>Signed: {{field:sig}}</p><p>Date: {{field:signed_on}}</p>`;
    const fields = [{ id: 'sig', role: 'client', type: 'signature' }, { id: 'signed_on', role: 'client', type: 'date' }];
    expect((await saveDraft(id, { body: { format: 'html', content }, roles, fields, variables: [{ name: 'candidate', required: true }] })).status).toBe(200);
    const res = await publish(id);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.pageCount).toBeGreaterThanOrEqual(2);
    const [sig, date] = res.body.fields;
    expect(sig).toMatchObject({ id: 'sig', page: res.body.pageCount, width: 200, height: 40 });
    expect(date).toMatchObject({ id: 'signed_on', page: res.body.pageCount, width: 100, height: 20 });
    expect(date.y).toBeGreaterThan(sig.y);
    expect(sig.x).toBeGreaterThanOrEqual(72);

    const row = await h.db.templateFile.findUniqueOrThrow({ where: { id: res.body.file } });
    expect(row).toMatchObject({ contentType: 'text/html', converted: true, pageCount: res.body.pageCount });
    const pdf = path.join(work, 'printed.pdf');
    writeFileSync(pdf, await h.store.get(row.storageKey));
    const text = execFileSync('pdftotext', ['-layout', pdf, '-'], { encoding: 'utf8' });
    expect(text).toMatch(/Offer Letter/);
    expect(text).toMatch(/Dear \{\{candidate\}\}/);
    expect(text).not.toMatch(/SIGILFIELDMARK/);
  }, 120_000);

  it('refuses a document-mode draft whose field is not placed in the body', async () => {
    const id = await newTemplate('Unplaced');
    const res = await saveDraft(id, { body: { format: 'html', content: '<p>No tags here</p>' }, roles, fields: [{ id: 'sig', role: 'client', type: 'signature' }] });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ pointer: '/body/fields/0', detail: 'is not placed in the body: write {{field:sig}} where it stands' }]);
  });
});
