import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';

/**
 * C2SP signed notes (https://c2sp.org/signed-note) with Ed25519 keys, as Go's golang.org/x/mod/sumdb/note writes them:
 * a text of lines ending in `\n`, a blank line, then one line per signature: `— <key name> <base64(key id || signature)>`.
 * A key id is the first four bytes of SHA-256(name || "\n" || 0x01 || public key).
 */
const ALG_ED25519 = 0x01;
const SIGNATURE_PREFIX = '\u2014 ';
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');

export interface NoteSigner {
  name: string;
  keyId: Buffer;
  publicKey: Buffer;
  verifierKey: string;
  sign(message: Buffer): Buffer;
}

export interface NoteVerifier {
  name: string;
  keyId: Buffer;
  publicKey: Buffer;
  verify(message: Buffer, signature: Buffer): boolean;
}

export function keyId(name: string, publicKey: Buffer): Buffer {
  return createHash('sha256').update(`${name}\n`).update(Buffer.of(ALG_ED25519)).update(publicKey).digest().subarray(0, 4);
}

function checkName(name: string): void {
  if (!name || /[\s+]/u.test(name)) throw new Error(`a key name must be non-empty, without spaces or "+": ${JSON.stringify(name)}`);
}

/** `<name>+<hex key id>+<base64(0x01 || key)>`, the text a verifier is configured with. */
export function verifierKeyText(name: string, publicKey: Buffer): string {
  checkName(name);
  return `${name}+${keyId(name, publicKey).toString('hex')}+${Buffer.concat([Buffer.of(ALG_ED25519), publicKey]).toString('base64')}`;
}

function splitKey(text: string, parts: number): string[] {
  const fields = text.split('+');
  // The base64 key may itself hold "+": everything after the id is the key.
  if (fields.length < parts) throw new Error('malformed key');
  return [...fields.slice(0, parts - 1), fields.slice(parts - 1).join('+')];
}

function decodeKey(name: string, idHex: string, encoded: string): Buffer {
  checkName(name);
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.toString('base64') !== encoded || bytes.length !== 33 || bytes[0] !== ALG_ED25519) throw new Error('malformed key');
  if (!/^[0-9a-f]{8}$/u.test(idHex)) throw new Error('malformed key id');
  return bytes.subarray(1);
}

export function parseVerifierKey(text: string): NoteVerifier {
  const [name, idHex, encoded] = splitKey(text, 3) as [string, string, string];
  const publicKey = decodeKey(name, idHex, encoded);
  if (keyId(name, publicKey).toString('hex') !== idHex) throw new Error('the key id does not match the key');
  const key = createPublicKey({ key: Buffer.concat([SPKI_ED25519, publicKey]), format: 'der', type: 'spki' });
  return { name, keyId: Buffer.from(idHex, 'hex'), publicKey, verify: (message, signature) => signature.length === 64 && verify(null, message, key, signature) };
}

/** `PRIVATE+KEY+<name>+<hex key id>+<base64(0x01 || seed)>`, as Go's note.GenerateKey writes it. */
export function parseSignerKey(text: string): NoteSigner {
  if (!text.startsWith('PRIVATE+KEY+')) throw new Error('a signer key starts with PRIVATE+KEY+');
  const [name, idHex, encoded] = splitKey(text.slice('PRIVATE+KEY+'.length), 3) as [string, string, string];
  const seed = decodeKey(name, idHex, encoded);
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
  const signer = signerOf(name, privateKey);
  if (signer.keyId.toString('hex') !== idHex) throw new Error('the key id does not match the key');
  return signer;
}

function signerOf(name: string, privateKey: KeyObject): NoteSigner {
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  const publicKey = Buffer.from(spki.subarray(spki.length - 32));
  return { name, keyId: keyId(name, publicKey), publicKey, verifierKey: verifierKeyText(name, publicKey), sign: (message) => sign(null, message, privateKey) };
}

/** A new key pair: the signer key text (keep it secret) and the verifier key text (publish it). */
export function generateNoteKey(name: string): { signerKey: string; verifierKey: string } {
  checkName(name);
  const { privateKey } = generateKeyPairSync('ed25519');
  const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' });
  const seed = pkcs8.subarray(pkcs8.length - 32);
  const signer = signerOf(name, privateKey);
  return {
    signerKey: `PRIVATE+KEY+${name}+${signer.keyId.toString('hex')}+${Buffer.concat([Buffer.of(ALG_ED25519), seed]).toString('base64')}`,
    verifierKey: signer.verifierKey,
  };
}

/** Signs a text (every line ending in "\n") and returns the whole note. */
export function signNote(text: string, ...signers: NoteSigner[]): string {
  if (!text.endsWith('\n') || text.includes('\n\n') || [...text].some((c) => c < ' ' && c !== '\n')) throw new Error('a note text is lines ending in "\\n", none of them empty');
  const message = Buffer.from(text, 'utf8');
  const lines = signers.map((s) => `${SIGNATURE_PREFIX}${s.name} ${Buffer.concat([s.keyId, s.sign(message)]).toString('base64')}\n`);
  return `${text}\n${lines.join('')}`;
}

export interface OpenedNote {
  text: string;
  /** The names of the verifiers whose signature holds. */
  verifiedBy: string[];
  /** Signature lines from keys the caller does not know. */
  unverified: Array<{ name: string; keyId: string }>;
}

/**
 * Splits a note into its text and signatures and checks every signature whose key the caller knows. Throws when the
 * note is malformed or a known key's signature does not hold; the caller decides whether `verifiedBy` is enough.
 */
export function openNote(note: string, verifiers: NoteVerifier[]): OpenedNote {
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new Error('malformed note: no signature block');
  const text = note.slice(0, split + 1);
  const message = Buffer.from(text, 'utf8');
  const opened: OpenedNote = { text, verifiedBy: [], unverified: [] };
  for (const line of note.slice(split + 2, -1).split('\n')) {
    const match = new RegExp(`^${SIGNATURE_PREFIX}(\\S+) ([A-Za-z0-9+/=]+)$`, 'u').exec(line);
    if (!match) throw new Error('malformed note: bad signature line');
    const [, name, encoded] = match as unknown as [string, string, string];
    const blob = Buffer.from(encoded, 'base64');
    if (blob.length < 5) throw new Error('malformed note: short signature');
    const id = blob.subarray(0, 4);
    const verifier = verifiers.find((v) => v.name === name && v.keyId.equals(id));
    if (!verifier) {
      opened.unverified.push({ name, keyId: id.toString('hex') });
      continue;
    }
    if (!verifier.verify(message, blob.subarray(4))) throw new Error(`the signature of ${name} does not hold`);
    opened.verifiedBy.push(name);
  }
  return opened;
}
