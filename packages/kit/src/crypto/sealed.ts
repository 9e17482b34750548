import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM boxes for secret values at rest (the catalog's secret store) and in flight (jobs on NATS).
 * Format: base64url of version byte 1 || 12-byte IV || ciphertext || 16-byte tag.
 */
const VERSION = 1;

export function parseSecretsKey(base64: string): Buffer {
  const key = Buffer.from(base64, 'base64');
  if (key.length !== 32) throw new Error('a secrets key must be 32 bytes, base64-encoded');
  return key;
}

export function seal(key: Buffer, plaintext: string, context = ''): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, body, cipher.getAuthTag()]).toString('base64url');
}

export function unseal(key: Buffer, box: string, context = ''): string {
  const bytes = Buffer.from(box, 'base64url');
  if (bytes.length < 29 || bytes[0] !== VERSION) throw new Error('not a sealed value');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(1, 13));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return Buffer.concat([decipher.update(bytes.subarray(13, bytes.length - 16)), decipher.final()]).toString('utf8');
}
