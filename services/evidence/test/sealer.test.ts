import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { generateSealingIdentity } from '@sigil/kit/sealing-identity';
import { createSealer } from '../src/seal/sealer.ts';

describe('the sealer', () => {
  it('makes a PAdES signature (ETSI.CAdES.detached) over the whole document that pdfsig reports valid', async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    doc.addPage([612, 792]).drawText('Completed agreement', { x: 72, y: 720, size: 16, font });
    const sealer = await createSealer(await generateSealingIdentity('Test'));
    const sealed = await sealer.seal(Buffer.from(await doc.save()), 'Sealed by Sigil');
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sealed-')), 'sealed.pdf');
    writeFileSync(file, sealed);
    const report = execFileSync('pdfsig', [file], { encoding: 'utf8' });
    expect(report).toContain('Signature Type: ETSI.CAdES.detached');
    expect(report).toContain('Signature Validation: Signature is Valid.');
    expect(report).toContain('Total document signed');
    expect(report).toContain('Signer Certificate Common Name: Test document sealing');
  }, 60_000);
});
