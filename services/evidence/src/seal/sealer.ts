import { createPrivateKey, webcrypto, X509Certificate } from 'node:crypto';
import type * as PdfLibraryModule from '@libpdf/core';
import type { CryptoKeySigner, Signer } from '@libpdf/core';

const PEM_BLOCK = /-----BEGIN ([A-Z ]+)-----([\s\S]+?)-----END \1-----/g;

function pemBlocks(pem: string, label: string): Buffer[] {
  return [...pem.matchAll(PEM_BLOCK)].filter((m) => m[1] === label).map((m) => Buffer.from((m[2] as string).replace(/\s/g, ''), 'base64'));
}

/** Seals PDFs: a PAdES signature (SubFilter ETSI.CAdES.detached, signing-certificate-v2) with the deployment's key. */
export interface Sealer {
  seal(pdf: Buffer, reason: string): Promise<Buffer>;
}

type PdfLibrary = typeof PdfLibraryModule;

/** The sealing identity: a PKCS#8 RSA key (PEM) with its certificate chain (PEM, signing certificate first), or a PKCS#12 file. */
export type SealingKey = { keyPem: string; chainPem: string } | { p12: Uint8Array; password: string };

/** A PEM identity is checked at once (node:crypto), so a bad configuration stops the service at start. */
function checkPem(keyPem: string, chainPem: string): { keyDer: Buffer; certificate: Buffer; chain: Buffer[] } {
  const [keyDer] = pemBlocks(keyPem, 'PRIVATE KEY');
  const [certificate, ...chain] = pemBlocks(chainPem, 'CERTIFICATE');
  if (!keyDer || !certificate) throw new Error('SEAL_KEY_PEM needs a PKCS#8 private key and SEAL_CERT_PEM its certificate');
  const key = createPrivateKey({ key: keyDer, format: 'der', type: 'pkcs8' });
  if (!new X509Certificate(certificate).checkPrivateKey(key)) throw new Error('SEAL_CERT_PEM\'s first certificate is not the certificate of SEAL_KEY_PEM');
  return { keyDer, certificate, chain };
}

async function pemSigner(library: PdfLibrary, pem: ReturnType<typeof checkPem>): Promise<CryptoKeySigner> {
  const key = await webcrypto.subtle.importKey('pkcs8', pem.keyDer, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign']);
  return new library.CryptoKeySigner(key as never, new Uint8Array(pem.certificate), 'RSA', 'RSASSA-PKCS1-v1_5', pem.chain.map((c) => new Uint8Array(c)));
}

/**
 * The PDF library (~30 MiB once loaded, with its CMS stack) is loaded with the first seal, not in every evidence
 * process. A PKCS#12 file is opened then too: a wrong password shows as a failed seal (retried, then `failed`).
 */
export async function createSealer(options: SealingKey & { timestampUrl?: string }): Promise<Sealer> {
  const pem = 'p12' in options ? undefined : checkPem(options.keyPem, options.chainPem);
  let loaded: Promise<{ library: PdfLibrary; signer: Signer }> | undefined;
  const load = () =>
    (loaded ??= (async () => {
      const library = await import('@libpdf/core');
      const signer = 'p12' in options ? await library.P12Signer.create(new Uint8Array(options.p12), options.password) : await pemSigner(library, pem as ReturnType<typeof checkPem>);
      return { library, signer };
    })().catch((error: unknown) => {
      loaded = undefined;
      throw error;
    }));
  return {
    async seal(pdf, reason) {
      const { library, signer } = await load();
      const tsa = options.timestampUrl ? new library.HttpTimestampAuthority(options.timestampUrl, { timeout: 15_000 }) : undefined;
      const document = await library.PDF.load(new Uint8Array(pdf));
      // With a timestamp authority the signature carries an RFC 3161 token over its value: PAdES B-T.
      const { bytes } = await document.sign({ signer, reason, subFilter: 'ETSI.CAdES.detached', ...(tsa ? { level: 'B-T' as const, timestampAuthority: tsa } : {}) });
      return Buffer.from(bytes);
    },
  };
}
