// POST /v1/templates/{id}/versions/{version}/render: variables filled in, PREVIEW on every page (TEST for test mode).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument } from 'pdf-lib';
import { apiKeyPrincipal } from '@sigil/kit/testing';
import type { Principal } from '@sigil/kit/auth';
import { startTemplatesHarness, type TemplatesHarness } from './helpers.ts';

const testKey = apiKeyPrincipal();
const liveKey = apiKeyPrincipal({ organizationId: testKey.organizationId, mode: 'live' });
const work = mkdtempSync(path.join(tmpdir(), 'template-render-'));
let h: TemplatesHarness;
let fileTemplate: string;
let bodyTemplate: string;

const binary = (res: request.Response, callback: (error: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => callback(null, Buffer.concat(chunks)));
};
const render = async (id: string, version: string, variables: unknown, who: Principal = testKey, key?: string) =>
  request(h.app).post(`/v1/templates/${id}/versions/${version}/render`).set(await h.auth.headers(who)).set(key ? { 'idempotency-key': key } : {}).send({ variables }).buffer(true).parse(binary);
const textOf = (pdf: Buffer) => {
  const file = path.join(work, `${Math.random().toString(36).slice(2)}.pdf`);
  writeFileSync(file, pdf);
  return execFileSync('pdftotext', ['-raw', file, '-'], { encoding: 'utf8' });
};
/** The diagonal watermark comes out of pdftotext a letter per line: read it with the line breaks taken out. */
const stampsOf = (text: string, word: string) => text.replace(/\s+/g, '').split(word).length - 1;
const pagesOf = async (pdf: Buffer) => (await PDFDocument.load(pdf)).getPageCount();

beforeAll(async () => {
  h = await startTemplatesHarness('render');
  const as = async () => h.auth.headers(testKey);
  fileTemplate = (await request(h.app).post('/v1/templates').set(await as()).send({ name: 'Invoice' })).body.id;
  const doc = await PDFDocument.create();
  for (let i = 0; i < 3; i++) doc.addPage([612, 792]);
  const file = (await request(h.app).post(`/v1/templates/${fileTemplate}/files`).set(await as()).set('content-type', 'application/pdf').send(Buffer.from(await doc.save()))).body.id;
  await request(h.app).put(`/v1/templates/${fileTemplate}/draft`).set(await as()).send({
    file,
    roles: [{ name: 'client', order: 1 }],
    fields: [{ id: 'company_name', role: 'client', type: 'text', page: 2, x: 72, y: 100, width: 300, height: 20, variable: 'company' }],
    variables: [{ name: 'company', required: true }, { name: 'note', required: false }],
  });
  await request(h.app).post(`/v1/templates/${fileTemplate}/publish`).set(await as());

  bodyTemplate = (await request(h.app).post('/v1/templates').set(await as()).send({ name: 'Letter' })).body.id;
  await request(h.app).put(`/v1/templates/${bodyTemplate}/draft`).set(await as()).send({
    body: { format: 'html', content: '<h1>Welcome</h1><p>Dear {{candidate}}, sign here: {{field:sig}}</p>' },
    roles: [{ name: 'client', order: 1 }],
    fields: [{ id: 'sig', role: 'client', type: 'signature' }],
    variables: [{ name: 'candidate', required: true }],
  });
}, 60_000);
afterAll(async () => h?.close());

describe('POST /v1/templates/{id}/versions/{version}/render', () => {
  it('fills a file version\'s variable-bound text field and marks every page PREVIEW and TEST for a test key', async () => {
    const res = await render(fileTemplate, '1', { company: 'Globex <Corp>' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/pdf/);
    const pdf = res.body as Buffer;
    expect(await pagesOf(pdf)).toBe(3);
    const text = textOf(pdf);
    expect(text).toMatch(/Globex <Corp>/);
    expect(stampsOf(text, 'PREVIEW')).toBe(3);
    expect(stampsOf(text, 'TEST')).toBe(3);
  });

  it('marks PREVIEW without TEST for a live key', async () => {
    const text = textOf((await render(fileTemplate, 'latest', { company: 'Initech' }, liveKey)).body as Buffer);
    expect(stampsOf(text, 'PREVIEW')).toBe(3);
    expect(stampsOf(text, 'TEST')).toBe(0);
  });

  it('prints a document-mode draft with its values, escaped', async () => {
    const text = textOf((await render(bodyTemplate, 'draft', { candidate: '<b>Ada</b>' })).body as Buffer);
    expect(text).toMatch(/Dear <b>Ada<\/b>, sign here/);
    expect(text).not.toMatch(/SIGILFIELDMARK/);
    expect(stampsOf(text, 'PREVIEW')).toBe(1);
  }, 60_000);

  it('answers one pointer per missing required or unknown variable', async () => {
    const res = await request(h.app).post(`/v1/templates/${fileTemplate}/versions/1/render`).set(await h.auth.headers(testKey)).send({ variables: { colour: 'red' } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { pointer: '/body/variables/colour', detail: 'is not a variable of this version' },
      { pointer: '/body/variables/company', detail: 'is required' },
    ]);
    // A name is one token of the pointer, escaped (RFC 6901), whatever it holds.
    const odd = await request(h.app).post(`/v1/templates/${fileTemplate}/versions/1/render`).set(await h.auth.headers(testKey)).send({ variables: { company: 'Acme', 'a/b~c': 'x' } });
    expect(odd.body.errors).toEqual([{ pointer: '/body/variables/a~1b~0c', detail: 'is not a variable of this version' }]);
  });

  it('replays an idempotent render with the same bytes', async () => {
    const key = `render-${Date.now()}`;
    const first = await render(fileTemplate, '1', { company: 'Hooli' }, testKey, key);
    const again = await render(fileTemplate, '1', { company: 'Hooli' }, testKey, key);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toMatch(/^application\/pdf/);
    expect(Buffer.compare(first.body as Buffer, again.body as Buffer)).toBe(0);
  });
});
