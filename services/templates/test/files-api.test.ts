// POST /v1/templates/{id}/files end to end on the service: real Postgres, real S3, real LibreOffice.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { apiKeyPrincipal } from '@sigil/kit/testing';
import type { Principal } from '@sigil/kit/auth';
import { startTemplatesHarness, type TemplatesHarness } from './helpers.ts';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const work = mkdtempSync(path.join(tmpdir(), 'template-files-api-'));
let h: TemplatesHarness;
let small: TemplatesHarness;
const org = apiKeyPrincipal();
let templateId: string;
let smallTemplateId: string;

async function samplePdf(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++) doc.addPage([612, 792]).drawText(`Page ${i + 1} of the agreement`, { x: 50, y: 700, size: 16, font });
  return Buffer.from(await doc.save());
}

function sampleDocx(): Buffer {
  const html = path.join(work, 'offer.html');
  writeFileSync(html, '<html><body><h1>Offer Letter</h1><table border="1"><tr><td>Salary</td><td>90,000</td></tr></table></body></html>');
  execFileSync('soffice', [`-env:UserInstallation=file://${work}/profile`, '--headless', '--convert-to', 'docx:MS Word 2007 XML', '--outdir', work, html], { stdio: 'ignore', timeout: 120_000 });
  return readFileSync(path.join(work, 'offer.docx'));
}

const upload = async (harness: TemplatesHarness, id: string, contentType: string, bytes: Buffer, principal: Principal = org, extra: Record<string, string> = {}) =>
  request(harness.app).post(`/v1/templates/${id}/files`).set(await harness.auth.headers(principal)).set('content-type', contentType).set(extra).send(bytes);

function expectBadFile(res: request.Response, detail: RegExp) {
  expect(res.status).toBe(400);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: 'https://sigil.dev/problems/validation-failed', detail: expect.stringMatching(detail), errors: [{ pointer: '/body', detail: expect.stringMatching(detail) }] });
}

beforeAll(async () => {
  h = await startTemplatesHarness('files');
  small = await startTemplatesHarness('files_small', { maxBytes: 64 * 1024, maxPages: 3 });
  templateId = (await request(h.app).post('/v1/templates').set(await h.auth.headers(org)).send({ name: 'Offer' })).body.id;
  smallTemplateId = (await request(small.app).post('/v1/templates').set(await small.auth.headers(org)).send({ name: 'Offer' })).body.id;
}, 60_000);
afterAll(async () => {
  await h?.close();
  await small?.close();
});

describe('POST /v1/templates/{id}/files', () => {
  it('stores a PDF as uploaded: 201 TemplateFile with pages, size and sha256 of the stored bytes', async () => {
    const pdf = await samplePdf(2);
    const res = await upload(h, templateId, 'application/pdf', pdf);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^tfl_[A-Za-z0-9]{24}$/),
      object: 'template_file',
      templateId,
      contentType: 'application/pdf',
      converted: false,
      pageCount: 2,
      pages: [{ width: 612, height: 792 }, { width: 612, height: 792 }],
      sha256: createHash('sha256').update(pdf).digest('hex'),
      size: pdf.length,
      createdAt: expect.any(String),
      draftFieldsRemoved: [],
    });
    const row = await h.db.templateFile.findUniqueOrThrow({ where: { id: res.body.id } });
    expect((await h.store.get(row.storageKey)).equals(pdf)).toBe(true);
  });

  it('makes the upload the draft document: a new draft holds the file, a later upload keeps the fields that still fit', async () => {
    const id = (await request(h.app).post('/v1/templates').set(await h.auth.headers(org)).send({ name: 'Lease' })).body.id;
    const first = await upload(h, id, 'application/pdf', await samplePdf(3));
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body.draftFieldsRemoved).toEqual([]);
    const draft = await request(h.app).get(`/v1/templates/${id}/versions/draft`).set(await h.auth.headers(org));
    expect(draft.status).toBe(200);
    expect(draft.body).toMatchObject({ version: 'draft', file: first.body.id, pageCount: 3, roles: [], fields: [] });
    expect((await request(h.app).get(`/v1/templates/${id}`).set(await h.auth.headers(org))).body.hasDraft).toBe(true);

    const field = (fieldId: string, page: number) => ({ id: fieldId, role: 'tenant', type: 'signature', required: true, page, x: 72, y: 600, width: 200, height: 40 });
    const saved = await request(h.app).put(`/v1/templates/${id}/draft`).set(await h.auth.headers(org)).send({
      file: first.body.id, roles: [{ name: 'tenant', order: 1 }], fields: [field('sign_p1', 1), field('sign_p3', 3)], variables: [{ name: 'rent', required: true }],
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);

    const second = await upload(h, id, 'application/pdf', await samplePdf(1));
    expect(second.status).toBe(201);
    expect(second.body.draftFieldsRemoved).toEqual(['sign_p3']);
    const after = (await request(h.app).get(`/v1/templates/${id}/versions/draft`).set(await h.auth.headers(org))).body;
    expect(after).toMatchObject({ file: second.body.id, pageCount: 1, roles: [{ name: 'tenant', order: 1 }], variables: [{ name: 'rent', required: true }] });
    expect(after.fields.map((f: { id: string }) => f.id)).toEqual(['sign_p1']);
  });

  it('converts a DOCX to PDF and stores the PDF', async () => {
    const res = await upload(h, templateId, DOCX, sampleDocx());
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ contentType: DOCX, converted: true, pageCount: 1 });
    const row = await h.db.templateFile.findUniqueOrThrow({ where: { id: res.body.id } });
    const stored = await h.store.get(row.storageKey);
    expect(createHash('sha256').update(stored).digest('hex')).toBe(res.body.sha256);
    const file = path.join(work, 'stored.pdf');
    writeFileSync(file, stored);
    expect(execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' })).toMatch(/Offer Letter[\s\S]*Salary\s+90,000/);
  }, 120_000);

  it('replays an idempotent upload and keeps files immutable in the database', async () => {
    const pdf = await samplePdf(1);
    const key = { 'idempotency-key': `upload-${Date.now()}` };
    const first = await upload(h, templateId, 'application/pdf', pdf, org, key);
    const again = await upload(h, templateId, 'application/pdf', pdf, org, key);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    const other = await upload(h, templateId, 'application/pdf', await samplePdf(2), org, key);
    expect(other.status).toBe(422);
    await expect(h.db.templateFile.update({ where: { id: first.body.id }, data: { size: 1 } })).rejects.toThrow(/immutable/);
  });

  it('answers each bad input with its own problem', async () => {
    expectBadFile(await upload(h, templateId, 'application/pdf', Buffer.from('this is not a pdf at all')), /not a PDF/);
    expectBadFile(await upload(h, templateId, 'application/pdf', (await samplePdf(1)).subarray(0, 300)), /corrupt/);
    const plain = path.join(work, 'plain.pdf');
    writeFileSync(plain, await samplePdf(1));
    execFileSync('qpdf', ['--encrypt', 'u', 'o', '256', '--', plain, path.join(work, 'locked.pdf')]);
    expectBadFile(await upload(h, templateId, 'application/pdf', readFileSync(path.join(work, 'locked.pdf'))), /encrypted/);
    expectBadFile(await upload(h, templateId, 'application/pdf', Buffer.from(await (await PDFDocument.create()).save({ addDefaultPage: false }))), /no pages/);
    expectBadFile(await upload(small, smallTemplateId, 'application/pdf', await samplePdf(4)), /4 pages; at most 3/);
    expectBadFile(await upload(h, templateId, DOCX, Buffer.from('plain text pretending')), /not a DOCX document/);

    const tooBig = await upload(small, smallTemplateId, 'application/pdf', Buffer.alloc(100 * 1024, 1));
    expect(tooBig.status).toBe(413);
    expect(tooBig.body).toMatchObject({ type: 'https://sigil.dev/problems/payload-too-large', detail: expect.stringMatching(/64 KiB|65536/) });

    const wrongType = await upload(h, templateId, 'image/png', Buffer.from('png'));
    expect(wrongType.status).toBe(415);
    expect(wrongType.body.type).toBe('https://sigil.dev/problems/unsupported-media-type');

    const missing = await upload(h, 'tpl_000000000000000000000000', 'application/pdf', await samplePdf(1));
    expect(missing.status).toBe(404);
    const foreign = await upload(h, templateId, 'application/pdf', await samplePdf(1), apiKeyPrincipal());
    expect(foreign.status).toBe(404);
  });
});
