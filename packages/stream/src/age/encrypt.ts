/** age v1: the encrypting Transform: header with one stanza per recipient, then the STREAM payload. */
import { createCipheriv, diffieHellman, generateKeyPairSync, randomBytes } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { AGE_CHUNK_SIZE, FILE_KEY_SIZE, NONCE_SIZE, SEALED_CHUNK_SIZE, TAG_SIZE, VERSION_LINE, X25519_LABEL, b64, chunkNonce, headerMac, hkdf, isAllZero, sealFileKey } from './format.ts';
import { parseRecipient, rawPublicKey, x25519PublicKey } from './keys.ts';

export function buildHeader(fileKey: Buffer, recipients: Buffer[]): Buffer {
  let text = `${VERSION_LINE}\n`;
  for (const recipient of recipients) {
    const ephemeral = generateKeyPairSync('x25519');
    const share = rawPublicKey(ephemeral.publicKey);
    const secret = diffieHellman({ privateKey: ephemeral.privateKey, publicKey: x25519PublicKey(recipient) });
    if (isAllZero(secret)) throw new Error('age: invalid X25519 recipient (low-order point)');
    const wrapKey = hkdf(secret, Buffer.concat([share, recipient]), X25519_LABEL);
    // The wrapped key is 32 bytes: one body line shorter than 64 columns ends the stanza.
    text += `-> X25519 ${b64(share)}\n${b64(sealFileKey(wrapKey, fileKey))}\n`;
  }
  text += '---';
  const headerNoMac = Buffer.from(text, 'latin1');
  return Buffer.concat([headerNoMac, Buffer.from(` ${b64(headerMac(fileKey, headerNoMac))}\n`, 'latin1')]);
}

/**
 * A Transform writing the binary age v1 encryption of what passes through, to every recipient.
 * Throws when `recipients` is empty or holds anything but X25519 `age1...` recipients.
 */
export async function createAgeEncryptStream(recipients: string[]): Promise<Transform> {
  if (recipients.length === 0) throw new Error('age: at least one recipient is required');
  const keys = recipients.map(parseRecipient);
  const fileKey = randomBytes(FILE_KEY_SIZE);
  const nonce = randomBytes(NONCE_SIZE);
  const prelude = Buffer.concat([buildHeader(fileKey, keys), nonce]);
  const payloadKey = hkdf(fileKey, nonce, 'payload');
  fileKey.fill(0);

  const pending = Buffer.allocUnsafe(AGE_CHUNK_SIZE);
  let pendingLength = 0;
  let counter = 0;
  let started = false;

  // Ciphertext pieces go out as node:crypto returns them (no re-copy into one buffer).
  const seal = (stream: Transform, parts: Buffer[], last: boolean): void => {
    const cipher = createCipheriv('chacha20-poly1305', payloadKey, chunkNonce(counter++, last), { authTagLength: TAG_SIZE });
    for (const part of parts) {
      const out = cipher.update(part);
      if (out.length > 0) stream.push(out);
    }
    cipher.final();
    stream.push(cipher.getAuthTag());
  };
  const start = (stream: Transform): void => {
    if (started) return;
    started = true;
    stream.push(prelude);
  };

  return new Transform({
    writableHighWaterMark: AGE_CHUNK_SIZE,
    readableHighWaterMark: SEALED_CHUNK_SIZE,
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      try {
        start(this);
        let offset = 0;
        // A full chunk is sealed as non-last only once a byte beyond it exists.
        while (pendingLength + (chunk.length - offset) > AGE_CHUNK_SIZE) {
          if (pendingLength > 0) {
            const take = AGE_CHUNK_SIZE - pendingLength;
            seal(this, [pending.subarray(0, pendingLength), chunk.subarray(offset, offset + take)], false);
            offset += take;
            pendingLength = 0;
          } else {
            seal(this, [chunk.subarray(offset, offset + AGE_CHUNK_SIZE)], false);
            offset += AGE_CHUNK_SIZE;
          }
        }
        pendingLength += chunk.copy(pending, pendingLength, offset);
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback: TransformCallback) {
      try {
        start(this);
        seal(this, [pending.subarray(0, pendingLength)], true);
        pendingLength = 0;
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
  });
}
