import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Decrypter, Encrypter, identityToRecipient } from 'age-encryption';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGE_CHUNK_SIZE, ageIdentityToRecipient, createAgeDecryptStream, createAgeEncryptStream, generateAgeIdentity, isAgeRecipient } from '../src/age/index.ts';

const SEALED = AGE_CHUNK_SIZE + 16;
let dir: string;
const keys: { identity: string; recipient: string; file: string }[] = [];

/** Splits `data` into pieces of random sizes (1 byte to 100 kB) to cross every boundary. */
function* randomPieces(data: Buffer): Generator<Buffer> {
  let offset = 0;
  while (offset < data.length) {
    const n = Math.min(data.length - offset, randomInt(1, 100_000));
    yield data.subarray(offset, offset + n);
    offset += n;
  }
}

async function encrypt(data: Buffer, recipients: string[]): Promise<Buffer> {
  const out: Buffer[] = [];
  await pipeline(Readable.from(randomPieces(data)), await createAgeEncryptStream(recipients), async (s: AsyncIterable<Buffer>) => {
    for await (const c of s) out.push(c);
  });
  return Buffer.concat(out);
}

async function decrypt(cipher: Buffer, identities: string): Promise<Buffer> {
  const out: Buffer[] = [];
  await pipeline(Readable.from(randomPieces(cipher)), createAgeDecryptStream(identities), async (s: AsyncIterable<Buffer>) => {
    for await (const c of s) out.push(c);
  });
  return Buffer.concat(out);
}

function cliEncrypt(data: Buffer, recipients: string[]): Buffer {
  return execFileSync('age', recipients.flatMap((r) => ['-r', r]), { input: data, maxBuffer: 256 << 20 });
}

function cliDecrypt(cipher: Buffer, identityFile: string): { ok: boolean; out: Buffer; stderr: string } {
  const r = spawnSync('age', ['-d', '-i', identityFile], { input: cipher, maxBuffer: 256 << 20 });
  return { ok: r.status === 0, out: r.stdout, stderr: r.stderr.toString() };
}

function flip(buf: Buffer, at: number): Buffer {
  const copy = Buffer.from(buf);
  copy[at] = copy[at]! ^ 0x01;
  return copy;
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mover-age-'));
  for (let i = 0; i < 3; i++) {
    const file = path.join(dir, `key${i}.txt`);
    execFileSync('age-keygen', ['-o', file], { stdio: 'ignore' });
    const identity = fs.readFileSync(file, 'utf8').split('\n').find((l) => l.startsWith('AGE-SECRET-KEY-1'))!;
    const recipient = execFileSync('age-keygen', ['-y', file]).toString().trim();
    keys.push({ identity, recipient, file });
  }
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('age interop with the CLI', () => {
  const sizes = [0, 1, AGE_CHUNK_SIZE, AGE_CHUNK_SIZE + 1, 2 * AGE_CHUNK_SIZE, 5 * 1024 * 1024 + 12345];

  for (const size of sizes) {
    it(`our encryption of ${size} bytes decrypts with age -d, and age's with ours`, async () => {
      const data = randomBytes(size);
      const ours = await encrypt(data, [keys[0]!.recipient]);
      // Header, 16-byte nonce, then ceil(size / 64 KiB) chunks (one empty chunk for empty input).
      const chunks = Math.max(1, Math.ceil(size / AGE_CHUNK_SIZE));
      const header = ours.indexOf('\n--- ') + 1 + 4 + 43 + 1;
      expect(ours.length).toBe(header + 16 + size + chunks * 16);
      const cli = cliDecrypt(ours, keys[0]!.file);
      expect(cli.stderr).toBe('');
      expect(cli.ok).toBe(true);
      expect(cli.out.equals(data)).toBe(true);

      const theirs = cliEncrypt(data, [keys[0]!.recipient]);
      expect((await decrypt(theirs, keys[0]!.identity)).equals(data)).toBe(true);
    });
  }

  it('several recipients: every identity decrypts, with the CLI and with us', async () => {
    const data = randomBytes(300_000);
    const ours = await encrypt(data, keys.map((k) => k.recipient));
    expect(ours.toString('latin1').match(/^-> X25519 /gm)).toHaveLength(3);
    const theirs = cliEncrypt(data, keys.map((k) => k.recipient));
    for (const key of keys) {
      expect(cliDecrypt(ours, key.file).out.equals(data)).toBe(true);
      expect((await decrypt(ours, key.identity)).equals(data)).toBe(true);
      expect((await decrypt(theirs, key.identity)).equals(data)).toBe(true);
    }
  });

  it('reads an identity file with comments and several keys, the matching one not first', async () => {
    const data = randomBytes(1000);
    const cipher = cliEncrypt(data, [keys[2]!.recipient]);
    const file = [`# created: today`, `# public key: ${keys[0]!.recipient}`, keys[0]!.identity, '', `# second`, keys[1]!.identity, keys[2]!.identity, ''].join('\n');
    expect((await decrypt(cipher, file)).equals(data)).toBe(true);
    expect((await decrypt(cipher, fs.readFileSync(keys[2]!.file, 'utf8'))).equals(data)).toBe(true);
  });

  it('a wrong identity fails with the CLI and with us', async () => {
    const data = randomBytes(5000);
    const ours = await encrypt(data, [keys[0]!.recipient, keys[1]!.recipient]);
    const cli = cliDecrypt(ours, keys[2]!.file);
    expect(cli.ok).toBe(false);
    expect(cli.stderr).toMatch(/no identity matched/);
    await expect(decrypt(ours, keys[2]!.identity)).rejects.toThrow(/no identity matches/);
    await expect(decrypt(cliEncrypt(data, [keys[0]!.recipient]), keys[2]!.identity)).rejects.toThrow(/no identity matches/);
  });

  it('a flipped byte in the payload fails authentication (CLI and us), also in the last chunk', async () => {
    const data = randomBytes(3 * AGE_CHUNK_SIZE + 100);
    const ours = await encrypt(data, [keys[0]!.recipient]);
    const payloadAt = ours.indexOf('\n--- ') + 5 + 43 + 1 + 16;
    for (const at of [payloadAt + 100, payloadAt + 2 * SEALED + 7, ours.length - 5]) {
      const bad = flip(ours, at);
      expect(cliDecrypt(bad, keys[0]!.file).ok).toBe(false);
      await expect(decrypt(bad, keys[0]!.identity)).rejects.toThrow(/failed authentication/);
    }
    // The payload nonce: every chunk key changes.
    await expect(decrypt(flip(ours, payloadAt - 13), keys[0]!.identity)).rejects.toThrow(/chunk 0 failed authentication/);
  });

  it('a modified header fails (MAC or stanza) with the CLI and with us', async () => {
    const ours = await encrypt(randomBytes(100), [keys[0]!.recipient]);
    const macAt = ours.indexOf('\n--- ') + 5;
    const bad = Buffer.from(ours);
    bad[macAt] = bad[macAt] === 0x41 ? 0x42 : 0x41;
    expect(cliDecrypt(bad, keys[0]!.file).ok).toBe(false);
    await expect(decrypt(bad, keys[0]!.identity)).rejects.toThrow(/header MAC mismatch|base64/);
    // A stanza argument the MAC covers: adding a stanza of an unknown type keeps the key unwrappable.
    const text = ours.toString('latin1');
    const tampered = Buffer.from(text.replace('\n---', '\n-> grease x\n\n---'), 'latin1');
    await expect(decrypt(tampered, keys[0]!.identity)).rejects.toThrow(/header MAC mismatch/);
    await expect(decrypt(Buffer.from('not an age file at all'), keys[0]!.identity)).rejects.toThrow(/not an age v1 file/);
  });

  it('truncation fails: a missing final chunk, a cut chunk, a cut header; trailing data too', async () => {
    const data = randomBytes(2 * AGE_CHUNK_SIZE + 10);
    const ours = await encrypt(data, [keys[0]!.recipient]);
    const withoutLast = ours.subarray(0, ours.length - 26);
    expect(cliDecrypt(withoutLast, keys[0]!.file).ok).toBe(false);
    await expect(decrypt(withoutLast, keys[0]!.identity)).rejects.toThrow(/missing final chunk/);
    const cut = ours.subarray(0, ours.length - 7);
    expect(cliDecrypt(cut, keys[0]!.file).ok).toBe(false);
    await expect(decrypt(cut, keys[0]!.identity)).rejects.toThrow(/failed authentication|truncated/);
    await expect(decrypt(ours.subarray(0, 30), keys[0]!.identity)).rejects.toThrow(/truncated header/);
    const headerEnd = ours.indexOf('\n--- ') + 5 + 43 + 1;
    await expect(decrypt(ours.subarray(0, headerEnd + 16), keys[0]!.identity)).rejects.toThrow(/truncated file: no payload/);

    // Exactly at a chunk boundary: a multiple of 64 KiB whose last full chunk is dropped.
    const even = await encrypt(randomBytes(2 * AGE_CHUNK_SIZE), [keys[0]!.recipient]);
    await expect(decrypt(even.subarray(0, even.length - SEALED), keys[0]!.identity)).rejects.toThrow(/missing final chunk/);
    await expect(decrypt(Buffer.concat([ours, Buffer.from('x')]), keys[0]!.identity)).rejects.toThrow(/trailing data|failed authentication/);
  });
});

describe('age keys and the age-encryption package', () => {
  it('generateAgeIdentity makes keys the CLI and the package agree with', async () => {
    const { identity, recipient } = await generateAgeIdentity();
    expect(identity).toMatch(/^AGE-SECRET-KEY-1[0-9A-Z]{58}$/);
    expect(recipient).toMatch(/^age1[0-9a-z]{58}$/);
    expect(await identityToRecipient(identity)).toBe(recipient);
    expect(ageIdentityToRecipient(identity)).toBe(recipient);
    const file = path.join(dir, 'generated.txt');
    fs.writeFileSync(file, `${identity}\n`);
    expect(execFileSync('age-keygen', ['-y', file]).toString().trim()).toBe(recipient);
    const data = randomBytes(70_000);
    expect(cliDecrypt(cliEncrypt(data, [recipient]), file).out.equals(data)).toBe(true);
    expect((await decrypt(cliEncrypt(data, [recipient]), identity)).equals(data)).toBe(true);
  });

  it('isAgeRecipient accepts X25519 recipients only', async () => {
    expect(isAgeRecipient(keys[0]!.recipient)).toBe(true);
    expect(isAgeRecipient((await generateAgeIdentity()).recipient)).toBe(true);
    expect(isAgeRecipient(keys[0]!.recipient.toUpperCase())).toBe(false);
    expect(isAgeRecipient(keys[0]!.recipient.slice(0, -1) + (keys[0]!.recipient.endsWith('q') ? 'p' : 'q'))).toBe(false);
    expect(isAgeRecipient(keys[0]!.identity)).toBe(false);
    expect(isAgeRecipient('age1')).toBe(false);
    expect(isAgeRecipient('')).toBe(false);
    expect(isAgeRecipient(42)).toBe(false);
    await expect(createAgeEncryptStream([])).rejects.toThrow(/at least one recipient/);
    await expect(createAgeEncryptStream(['age1nope'])).rejects.toThrow(/invalid recipient/);
    expect(() => createAgeDecryptStream('# only a comment\n')).toThrow(/no identity/);
    expect(() => createAgeDecryptStream('AGE-SECRET-KEY-1NOPE\n')).toThrow(/line 1/);
  });

  it('the age-encryption package reads what we write and we read what it writes', async () => {
    const data = randomBytes(200_000);
    const ours = await encrypt(data, [keys[1]!.recipient]);
    const decrypter = new Decrypter();
    decrypter.addIdentity(keys[1]!.identity);
    expect(Buffer.from(await decrypter.decrypt(ours)).equals(data)).toBe(true);
    const encrypter = new Encrypter();
    encrypter.addRecipient(keys[1]!.recipient);
    const theirs = Buffer.from(await encrypter.encrypt(data));
    expect((await decrypt(theirs, keys[1]!.identity)).equals(data)).toBe(true);
  });

  it('holds at most one chunk: output keeps pace with input', async () => {
    const encryptor = await createAgeEncryptStream([keys[0]!.recipient]);
    const out: Buffer[] = [];
    encryptor.on('data', (c: Buffer) => out.push(c));
    const big = randomBytes(10 * AGE_CHUNK_SIZE + 5);
    await new Promise<void>((resolve) => encryptor.write(big, () => resolve()));
    // Everything but the last (possibly final) chunk is out right after the write.
    const sealed = out.slice(1).reduce((n, c) => n + c.length, 0);
    expect(sealed).toBe(10 * SEALED);
    encryptor.end();
    await new Promise((resolve) => encryptor.on('end', resolve));
    expect(out.slice(1).reduce((n, c) => n + c.length, 0)).toBe(10 * SEALED + 5 + 16);
  });
});
