import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { generateSealingIdentity } from '@sigil/kit/sealing-identity';
import { createSealer } from '../src/seal/sealer.ts';
import { buildCertificate } from '../src/seal/certificate.ts';

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

describe('the certificate of completion', () => {
  it('names the document, every signer with when and from where, and the trail\'s head; sealed, it verifies', async () => {
    const certificate = await buildCertificate({
      envelope: {
        id: 'env_0123456789abcdefghijklmn',
        testMode: true,
        template: 'tpl_0123456789abcdefghijklmn',
        createdAt: '2026-11-24T10:00:00.000Z',
        completedAt: '2026-11-24T11:00:00.000Z',
        recipients: [{ id: 'rcp_1', role: 'client', name: 'Zoë Ångström 日本', email: 'zoe@example.com', sentAt: '2026-11-24T10:00:01.000Z', viewedAt: '2026-11-24T10:30:00.000Z', completedAt: '2026-11-24T10:31:00.000Z' }],
      },
      documentSha256: 'a'.repeat(64),
      entries: [{ seq: 1, type: 'recipient.signed', at: '2026-11-24T10:31:00.000Z', actor: { kind: 'recipient', ip: '203.0.113.7', userAgent: 'Firefox/140' }, data: { recipientId: 'rcp_1' }, prevHash: '0'.repeat(64), hash: 'b'.repeat(64) }],
    });
    const sealed = await (await createSealer(await generateSealingIdentity('Test'))).seal(certificate, 'Certificate of completion');
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'certificate-')), 'certificate.pdf');
    writeFileSync(file, sealed);
    expect(execFileSync('pdfsig', [file], { encoding: 'utf8' })).toContain('Signature Validation: Signature is Valid.');
    const text = execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' });
    for (const expected of ['Certificate of completion', 'TEST envelope', 'env_0123456789abcdefghijklmn', 'a'.repeat(64), 'Zoë Ångström ??', 'zoe@example.com', '203.0.113.7', 'Firefox/140', 'b'.repeat(64)]) expect(text).toContain(expected);
  }, 60_000);
});
