import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type KeyPair = webcrypto.CryptoKeyPair;

const RSA = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 } as const;

/** A document-sealing identity: the signing key (PKCS#8 PEM) and its certificate chain (PEM: signing certificate first). */
export interface SealingIdentity {
  keyPem: string;
  chainPem: string;
}

/**
 * A self-signed CA and a signing certificate it issued (for document sealing, or with the `timeStamping` extended key
 * usage for a local RFC 3161 timestamp authority) (RSA 2048, SHA-256), for a deployment without a CA of its own:
 * the local stack makes one at first start and keeps it. Seals made with it verify (`pdfsig`) as signatures; trust in
 * the CA is the reader's to give.
 */
export async function generateSealingIdentity(name = 'Sigil local', options: { purpose?: 'sealing' | 'timestamping' } = {}): Promise<SealingIdentity> {
  const timestamping = options.purpose === 'timestamping';
  const now = new Date();
  const years = (n: number) => new Date(now.getTime() + n * 365 * 24 * 3600 * 1000);
  const caKeys = (await webcrypto.subtle.generateKey(RSA, true, ['sign', 'verify'])) as KeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `CN=${name} CA`,
    notBefore: now,
    notAfter: years(10),
    keys: caKeys,
    signingAlgorithm: RSA,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true)],
  });
  const keys = (await webcrypto.subtle.generateKey(RSA, true, ['sign', 'verify'])) as KeyPair;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject: `CN=${name} ${timestamping ? 'timestamping' : 'document sealing'}`,
    issuer: ca.subject,
    notBefore: now,
    notAfter: years(3),
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: RSA,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.nonRepudiation, true),
      // RFC 3161 2.3: a timestamping certificate has exactly this extended key usage, marked critical.
      ...(timestamping ? [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.timeStamping], true)] : []),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64');
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`;
  return { keyPem, chainPem: `${cert.toString('pem')}\n${ca.toString('pem')}\n` };
}
