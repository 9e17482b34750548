/**
 * Streaming age v1 (https://age-encryption.org/v1) on node:crypto.
 *
 * The pure-JS `age-encryption` package runs at about 100 MB/s; ChaCha20-Poly1305 in node:crypto
 * (OpenSSL) is more than ten times faster. This module writes and reads the binary (not armored)
 * format with X25519 recipients only:
 *
 *   header   "age-encryption.org/v1\n", one "-> X25519 <share>\n<wrapped file key>\n" stanza per
 *            recipient, "--- <HMAC-SHA256(HKDF(file key, '', 'header'), header up to '---')>\n"
 *   nonce    16 random bytes
 *   payload  STREAM: 64 KiB plaintext chunks, ChaCha20-Poly1305 under
 *            HKDF-SHA256(ikm = file key, salt = nonce, info = 'payload'); the 12-byte chunk nonce is
 *            an 11-byte big-endian counter and a last-chunk flag byte. The last chunk may be full or
 *            partial, and is empty only when the whole plaintext is.
 *
 * Byte compatibility with the `age` CLI (both directions) and with the `age-encryption` package is
 * proven by services/mover/test/age.test.ts. Memory: each direction holds at most one chunk besides
 * the input buffer it is working on.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
  type KeyObject,
} from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

const VERSION_LINE = 'age-encryption.org/v1';
const X25519_LABEL = 'age-encryption.org/v1/X25519';
/** Plaintext bytes per STREAM chunk. */
export const AGE_CHUNK_SIZE = 64 * 1024;
const TAG_SIZE = 16;
/** Ciphertext bytes per full STREAM chunk. */
const SEALED_CHUNK_SIZE = AGE_CHUNK_SIZE + TAG_SIZE;
const NONCE_SIZE = 16;
const FILE_KEY_SIZE = 16;
/** No legitimate header we read comes close: one X25519 stanza is about 110 bytes. */
const MAX_HEADER_BYTES = 1024 * 1024;

// DER prefixes turning a raw 32-byte X25519 key into PKCS #8 (private) or SPKI (public).
const PKCS8_X25519_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');
const SPKI_X25519_PREFIX = Buffer.from('302a300506032b656e032100', 'hex');

// ---------------------------------------------------------------------------------------------
// bech32 (BIP 173), as age uses it for keys, without the 90-character limit.

const BECH32_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const BECH32_GENERATORS = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];

function bech32Polymod(values: number[]): number {
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= BECH32_GENERATORS[i]!;
  }
  return chk >>> 0;
}

function bech32HrpExpand(hrp: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < hrp.length; i++) out.push(hrp.charCodeAt(i) >> 5);
  out.push(0);
  for (let i = 0; i < hrp.length; i++) out.push(hrp.charCodeAt(i) & 31);
  return out;
}

function convertBits(data: ArrayLike<number>, from: number, to: number, pad: boolean): number[] | undefined {
  let acc = 0;
  let bits = 0;
  const out: number[] = [];
  const maxv = (1 << to) - 1;
  for (let i = 0; i < data.length; i++) {
    const value = data[i]!;
    if (value < 0 || value >> from !== 0) return undefined;
    acc = (acc << from) | value;
    bits += from;
    while (bits >= to) {
      bits -= to;
      out.push((acc >> bits) & maxv);
    }
  }
  if (pad) {
    if (bits > 0) out.push((acc << (to - bits)) & maxv);
  } else if (bits >= from || ((acc << (to - bits)) & maxv) !== 0) {
    return undefined;
  }
  return out;
}

function bech32Encode(hrp: string, bytes: Uint8Array): string {
  const words = convertBits(bytes, 8, 5, true)!;
  const values = [...bech32HrpExpand(hrp), ...words, 0, 0, 0, 0, 0, 0];
  const mod = bech32Polymod(values) ^ 1;
  let out = `${hrp}1`;
  for (const w of words) out += BECH32_CHARSET[w];
  for (let i = 0; i < 6; i++) out += BECH32_CHARSET[(mod >>> (5 * (5 - i))) & 31];
  return out;
}

/** Lower-cased HRP and data bytes, or undefined when `s` is not valid bech32. */
function bech32Decode(s: string): { hrp: string; bytes: Buffer } | undefined {
  if (s !== s.toLowerCase() && s !== s.toUpperCase()) return undefined;
  const lower = s.toLowerCase();
  const sep = lower.lastIndexOf('1');
  if (sep < 1 || sep + 7 > lower.length) return undefined;
  const hrp = lower.slice(0, sep);
  for (let i = 0; i < hrp.length; i++) {
    const c = hrp.charCodeAt(i);
    if (c < 33 || c > 126) return undefined;
  }
  const data: number[] = [];
  for (const ch of lower.slice(sep + 1)) {
    const v = BECH32_CHARSET.indexOf(ch);
    if (v < 0) return undefined;
    data.push(v);
  }
  if (bech32Polymod([...bech32HrpExpand(hrp), ...data]) !== 1) return undefined;
  const bytes = convertBits(data.slice(0, -6), 5, 8, false);
  return bytes ? { hrp, bytes: Buffer.from(bytes) } : undefined;
}

// ---------------------------------------------------------------------------------------------
// Keys

function x25519PrivateKey(scalar: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_X25519_PREFIX, scalar]), format: 'der', type: 'pkcs8' });
}

function x25519PublicKey(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_X25519_PREFIX, raw]), format: 'der', type: 'spki' });
}

function rawPublicKey(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  if (typeof jwk.x !== 'string') throw new Error('age: cannot export an X25519 public key');
  return Buffer.from(jwk.x, 'base64url');
}

function parseRecipient(s: string): Buffer {
  const decoded = s.startsWith('age1') ? bech32Decode(s) : undefined;
  if (!decoded || decoded.hrp !== 'age' || decoded.bytes.length !== 32) {
    throw new Error(`age: invalid recipient ${JSON.stringify(s.slice(0, 80))} (only X25519 age1... recipients are supported)`);
  }
  return decoded.bytes;
}

/** True for an X25519 age recipient (`age1...`), the only kind this module encrypts to. */
export function isAgeRecipient(s: unknown): s is string {
  if (typeof s !== 'string' || !s.startsWith('age1')) return false;
  const decoded = bech32Decode(s);
  return decoded !== undefined && decoded.hrp === 'age' && decoded.bytes.length === 32;
}

interface ParsedIdentity {
  privateKey: KeyObject;
  publicKey: Buffer;
}

/**
 * Parses the text of an identity file: `#` comments, blank lines and `AGE-SECRET-KEY-1...` lines.
 * Error messages name the line number, never the line (it may be a secret).
 */
function parseIdentities(text: string): ParsedIdentity[] {
  const identities: ParsedIdentity[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('AGE-PLUGIN-') || line.startsWith('AGE-SECRET-KEY-PQ-')) {
      throw new Error(`age: identity on line ${i + 1} is of an unsupported kind (only X25519 AGE-SECRET-KEY-1... identities are)`);
    }
    const decoded = line.startsWith('AGE-SECRET-KEY-1') ? bech32Decode(line) : undefined;
    if (!decoded || decoded.hrp !== 'age-secret-key-' || decoded.bytes.length !== 32) {
      throw new Error(`age: line ${i + 1} of the identity file is not an AGE-SECRET-KEY-1... identity`);
    }
    const privateKey = x25519PrivateKey(decoded.bytes);
    identities.push({ privateKey, publicKey: rawPublicKey(createPublicKey(privateKey)) });
  }
  if (identities.length === 0) throw new Error('age: the identity file holds no identity');
  return identities;
}

/** A fresh X25519 identity (`AGE-SECRET-KEY-1...`) and its recipient (`age1...`). */
export async function generateAgeIdentity(): Promise<{ identity: string; recipient: string }> {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  const d = privateKey.export({ format: 'jwk' }).d;
  if (typeof d !== 'string') throw new Error('age: cannot export an X25519 private key');
  return {
    identity: bech32Encode('age-secret-key-', Buffer.from(d, 'base64url')).toUpperCase(),
    recipient: bech32Encode('age', rawPublicKey(publicKey)),
  };
}

/** The recipient of an `AGE-SECRET-KEY-1...` identity (like `age-keygen -y`). */
export function ageIdentityToRecipient(identity: string): string {
  const [parsed] = parseIdentities(identity);
  return bech32Encode('age', parsed!.publicKey);
}

// ---------------------------------------------------------------------------------------------
// Primitives

function hkdf(ikm: Uint8Array, salt: Uint8Array, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', ikm, salt, info, 32));
}

function b64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64').replace(/=+$/, '');
}

/** Strict, canonical, unpadded base64 as the age spec requires. */
function unb64(s: string, what: string): Buffer {
  if (!/^[A-Za-z0-9+/]*$/.test(s) || s.length % 4 === 1) throw new Error(`age: invalid base64 in ${what}`);
  const bytes = Buffer.from(s, 'base64');
  if (b64(bytes) !== s) throw new Error(`age: non-canonical base64 in ${what}`);
  return bytes;
}

const ZERO_NONCE = Buffer.alloc(12);

function sealFileKey(key: Buffer, fileKey: Buffer): Buffer {
  const cipher = createCipheriv('chacha20-poly1305', key, ZERO_NONCE, { authTagLength: TAG_SIZE });
  return Buffer.concat([cipher.update(fileKey), cipher.final(), cipher.getAuthTag()]);
}

function openFileKey(key: Buffer, body: Buffer): Buffer | undefined {
  const decipher = createDecipheriv('chacha20-poly1305', key, ZERO_NONCE, { authTagLength: TAG_SIZE });
  decipher.setAuthTag(body.subarray(FILE_KEY_SIZE));
  try {
    return Buffer.concat([decipher.update(body.subarray(0, FILE_KEY_SIZE)), decipher.final()]);
  } catch {
    return undefined;
  }
}

function isAllZero(b: Uint8Array): boolean {
  let acc = 0;
  for (const x of b) acc |= x;
  return acc === 0;
}

function chunkNonce(counter: number, last: boolean): Buffer {
  const nonce = Buffer.alloc(12);
  // 11-byte big-endian counter: the top 5 bytes stay zero below 2^48 chunks (16 EiB).
  nonce.writeUIntBE(counter, 5, 6);
  nonce[11] = last ? 1 : 0;
  return nonce;
}

function headerMac(fileKey: Buffer, headerNoMac: Uint8Array): Buffer {
  return createHmac('sha256', hkdf(fileKey, Buffer.alloc(0), 'header')).update(headerNoMac).digest();
}

// ---------------------------------------------------------------------------------------------
// Encryption

function buildHeader(fileKey: Buffer, recipients: Buffer[]): Buffer {
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

// ---------------------------------------------------------------------------------------------
// Decryption

interface Stanza {
  args: string[];
  body: Buffer;
}

interface ParsedHeader {
  stanzas: Stanza[];
  headerNoMac: Buffer;
  mac: Buffer;
  /** Bytes of the header, MAC line included. */
  length: number;
}

/** Parses a complete header from `buf` or returns undefined when more bytes are needed. */
function parseHeader(buf: Buffer): ParsedHeader | undefined {
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

function unwrapFileKey(stanzas: Stanza[], identities: ParsedIdentity[]): Buffer {
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
