/** age v1: the decrypting Transform: header parsed and authenticated, file key unwrapped, STREAM payload opened. */
import { createDecipheriv, diffieHellman, timingSafeEqual } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { AGE_CHUNK_SIZE, MAX_HEADER_BYTES, NONCE_SIZE, SEALED_CHUNK_SIZE, TAG_SIZE, VERSION_LINE, X25519_LABEL, chunkNonce, headerMac, hkdf, isAllZero, openFileKey, unb64 } from './format.ts';
import type { ParsedIdentity} from './keys.ts';
import { parseIdentities, x25519PublicKey } from './keys.ts';

export interface Stanza {
  args: string[];
  body: Buffer;
}

export interface ParsedHeader {
  stanzas: Stanza[];
  headerNoMac: Buffer;
  mac: Buffer;
  /** Bytes of the header, MAC line included. */
  length: number;
}

/** Parses a complete header from `buf` or returns undefined when more bytes are needed. */
export function parseHeader(buf: Buffer): ParsedHeader | undefined {
  const prefix = `${VERSION_LINE}\n`;
  const seen = buf.subarray(0, prefix.length).toString('latin1');
  if (!prefix.startsWith(seen)) {
    if (seen.startsWith('-----BEGIN AGE')) throw new Error('age: armored (PEM) age files are not supported');
    throw new Error('age: not an age v1 file (bad header)');
  }
  const macAt = buf.indexOf('\n--- ', 0, 'latin1');
  const end = macAt < 0 ? -1 : buf.indexOf(0x0a, macAt + 5);
  if (end < 0) {
    if (buf.length > MAX_HEADER_BYTES) throw new Error('age: header too large');
    return undefined;
  }
  const lines = buf.subarray(0, macAt).toString('latin1').split('\n');
  if (lines[0] !== VERSION_LINE) throw new Error('age: not an age v1 file (bad version line)');
  const stanzas: Stanza[] = [];
  let i = 1;
  while (i < lines.length) {
    const line = lines[i++]!;
    if (!line.startsWith('-> ')) throw new Error('age: invalid header (malformed stanza)');
    const args = line.slice(3).split(' ');
    if (args.some((a) => a.length === 0 || /[^\x21-\x7e]/.test(a))) throw new Error('age: invalid header (malformed stanza arguments)');
    const parts: Buffer[] = [];
    for (;;) {
      if (i >= lines.length) throw new Error('age: invalid header (unterminated stanza)');
      const bodyLine = lines[i++]!;
      if (bodyLine.length > 64) throw new Error('age: invalid header (stanza line too long)');
      parts.push(unb64(bodyLine, 'a stanza body'));
      if (bodyLine.length < 64) break;
    }
    stanzas.push({ args, body: Buffer.concat(parts) });
  }
  const mac = unb64(buf.subarray(macAt + 5, end).toString('latin1'), 'the header MAC');
  if (mac.length !== 32) throw new Error('age: invalid header MAC');
  return { stanzas, headerNoMac: Buffer.from(buf.subarray(0, macAt + 4)), mac, length: end + 1 };
}

export function unwrapFileKey(stanzas: Stanza[], identities: ParsedIdentity[]): Buffer {
  for (const stanza of stanzas) {
    if (stanza.args[0] !== 'X25519') continue;
    if (stanza.args.length !== 2) throw new Error('age: invalid X25519 stanza');
    const share = unb64(stanza.args[1]!, 'an X25519 stanza');
    if (share.length !== 32 || stanza.body.length !== 32) throw new Error('age: invalid X25519 stanza');
    const sharePublic = x25519PublicKey(share);
    for (const identity of identities) {
      let secret: Buffer;
      try {
        secret = diffieHellman({ privateKey: identity.privateKey, publicKey: sharePublic });
      } catch {
        throw new Error('age: invalid X25519 stanza (low-order point)');
      }
      if (isAllZero(secret)) throw new Error('age: invalid X25519 stanza (low-order point)');
      const wrapKey = hkdf(secret, Buffer.concat([share, identity.publicKey]), X25519_LABEL);
      const fileKey = openFileKey(wrapKey, stanza.body);
      if (fileKey) return fileKey;
    }
  }
  const kinds = [...new Set(stanzas.map((s) => s.args[0]))].join(', ');
  throw new Error(`age: no identity matches any of the recipients (the file has ${stanzas.length} ${kinds || 'no'} stanza${stanzas.length === 1 ? '' : 's'})`);
}

/**
 * A Transform decrypting a binary age v1 file with any of the X25519 identities in `identities`
 * (the text of an identity file). Plaintext leaves only after its chunk authenticated. Errors:
 * `no identity matches`, a header MAC mismatch, a chunk failing authentication (corruption or
 * tampering), truncation (`missing final chunk`), trailing data after the final chunk.
 */
export function createAgeDecryptStream(identities: string): Transform {
  const keys = parseIdentities(identities);
  let state: 'header' | 'nonce' | 'payload' = 'header';
  let head: Buffer = Buffer.alloc(0);
  let fileKey: Buffer | undefined;
  let payloadKey: Buffer | undefined;
  let counter = 0;
  const pending = Buffer.allocUnsafe(SEALED_CHUNK_SIZE);
  let pendingLength = 0;

  const open = (parts: Buffer[], length: number, last: boolean): Buffer[] => {
    const decipher = createDecipheriv('chacha20-poly1305', payloadKey!, chunkNonce(counter, last), { authTagLength: TAG_SIZE });
    // The tag is the last 16 bytes of the parts; feed everything before it.
    const tag = Buffer.allocUnsafe(TAG_SIZE);
    const out: Buffer[] = [];
    let seen = 0;
    for (const part of parts) {
      const dataEnd = Math.min(part.length, Math.max(0, length - TAG_SIZE - seen));
      if (dataEnd > 0) out.push(decipher.update(part.subarray(0, dataEnd)));
      if (dataEnd < part.length) part.copy(tag, seen + dataEnd - (length - TAG_SIZE), dataEnd);
      seen += part.length;
    }
    decipher.setAuthTag(tag);
    decipher.final();
    return out;
  };
  const tryOpen = (parts: Buffer[], length: number, last: boolean): Buffer[] | undefined => {
    try {
      return open(parts, length, last);
    } catch {
      return undefined;
    }
  };
  /** Pushes the plaintext of one chunk once it authenticated. */
  const openChunk = (stream: Transform, parts: Buffer[], length: number, last: boolean): void => {
    const plain = tryOpen(parts, length, last);
    if (plain) {
      if (last && length === TAG_SIZE && counter > 0) throw new Error('age: invalid empty final chunk');
      counter++;
      for (const piece of plain) if (piece.length > 0) stream.push(piece);
      return;
    }
    if (last && length === SEALED_CHUNK_SIZE && tryOpen(parts, length, false)) {
      throw new Error('age: truncated file: missing final chunk');
    }
    if (!last && tryOpen(parts, length, true)) throw new Error('age: trailing data after the final chunk');
    throw new Error(`age: payload chunk ${counter} failed authentication (the file is corrupted or was tampered with)`);
  };

  const feedPayload = (stream: Transform, chunk: Buffer): void => {
    let offset = 0;
    while (pendingLength + (chunk.length - offset) > SEALED_CHUNK_SIZE) {
      if (pendingLength > 0) {
        const take = SEALED_CHUNK_SIZE - pendingLength;
        openChunk(stream, [pending.subarray(0, pendingLength), chunk.subarray(offset, offset + take)], SEALED_CHUNK_SIZE, false);
        offset += take;
        pendingLength = 0;
      } else {
        openChunk(stream, [chunk.subarray(offset, offset + SEALED_CHUNK_SIZE)], SEALED_CHUNK_SIZE, false);
        offset += SEALED_CHUNK_SIZE;
      }
    }
    pendingLength += chunk.copy(pending, pendingLength, offset);
  };

  return new Transform({
    writableHighWaterMark: SEALED_CHUNK_SIZE,
    readableHighWaterMark: AGE_CHUNK_SIZE,
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      try {
        if (state === 'payload') {
          feedPayload(this, chunk);
          return callback();
        }
        head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
        if (state === 'header') {
          const header = parseHeader(head);
          if (!header) return callback();
          fileKey = unwrapFileKey(header.stanzas, keys);
          if (!timingSafeEqual(headerMac(fileKey, header.headerNoMac), header.mac)) {
            throw new Error('age: header MAC mismatch (the header was tampered with or the file is corrupted)');
          }
          head = head.subarray(header.length);
          state = 'nonce';
        }
        if (head.length < NONCE_SIZE) return callback();
        payloadKey = hkdf(fileKey!, head.subarray(0, NONCE_SIZE), 'payload');
        fileKey!.fill(0);
        state = 'payload';
        const rest = Buffer.from(head.subarray(NONCE_SIZE));
        head = Buffer.alloc(0);
        feedPayload(this, rest);
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback: TransformCallback) {
      try {
        if (state === 'header') throw new Error(head.length === 0 ? 'age: empty input (not an age file)' : 'age: truncated header');
        if (state === 'nonce') throw new Error('age: truncated file: missing payload nonce');
        if (pendingLength === 0) throw new Error(counter === 0 ? 'age: truncated file: no payload' : 'age: truncated file: missing final chunk');
        if (pendingLength < TAG_SIZE) throw new Error('age: truncated file: incomplete chunk');
        openChunk(this, [pending.subarray(0, pendingLength)], pendingLength, true);
        pendingLength = 0;
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
  });
}
