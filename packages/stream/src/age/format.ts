/** age v1: the format's constants and primitives: HKDF, file-key wrapping, chunk nonces, the header MAC. */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync } from 'node:crypto';

export const VERSION_LINE = 'age-encryption.org/v1';
export const X25519_LABEL = 'age-encryption.org/v1/X25519';
/** Plaintext bytes per STREAM chunk. */
export const AGE_CHUNK_SIZE = 64 * 1024;
export const TAG_SIZE = 16;
/** Ciphertext bytes per full STREAM chunk. */
export const SEALED_CHUNK_SIZE = AGE_CHUNK_SIZE + TAG_SIZE;
export const NONCE_SIZE = 16;
export const FILE_KEY_SIZE = 16;
/** No legitimate header we read comes close: one X25519 stanza is about 110 bytes. */
export const MAX_HEADER_BYTES = 1024 * 1024;

// DER prefixes turning a raw 32-byte X25519 key into PKCS #8 (private) or SPKI (public).
export const PKCS8_X25519_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');
export const SPKI_X25519_PREFIX = Buffer.from('302a300506032b656e032100', 'hex');

export function hkdf(ikm: Uint8Array, salt: Uint8Array, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', ikm, salt, info, 32));
}

export function b64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64').replace(/=+$/, '');
}

/** Strict, canonical, unpadded base64 as the age spec requires. */
export function unb64(s: string, what: string): Buffer {
  if (!/^[A-Za-z0-9+/]*$/.test(s) || s.length % 4 === 1) throw new Error(`age: invalid base64 in ${what}`);
  const bytes = Buffer.from(s, 'base64');
  if (b64(bytes) !== s) throw new Error(`age: non-canonical base64 in ${what}`);
  return bytes;
}

export const ZERO_NONCE = Buffer.alloc(12);

export function sealFileKey(key: Buffer, fileKey: Buffer): Buffer {
  const cipher = createCipheriv('chacha20-poly1305', key, ZERO_NONCE, { authTagLength: TAG_SIZE });
  return Buffer.concat([cipher.update(fileKey), cipher.final(), cipher.getAuthTag()]);
}

export function openFileKey(key: Buffer, body: Buffer): Buffer | undefined {
  const decipher = createDecipheriv('chacha20-poly1305', key, ZERO_NONCE, { authTagLength: TAG_SIZE });
  decipher.setAuthTag(body.subarray(FILE_KEY_SIZE));
  try {
    return Buffer.concat([decipher.update(body.subarray(0, FILE_KEY_SIZE)), decipher.final()]);
  } catch {
    return undefined;
  }
}

export function isAllZero(b: Uint8Array): boolean {
  let acc = 0;
  for (const x of b) acc |= x;
  return acc === 0;
}

export function chunkNonce(counter: number, last: boolean): Buffer {
  const nonce = Buffer.alloc(12);
  // 11-byte big-endian counter: the top 5 bytes stay zero below 2^48 chunks (16 EiB).
  nonce.writeUIntBE(counter, 5, 6);
  nonce[11] = last ? 1 : 0;
  return nonce;
}

export function headerMac(fileKey: Buffer, headerNoMac: Uint8Array): Buffer {
  return createHmac('sha256', hkdf(fileKey, Buffer.alloc(0), 'header')).update(headerNoMac).digest();
}
