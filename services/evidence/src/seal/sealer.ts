import { webcrypto } from 'node:crypto';
import { CryptoKeySigner, PDF } from '@libpdf/core';

const PEM_BLOCK = /-----BEGIN ([A-Z ]+)-----([\s\S]+?)-----END \1-----/g;

function pemBlocks(pem: string, label: string): Buffer[] {
  return [...pem.matchAll(PEM_BLOCK)].filter((m) => m[1] === label).map((m) => Buffer.from((m[2] as string).replace(/\s/g, ''), 'base64'));
}

/** Seals PDFs: a PAdES signature (SubFilter ETSI.CAdES.detached, signing-certificate-v2) with the deployment's key. */
export interface Sealer {
  seal(pdf: Buffer, reason: string): Promise<Buffer>;
}

/** From a PKCS#8 RSA key (PEM) and its certificate chain (PEM, signing certificate first). */
export async function createSealer(options: { keyPem: string; chainPem: string }): Promise<Sealer> {
  const [keyDer] = pemBlocks(options.keyPem, 'PRIVATE KEY');
  const [certificate, ...chain] = pemBlocks(options.chainPem, 'CERTIFICATE');
  if (!keyDer || !certificate) throw new Error('SEAL_KEY_PEM needs a PKCS#8 private key and SEAL_CERT_PEM its certificate');
  const key = await webcrypto.subtle.importKey('pkcs8', keyDer, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign']);
  const signer = new CryptoKeySigner(key as never, new Uint8Array(certificate), 'RSA', 'RSASSA-PKCS1-v1_5', chain.map((c) => new Uint8Array(c)));
  return {
    async seal(pdf, reason) {
      const document = await PDF.load(new Uint8Array(pdf));
      const { bytes } = await document.sign({ signer, reason, subFilter: 'ETSI.CAdES.detached' });
      return Buffer.from(bytes);
    },
  };
}
