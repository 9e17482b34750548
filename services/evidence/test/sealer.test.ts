import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';

// jsqr is CommonJS with `export default`: under Node's ESM the function is the module's `default`.
const jsQR = jsQRModule.default;
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { generateSealingIdentity } from '@sigil/kit/sealing-identity';
import { createSealer } from '../src/seal/sealer.ts';
import { buildCertificate } from '../src/seal/certificate.ts';
import { createHash, webcrypto } from 'node:crypto';
import * as pkijs from 'pkijs';
import { startLocalTsa } from '@sigil/local-stack/tsa';

/** The CMS SignedData of a PDF's last signature (its /Contents). */
function lastSignature(pdf: Buffer): pkijs.SignedData {
  const contents = [...pdf.toString('latin1').matchAll(/\/Contents\s*<([0-9A-Fa-f]+)>/g)].at(-1)![1]!;
  const der = Buffer.from(contents.replace(/(00)+$/, ''), 'hex');
  return new pkijs.SignedData({ schema: pkijs.ContentInfo.fromBER(new Uint8Array(der).buffer).content });
}

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

describe('a sealing identity from a PKCS#12 file', () => {
  it('seals as well as the PEM pair does', async () => {
    const identity = await generateSealingIdentity('P12 Test');
    const dir = mkdtempSync(path.join(tmpdir(), 'p12-'));
    writeFileSync(path.join(dir, 'key.pem'), identity.keyPem);
    writeFileSync(path.join(dir, 'chain.pem'), identity.chainPem);
    execFileSync('openssl', ['pkcs12', '-export', '-inkey', path.join(dir, 'key.pem'), '-in', path.join(dir, 'chain.pem'), '-out', path.join(dir, 'seal.p12'), '-passout', 'pass:s3cret']);
    const doc = await PDFDocument.create();
    doc.addPage([612, 792]);
    const sealer = await createSealer({ p12: readFileSync(path.join(dir, 'seal.p12')), password: 's3cret' });
    writeFileSync(path.join(dir, 'sealed.pdf'), await sealer.seal(Buffer.from(await doc.save()), 'Sealed by Sigil'));
    const report = execFileSync('pdfsig', [path.join(dir, 'sealed.pdf')], { encoding: 'utf8' });
    expect(report).toContain('Signature Validation: Signature is Valid.');
    expect(report).toContain('Signer Certificate Common Name: P12 Test document sealing');
    // A wrong password shows when sealing (the library is loaded with the first seal); a bad PEM pair at once.
    await expect((await createSealer({ p12: readFileSync(path.join(dir, 'seal.p12')), password: 'wrong' })).seal(Buffer.from(await doc.save()), 'x')).rejects.toThrow();
    const other = await generateSealingIdentity('Other');
    await expect(createSealer({ keyPem: other.keyPem, chainPem: identity.chainPem })).rejects.toThrow(/not the certificate/);
  }, 60_000);
});

describe('a seal with a timestamp authority (PAdES B-T)', () => {
  it('carries an RFC 3161 token over the signature value, from the local TSA, and pdfsig still reports it valid', async () => {
    const tsa = await startLocalTsa();
    try {
      const doc = await PDFDocument.create();
      doc.addPage([612, 792]);
      const sealer = await createSealer({ ...(await generateSealingIdentity('Test')), timestampUrl: tsa.url });
      const sealed = await sealer.seal(Buffer.from(await doc.save()), 'Sealed by Sigil');
      const file = path.join(mkdtempSync(path.join(tmpdir(), 'sealed-bt-')), 'sealed.pdf');
      writeFileSync(file, sealed);
      const report = execFileSync('pdfsig', [file], { encoding: 'utf8' });
      expect(report).toContain('Signature Validation: Signature is Valid.');

      const signerInfo = lastSignature(sealed).signerInfos[0]!;
      const attribute = signerInfo.unsignedAttrs?.attributes.find((a) => a.type === '1.2.840.113549.1.9.16.2.14');
      expect(attribute, 'the signature has a timeStampToken').toBeDefined();
      pkijs.setEngine('node', new pkijs.CryptoEngine({ name: 'node', crypto: webcrypto as unknown as pkijs.ICryptoEngine['crypto'] }));
      const token = new pkijs.SignedData({ schema: new pkijs.ContentInfo({ schema: attribute!.values[0] }).content });
      const info = pkijs.TSTInfo.fromBER(token.encapContentInfo.eContent!.getValue());
      expect(Buffer.from(info.messageImprint.hashedMessage.valueBlock.valueHexView).toString('hex')).toBe(createHash('sha256').update(signerInfo.signature.valueBlock.valueHexView).digest('hex'));
      expect(Math.abs(info.genTime.getTime() - Date.now())).toBeLessThan(60_000);
      expect(await token.verify({ signer: 0, checkChain: false, data: signerInfo.signature.valueBlock.valueHexView.slice().buffer })).toBe(true);
    } finally {
      await tsa.stop();
    }
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
      sealedSha256: 'c'.repeat(64),
      verifyUrl: `https://sigil.example/verify#sha256=${'c'.repeat(64)}`,
      entries: [{ seq: 1, type: 'recipient.signed', at: '2026-11-24T10:31:00.000Z', actor: { kind: 'recipient', ip: '203.0.113.7', userAgent: 'Firefox/140' }, data: { recipientId: 'rcp_1' }, prevHash: '0'.repeat(64), hash: 'b'.repeat(64) }],
    });
    const sealed = await (await createSealer(await generateSealingIdentity('Test'))).seal(certificate, 'Certificate of completion');
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'certificate-')), 'certificate.pdf');
    writeFileSync(file, sealed);
    expect(execFileSync('pdfsig', [file], { encoding: 'utf8' })).toContain('Signature Validation: Signature is Valid.');
    const text = execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' });
    for (const expected of ['Certificate of completion', 'TEST envelope', 'env_0123456789abcdefghijklmn', 'a'.repeat(64), 'c'.repeat(64), 'Zoë Ångström ??', 'zoe@example.com', '203.0.113.7', 'Firefox/140', 'b'.repeat(64), 'npx sigil-verify']) expect(text).toContain(expected);
    // The QR code, read back from the rendered page, is the verification link.
    execFileSync('pdftoppm', ['-r', '150', '-png', '-f', '1', '-l', '1', '-singlefile', file, file.replace(/\.pdf$/, '')]);
    const png = PNG.sync.read(readFileSync(file.replace(/\.pdf$/, '.png')));
    expect(jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data).toBe(`https://sigil.example/verify#sha256=${'c'.repeat(64)}`);
  }, 60_000);
});
