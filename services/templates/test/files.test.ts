// Template files: PDF inspection (pdf-lib) and word-processor conversion (headless LibreOffice), on real files the
// test builds: PDFs with pdf-lib and qpdf, a DOCX with a table and an image made by LibreOffice from HTML.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { isAppError } from '@sigil/kit/errors';
import { inspectPdf } from '../src/files/pdf-inspect.ts';
import { createOfficeConverter, type OfficeConverter } from '../src/files/office-convert.ts';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const work = mkdtempSync(path.join(tmpdir(), 'template-files-'));
// A 2x2 red PNG.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==';

async function samplePdf(pages: Array<[number, number]>, text = 'Mutual NDA'): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const [width, height] of pages) doc.addPage([width, height]).drawText(text, { x: 50, y: height - 80, size: 18, font });
  return doc.save();
}

/** What a rejected file is: a 400 validation-failed pointing at the body, with a sentence. */
async function refusal(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    if (isAppError(error) && error.status === 400 && error.errors?.[0]?.pointer === '/body') return error.message;
    throw error;
  }
  throw new Error('accepted');
}

function docxWithTableAndImage(name: string, marker: string): Buffer {
  const html = path.join(work, `${name}.html`);
  writeFileSync(
    html,
    `<html><body><h1>${marker}</h1><p>Between the parties below.</p>
     <table border="1"><tr><th>Party</th><th>Role</th></tr><tr><td>Acme Corp</td><td>Discloser</td></tr><tr><td>Globex</td><td>Recipient</td></tr></table>
     <p><img src="data:image/png;base64,${PNG}" width="40" height="40"></p></body></html>`,
  );
  execFileSync('soffice', [`-env:UserInstallation=file://${work}/fixture-profile`, '--headless', '--convert-to', 'docx:MS Word 2007 XML', '--outdir', work, html], { stdio: 'ignore', timeout: 120_000 });
  return readFileSync(path.join(work, `${name}.docx`));
}

const pdfText = (pdf: Uint8Array): string => {
  const file = path.join(work, `out-${Math.random().toString(36).slice(2)}.pdf`);
  writeFileSync(file, pdf);
  return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
};

describe('inspectPdf', () => {
  it('counts pages and their sizes in points', async () => {
    expect(await inspectPdf(await samplePdf([[595.28, 841.89], [612, 792]]), 500)).toEqual({
      pageCount: 2,
      pages: [{ width: 595.28, height: 841.89 }, { width: 612, height: 792 }],
    });
  });

  it('refuses each bad file with its own sentence', async () => {
    expect(await refusal(() => inspectPdf(Buffer.from('hello, not a pdf'), 500))).toMatch(/not a PDF/);
    const good = await samplePdf([[612, 792]]);
    expect(await refusal(() => inspectPdf(good.subarray(0, 200), 500))).toMatch(/corrupt/);
    // Found by the contract fuzz: a header and nothing else parses, then has no page tree to read (was a 500).
    expect(await refusal(() => inspectPdf(Buffer.from('%PDF-1.7\n'), 500))).toMatch(/corrupt/);
    const plain = path.join(work, 'plain.pdf');
    writeFileSync(plain, good);
    execFileSync('qpdf', ['--encrypt', 'user-pw', 'owner-pw', '256', '--', plain, path.join(work, 'locked.pdf')]);
    expect(await refusal(() => inspectPdf(readFileSync(path.join(work, 'locked.pdf')), 500))).toMatch(/encrypted or password-protected/);
    expect(await refusal(async () => inspectPdf(await (await PDFDocument.create()).save({ addDefaultPage: false }), 500))).toMatch(/no pages/);
    expect(await refusal(async () => inspectPdf(await samplePdf([[612, 792], [612, 792], [612, 792]]), 2))).toMatch(/3 pages; at most 2/);
  });
});

describe('the LibreOffice converter', () => {
  let converter: OfficeConverter;
  let docx: Buffer;
  beforeAll(() => {
    converter = createOfficeConverter({ workers: 2, timeoutMs: 120_000 });
    docx = docxWithTableAndImage('agreement', 'Mutual Agreement');
  }, 180_000);
  afterAll(async () => converter?.close());

  it('turns a DOCX with a table and an image into a PDF that keeps the text of both', async () => {
    const pdf = await converter.toPdf(docx, DOCX);
    const facts = await inspectPdf(pdf, 500);
    expect(facts.pageCount).toBe(1);
    const text = pdfText(pdf);
    expect(text).toMatch(/Mutual Agreement/);
    expect(text).toMatch(/Acme Corp\s+Discloser/);
    expect(text).toMatch(/Globex\s+Recipient/);
  }, 120_000);

  it('runs two conversions at once, each on its own profile, and loses neither', async () => {
    const other = docxWithTableAndImage('statement', 'Statement of Work');
    const [a, b] = await Promise.all([converter.toPdf(docx, DOCX), converter.toPdf(other, DOCX)]);
    expect(pdfText(a)).toMatch(/Mutual Agreement/);
    expect(pdfText(b)).toMatch(/Statement of Work/);
  }, 180_000);

  it('refuses a file that is not what its content type says, and one LibreOffice cannot read', async () => {
    expect(await refusal(() => converter.toPdf(Buffer.from('plain text, not a docx'), DOCX))).toMatch(/not a DOCX document/);
    const zip = Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(200, 7)]);
    expect(await refusal(() => converter.toPdf(zip, DOCX))).toMatch(/could not be converted to PDF/);
  }, 120_000);

  it('stops a conversion that takes too long, killing LibreOffice', async () => {
    const workDir = mkdtempSync(path.join(tmpdir(), 'hasty-office-'));
    const hasty = createOfficeConverter({ workers: 1, timeoutMs: 50, workDir });
    try {
      expect(await refusal(() => hasty.toPdf(docx, DOCX))).toMatch(/took longer than 50 ms and was stopped/);
      // Nothing of that conversion runs on: its whole process group was killed.
      const left = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').filter((line) => line.includes(workDir));
      expect(left).toEqual([]);
    } finally {
      await hasty.close();
    }
  }, 60_000);
});
