// Values stamped into the document: a typed signature in the handwriting face (embedded, subset), text in Helvetica.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PDFDocument } from 'pdf-lib';
import type { TemplateField } from '@sigil/proto/internal-templates';
import { stampValues } from '../src/render-pdf.ts';

const field = (id: string, type: TemplateField['type'], y: number): TemplateField =>
  ({ id, role: 'client', type, required: true, page: 1, x: 72, y, width: 240, height: 36 }) as TemplateField;

describe('stamping values', () => {
  it('writes a typed signature in Dancing Script, embedded as a subset, and other text in Helvetica', async () => {
    const doc = await PDFDocument.create();
    doc.addPage([612, 792]);
    const stamped = await stampValues(Buffer.from(await doc.save()), [field('sig', 'signature', 100), field('title', 'text', 200)], {
      sig: { kind: 'typed', text: 'Zoë Ångström' },
      title: 'Chief Engineer',
    });
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'stamped-')), 'stamped.pdf');
    writeFileSync(file, stamped);
    const fonts = execFileSync('pdffonts', [file], { encoding: 'utf8' });
    expect(fonts).toMatch(/DancingScript\S*\s+CID TrueType\s+Identity-H\s+yes/);
    // A subset: the whole face is 81 KB.
    expect(stamped.length).toBeLessThan(40_000);
    expect(fonts).toContain('Helvetica');
    const text = execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' });
    expect(text).toContain('Zoë Ångström');
    expect(text).toContain('Chief Engineer');
  });

  it('prints characters the face lacks as "?", never failing the document', async () => {
    const doc = await PDFDocument.create();
    doc.addPage([612, 792]);
    const stamped = await stampValues(Buffer.from(await doc.save()), [field('sig', 'signature', 100)], { sig: { kind: 'typed', text: 'Ada 日本' } });
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'stamped-')), 'stamped.pdf');
    writeFileSync(file, stamped);
    expect(execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' })).toContain('Ada ??');
  });
});
