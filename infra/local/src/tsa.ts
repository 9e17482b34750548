import { createHash, webcrypto } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { generateSealingIdentity, type SealingIdentity } from '@sigil/kit/sealing-identity';

pkijs.setEngine('node', new pkijs.CryptoEngine({ name: 'node', crypto: webcrypto as unknown as pkijs.ICryptoEngine['crypto'] }));

const OID = {
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  signedData: '1.2.840.113549.1.7.2',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  sha256: '2.16.840.1.101.3.4.2.1',
  // A private-use policy: this authority is for local development and tests only.
  policy: '1.3.6.1.4.1.55555.1.1',
};

export interface LocalTsa {
  url: string;
  /** The authority's certificate chain (PEM), for checking its tokens. */
  chainPem: string;
  stop(): Promise<void>;
}

const pemToDer = (pem: string): ArrayBuffer[] =>
  [...pem.matchAll(/-----BEGIN [A-Z ]+-----([\s\S]+?)-----END [A-Z ]+-----/g)].map((m) => new Uint8Array(Buffer.from((m[1] as string).replace(/\s+/g, ''), 'base64')).buffer);

/**
 * A small RFC 3161 timestamp authority over HTTP (`application/timestamp-query` in, `application/timestamp-reply`
 * out), for the local stack and the tests: there is no TSA server package. Tokens are CMS SignedData over a TSTInfo
 * (SHA-256, the request's nonce, signing-certificate-v2), signed by a certificate with the critical timeStamping usage.
 */
export async function startLocalTsa(options: { host?: string; port?: number; identity?: SealingIdentity } = {}): Promise<LocalTsa> {
  const identity = options.identity ?? (await generateSealingIdentity('Sigil local', { purpose: 'timestamping' }));
  const [certificateDer] = pemToDer(identity.chainPem);
  const certificate = pkijs.Certificate.fromBER(certificateDer as ArrayBuffer);
  const key = await webcrypto.subtle.importKey('pkcs8', pemToDer(identity.keyPem)[0] as ArrayBuffer, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign']);
  let serial = Date.now();

  const respond = async (body: Buffer): Promise<Buffer> => {
    const request = pkijs.TimeStampReq.fromBER(new Uint8Array(body).buffer);
    const info = new pkijs.TSTInfo({
      version: 1,
      policy: OID.policy,
      messageImprint: request.messageImprint,
      serialNumber: new asn1js.Integer({ value: serial++ }),
      genTime: new Date(),
      ordering: false,
      ...(request.nonce ? { nonce: request.nonce } : {}),
    });
    const content = info.toSchema().toBER(false);
    const essCertId = new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [new asn1js.OctetString({ valueHex: createHash('sha256').update(new Uint8Array(certificateDer as ArrayBuffer)).digest() })] })] })] });
    // Set after construction: pkijs's constructor would turn the OCTET STRING into a constructed (BER) one, which
    // DER-minded verifiers (pkijs's own among them) refuse.
    const encapContentInfo = new pkijs.EncapsulatedContentInfo({ eContentType: OID.tstInfo });
    encapContentInfo.eContent = new asn1js.OctetString({ valueHex: content });
    const signedData = new pkijs.SignedData({
      version: 3,
      encapContentInfo,
      signerInfos: [
        new pkijs.SignerInfo({
          version: 1,
          sid: new pkijs.IssuerAndSerialNumber({ issuer: certificate.issuer, serialNumber: certificate.serialNumber }),
          signedAttrs: new pkijs.SignedAndUnsignedAttributes({
            type: 0,
            attributes: [
              new pkijs.Attribute({ type: OID.contentType, values: [new asn1js.ObjectIdentifier({ value: OID.tstInfo })] }),
              new pkijs.Attribute({ type: OID.messageDigest, values: [new asn1js.OctetString({ valueHex: createHash('sha256').update(new Uint8Array(content)).digest() })] }),
              new pkijs.Attribute({ type: OID.signingCertificateV2, values: [essCertId] }),
            ],
          }),
        }),
      ],
      certificates: request.certReq ? [certificate] : [],
    });
    await signedData.sign(key, 0, 'SHA-256');
    const token = new pkijs.ContentInfo({ contentType: OID.signedData, content: signedData.toSchema(true) });
    const reply = new pkijs.TimeStampResp({ status: new pkijs.PKIStatusInfo({ status: pkijs.PKIStatus.granted }), timeStampToken: token });
    return Buffer.from(reply.toSchema().toBER(false));
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || !String(req.headers['content-type'] ?? '').startsWith('application/timestamp-query')) {
        res.writeHead(415).end();
        return;
      }
      respond(Buffer.concat(chunks)).then(
        (reply) => res.writeHead(200, { 'content-type': 'application/timestamp-reply', 'content-length': reply.length }).end(reply),
        () => res.writeHead(400).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.address}:${address.port}/tsr`,
    chainPem: identity.chainPem,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
