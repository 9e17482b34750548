/** age v1: X25519 identities and recipients in bech32 (`AGE-SECRET-KEY-1...`, `age1...`). */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { PKCS8_X25519_PREFIX, SPKI_X25519_PREFIX } from './format.ts';

export const BECH32_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
export const BECH32_GENERATORS = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];

export function bech32Polymod(values: number[]): number {
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= BECH32_GENERATORS[i]!;
  }
  return chk >>> 0;
}

export function bech32HrpExpand(hrp: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < hrp.length; i++) out.push(hrp.charCodeAt(i) >> 5);
  out.push(0);
  for (let i = 0; i < hrp.length; i++) out.push(hrp.charCodeAt(i) & 31);
  return out;
}

export function convertBits(data: ArrayLike<number>, from: number, to: number, pad: boolean): number[] | undefined {
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

export function bech32Encode(hrp: string, bytes: Uint8Array): string {
  const words = convertBits(bytes, 8, 5, true)!;
  const values = [...bech32HrpExpand(hrp), ...words, 0, 0, 0, 0, 0, 0];
  const mod = bech32Polymod(values) ^ 1;
  let out = `${hrp}1`;
  for (const w of words) out += BECH32_CHARSET[w];
  for (let i = 0; i < 6; i++) out += BECH32_CHARSET[(mod >>> (5 * (5 - i))) & 31];
  return out;
}

/** Lower-cased HRP and data bytes, or undefined when `s` is not valid bech32. */
export function bech32Decode(s: string): { hrp: string; bytes: Buffer } | undefined {
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

export function x25519PrivateKey(scalar: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_X25519_PREFIX, scalar]), format: 'der', type: 'pkcs8' });
}

export function x25519PublicKey(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_X25519_PREFIX, raw]), format: 'der', type: 'spki' });
}

export function rawPublicKey(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  if (typeof jwk.x !== 'string') throw new Error('age: cannot export an X25519 public key');
  return Buffer.from(jwk.x, 'base64url');
}

export function parseRecipient(s: string): Buffer {
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

export interface ParsedIdentity {
  privateKey: KeyObject;
  publicKey: Buffer;
}

/**
 * Parses the text of an identity file: `#` comments, blank lines and `AGE-SECRET-KEY-1...` lines.
 * Error messages name the line number, never the line (it may be a secret).
 */
export function parseIdentities(text: string): ParsedIdentity[] {
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
