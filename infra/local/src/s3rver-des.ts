import crypto, { type BinaryLike, type CipherKey } from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';

/**
 * s3rver makes its ListObjectsV2 continuation tokens with single DES (`des`, CBC), which OpenSSL 3 (Node >= 17) keeps
 * only in its legacy provider: without this, any listing longer than one page (1,000 keys) answers 500. Triple DES
 * with its three keys equal is single DES, bit for bit, and `des-ede3-cbc` is in OpenSSL's default provider; so `des`
 * with an 8-byte key is served as `des-ede3-cbc` with that key three times. Tokens stay exactly what s3rver made them.
 * Nothing else in the process asks for `des`.
 */
let installed = false;

export function installS3rverDesShim(): void {
  if (installed) return;
  installed = true;
  const createCipheriv = crypto.createCipheriv;
  const createDecipheriv = crypto.createDecipheriv;
  const tripled = (key: CipherKey): CipherKey => {
    const bytes = Buffer.isBuffer(key) ? key : undefined;
    return bytes?.length === 8 ? Buffer.concat([bytes, bytes, bytes]) : key;
  };
  const isSingleDes = (algorithm: string) => algorithm.toLowerCase() === 'des' || algorithm.toLowerCase() === 'des-cbc';
  crypto.createCipheriv = ((algorithm: string, key: CipherKey, iv: BinaryLike | null, options?: never) =>
    isSingleDes(algorithm) ? createCipheriv('des-ede3-cbc', tripled(key), iv, options) : createCipheriv(algorithm, key, iv, options)) as typeof crypto.createCipheriv;
  crypto.createDecipheriv = ((algorithm: string, key: CipherKey, iv: BinaryLike | null, options?: never) =>
    isSingleDes(algorithm) ? createDecipheriv('des-ede3-cbc', tripled(key), iv, options) : createDecipheriv(algorithm, key, iv, options)) as typeof crypto.createDecipheriv;
  syncBuiltinESMExports();
}
