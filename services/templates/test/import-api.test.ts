// POST /v1/templates/{id}/import: a DOCX (built here by LibreOffice from HTML) to a sanitized document-mode body.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyPrincipal } from '@sigil/kit/testing';
import { startTemplatesHarness, type TemplatesHarness } from './helpers.ts';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==';
const work = mkdtempSync(path.join(tmpdir(), 'template-import-'));
const org = apiKeyPrincipal();
let h: TemplatesHarness;
let templateId: string;

function docxFrom(name: string, html: string): Buffer {
  writeFileSync(path.join(work, `${name}.html`), `<html><body>${html}</body></html>`);
  execFileSync('soffice', [`-env:UserInstallation=file://${work}/profile`, '--headless', '--convert-to', 'docx:MS Word 2007 XML', '--outdir', work, path.join(work, `${name}.html`)], { stdio: 'ignore', timeout: 120_000 });
  return readFileSync(path.join(work, `${name}.docx`));
}

const importDocx = async (bytes: Buffer, id = templateId) =>
  request(h.app).post(`/v1/templates/${id}/import`).set(await h.auth.headers(org)).set('content-type', DOCX).send(bytes);

beforeAll(async () => {
  h = await startTemplatesHarness('import');
  templateId = (await request(h.app).post('/v1/templates').set(await h.auth.headers(org)).send({ name: 'Imported' })).body.id;
}, 60_000);
afterAll(async () => h?.close());

describe('POST /v1/templates/{id}/import', () => {
  it('keeps headings, paragraphs, lists, tables, emphasis and images, and stores nothing', async () => {
    const docx = docxFrom(
      'agreement',
      `<h1>Services Agreement</h1><p>Between <b>Acme</b> and <i>{{company}}</i>.</p>
       <ul><li>Scope</li><li>Fees</li></ul>
       <table border="1"><tr><td>Party</td><td>Role</td></tr><tr><td>Acme</td><td>Provider</td></tr></table>
       <p><img src="data:image/png;base64,${PNG}" width="20" height="20"></p>`,
    );
    const res = await importDocx(docx);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ object: 'document_import', body: { format: 'html' }, warnings: expect.any(Array) });
    const html: string = res.body.body.content;
    expect(html).toMatch(/<h1>[^<]*Services Agreement<\/h1>/);
    expect(html).toMatch(/<strong>Acme<\/strong>/);
    expect(html).toMatch(/<em>\{\{company\}\}<\/em>/);
    expect(html).toMatch(/<ul><li>Scope<\/li><li>Fees<\/li><\/ul>/);
    expect(html).toMatch(/<table>.*<td><p>Acme<\/p><\/td><td><p>Provider<\/p><\/td>.*<\/table>/s);
    expect(html).toMatch(/<img src="data:image\/png;base64,/);
    expect(res.body.warnings.filter((w: string) => /removed/.test(w))).toEqual([]);
    expect(await h.db.templateFile.count({ where: { templateId } })).toBe(0);
  }, 120_000);

  it('removes what a body must not hold and says so', async () => {
    const docx = docxFrom('links', `<p><a href="javascript:alert(1)">click me</a> and <a href="https://example.com/terms">the terms</a></p>`);
    const res = await importDocx(docx);
    expect(res.status).toBe(200);
    const html: string = res.body.body.content;
    expect(html).not.toMatch(/javascript:/i);
    expect(html).toMatch(/<a href="https:\/\/example.com\/terms">the terms<\/a>/);
    expect(res.body.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/removed/)]));
  }, 120_000);

  it('refuses what is not a DOCX, and an unknown template', async () => {
    const bad = await importDocx(Buffer.from('not a docx'));
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ type: 'https://sigil.dev/problems/validation-failed', errors: [{ pointer: '/body' }] });
    const zipButNot = await importDocx(Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(64)]));
    expect(zipButNot.status).toBe(400);
    expect(zipButNot.body.detail).toMatch(/could not be read/);
    expect((await importDocx(Buffer.from('PK'), 'tpl_000000000000000000000000')).status).toBe(404);
    const wrongType = await request(h.app).post(`/v1/templates/${templateId}/import`).set(await h.auth.headers(org)).set('content-type', 'application/pdf').send(Buffer.from('%PDF-1.7'));
    expect(wrongType.status).toBe(415);
  });
});
