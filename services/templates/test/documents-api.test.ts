// GET /v1/templates/{id}/versions/{version}/document: the PDF of a published version, of the draft as uploaded,
// and of the draft as it would publish (fields outlined).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { apiKeyPrincipal } from '@sigil/kit/testing';
import { startTemplatesHarness, type TemplatesHarness } from './helpers.ts';

const org = apiKeyPrincipal();
const work = mkdtempSync(path.join(tmpdir(), 'template-documents-'));
let h: TemplatesHarness;
let id: string;
let original: Buffer;

const as = async () => h.auth.headers(org);
/** Reads a binary answer as bytes. */
const binary = (res: request.Response, callback: (error: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => callback(null, Buffer.concat(chunks)));
};
const document = async (version: string, query = '') =>
  request(h.app).get(`/v1/templates/${id}/versions/${version}/document${query}`).set(await as()).buffer(true).parse(binary);
const textOf = (pdf: Buffer) => {
  const file = path.join(work, `${Math.random().toString(36).slice(2)}.pdf`);
  writeFileSync(file, pdf);
  return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
};

beforeAll(async () => {
  h = await startTemplatesHarness('documents');
  id = (await request(h.app).post('/v1/templates').set(await as()).send({ name: 'Lease' })).body.id;
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([612, 792]).drawText('Residential Lease', { x: 72, y: 720, size: 18, font });
  original = Buffer.from(await doc.save());
  const file = (await request(h.app).post(`/v1/templates/${id}/files`).set(await as()).set('content-type', 'application/pdf').send(original)).body.id;
  const fields = [{ id: 'tenant_signature', role: 'tenant', type: 'signature', page: 1, x: 72, y: 600, width: 200, height: 40 }];
  await request(h.app).put(`/v1/templates/${id}/draft`).set(await as()).send({ file, roles: [{ name: 'tenant', order: 1 }], fields });
}, 60_000);
afterAll(async () => h?.close());

describe('GET /v1/templates/{id}/versions/{version}/document', () => {
  it('gives the draft as uploaded, and with edited=true its fields outlined and labelled', async () => {
    const plain = await document('draft');
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toMatch(/^application\/pdf/);
    expect(Buffer.compare(plain.body as Buffer, original)).toBe(0);
    const edited = await document('draft', '?edited=true');
    expect(edited.status).toBe(200);
    expect(textOf(edited.body as Buffer)).toMatch(/tenant_signature \(signature\)/);
    expect(textOf(plain.body as Buffer)).not.toMatch(/tenant_signature/);
  });

  it('gives a published version its frozen PDF, by number and as latest; 404 for a version that does not exist', async () => {
    expect((await request(h.app).post(`/v1/templates/${id}/publish`).set(await as())).status).toBe(201);
    expect(Buffer.compare((await document('1')).body as Buffer, original)).toBe(0);
    expect(Buffer.compare((await document('latest')).body as Buffer, original)).toBe(0);
    expect((await document('7')).status).toBe(404);
    expect((await document('draft')).status).toBe(404); // consumed by the publish
  });
});
