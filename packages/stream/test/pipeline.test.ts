import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGE_CHUNK_SIZE, generateAgeIdentity } from '../src/age/index.ts';
import { runDownloadPipeline, runUploadPipeline, verifyObject } from '../src/pipeline.ts';
import { downloadStream } from '../src/download.ts';
import { createS3Client, ensureBucket, listKeys, objectExists, removeObjects, type S3Client } from '../src/s3.ts';
import { createVirtualClock } from '../src/taps.ts';

const MiB = 1024 * 1024;
const bucket = `mover-stream-pipe-${randomBytes(4).toString('hex')}`;
let client: S3Client;
let dir: string;
const keys: { identity: string; recipient: string; file: string }[] = [];

/** ~`bytes` of dump-like text with incompressible stretches (like bytea columns). */
function dumpLike(bytes: number): Buffer {
  const parts: Buffer[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const part =
      i % 10 === 9
        ? randomBytes(200_000)
        : Buffer.from(Array.from({ length: 2000 }, (_, j) => `${i * 2000 + j}\tcustomer-${(i * 7 + j) % 997}\t${(j * 31) % 1000}.00\tactive\n`).join(''));
    parts.push(part);
    size += part.length;
  }
  return Buffer.concat(parts).subarray(0, bytes);
}

function source(data: Buffer, pieceSize = 256 * 1024): Readable {
  return Readable.from(
    (function* () {
      for (let offset = 0; offset < data.length; offset += pieceSize) yield data.subarray(offset, offset + pieceSize);
    })(),
  );
}

function sink(): { stream: Writable; data: () => Buffer } {
  const chunks: Buffer[] = [];
  return {
    stream: new Writable({
      write(chunk: Buffer, _encoding, callback) {
        chunks.push(chunk);
        callback();
      },
    }),
    data: () => Buffer.concat(chunks),
  };
}

async function readObject(key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of await downloadStream(client, bucket, key)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

const base = () => ({
  client,
  bucket,
  partSizeBytes: 5 * MiB,
  concurrency: 2,
  bandwidthBytesPerSecond: 0,
  stallTimeoutMs: 60_000,
});

beforeAll(async () => {
  const endpoint = process.env.S3_ENDPOINT;
  if (!endpoint) throw new Error('S3_ENDPOINT is not set: run through vitest (the global setup provides S3)');
  client = createS3Client({
    endpoint,
    region: process.env.S3_REGION || 'us-east-1',
    pathStyle: true,
    accessKeyId: process.env.S3_ACCESS_KEY ?? '',
    secretAccessKey: process.env.S3_SECRET_KEY ?? '',
  });
  await ensureBucket(client, bucket, process.env.S3_REGION || 'us-east-1');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mover-pipeline-'));
  for (let i = 0; i < 2; i++) {
    const { identity, recipient } = await generateAgeIdentity();
    const file = path.join(dir, `key${i}.txt`);
    fs.writeFileSync(file, `# test key ${i}\n${identity}\n`);
    keys.push({ identity, recipient, file });
  }
});

afterAll(async () => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  if (!client) return;
  const all: string[] = [];
  for await (const key of listKeys(client, bucket, '')) all.push(key);
  await removeObjects(client, bucket, all);
  await client.removeBucket(bucket);
});

describe('upload and download pipelines', () => {
  it('round-trips ~24 MiB through zstd, age (2 recipients) and a multipart upload; the CLI tools read it', async () => {
    const data = dumpLike(24 * MiB);
    const key = 'backups/db1/full.dump.zst.age';
    const progress: { at: number; raw: number; stored: number }[] = [];
    const up = await runUploadPipeline({
      ...base(),
      source: source(data),
      compression: { algorithm: 'zstd', level: 'default', threads: 2 },
      recipients: keys.map((k) => k.recipient),
      key,
      onProgress: (raw, stored) => progress.push({ at: performance.now(), raw, stored }),
    });
    expect(up.rawBytes).toBe(data.length);
    expect(up.storedBytes).toBeLessThan(data.length / 2);
    expect(up.storedBytes).toBeGreaterThan(0);
    const stored = await readObject(key);
    expect(stored.length).toBe(up.storedBytes);
    expect(up.sha256).toBe(sha(stored));
    const objectFile = path.join(dir, 'object.age');
    fs.writeFileSync(objectFile, stored);
    expect(execFileSync('sha256sum', [objectFile]).toString().split(' ')[0]).toBe(up.sha256);
    for (let i = 1; i < progress.length; i++) {
      expect(progress[i]!.at - progress[i - 1]!.at).toBeGreaterThanOrEqual(240);
      expect(progress[i]!.raw).toBeGreaterThanOrEqual(progress[i - 1]!.raw);
    }

    // age -d -i <key> | zstd -d, for each recipient's identity.
    for (const k of keys) {
      const cli = spawnSync('sh', ['-c', `age -d -i '${k.file}' '${objectFile}' | zstd -d -c`], { maxBuffer: 64 * MiB });
      expect(cli.stderr.toString()).toBe('');
      expect(sha(cli.stdout)).toBe(sha(data));
    }

    const out = sink();
    const down = await runDownloadPipeline({ ...base(), key, expectedSha256: up.sha256, identity: fs.readFileSync(keys[1]!.file, 'utf8'), compression: 'zstd', sink: out.stream });
    expect(down).toEqual({ storedBytes: up.storedBytes, rawBytes: data.length });
    expect(sha(out.data())).toBe(sha(data));
    await verifyObject(client, bucket, key, up.sha256);
  });

  it('a tampered object fails the download with an authentication error and verification with a checksum mismatch', async () => {
    const data = dumpLike(3 * MiB);
    const key = 'backups/db1/tamper.age';
    const up = await runUploadPipeline({ ...base(), source: source(data), compression: { algorithm: 'zstd', level: 'fastest', threads: 1 }, recipients: [keys[0]!.recipient], key });
    const stored = await readObject(key);
    const tampered = Buffer.from(stored);
    const at = stored.length - 2 * (AGE_CHUNK_SIZE + 16) + 1000;
    tampered[at] = tampered[at]! ^ 0x20;
    await client.putObject(bucket, key, tampered);

    await expect(
      runDownloadPipeline({ ...base(), key, expectedSha256: up.sha256, identity: keys[0]!.identity, compression: 'zstd', sink: sink().stream }),
    ).rejects.toThrow(new RegExp(`${key} failed integrity checks: age: payload chunk \\d+ failed authentication`));
    await expect(verifyObject(client, bucket, key, up.sha256)).rejects.toThrow(`checksum mismatch for ${key}: expected ${up.sha256} got ${sha(tampered)}`);

    // Intact bytes, wrong expected hash (a manifest that does not match the object).
    await client.putObject(bucket, key, stored);
    const wrong = sha(Buffer.from('something else'));
    await expect(
      runDownloadPipeline({ ...base(), key, expectedSha256: wrong, identity: keys[0]!.identity, compression: 'zstd', sink: sink().stream }),
    ).rejects.toThrow(`checksum mismatch for ${key}: expected ${wrong} got ${up.sha256}`);
    await expect(
      runDownloadPipeline({ ...base(), key, expectedSha256: up.sha256, identity: (await generateAgeIdentity()).identity, compression: 'zstd', sink: sink().stream }),
    ).rejects.toThrow(/no identity matches/);
  });

  it('a sink that closes early is named as the reader, not blamed on the decompressor', async () => {
    const data = dumpLike(3 * MiB);
    const key = 'backups/db1/reader-closed.age';
    const up = await runUploadPipeline({ ...base(), source: source(data), compression: { algorithm: 'zstd', level: 'fastest', threads: 1 }, recipients: [keys[0]!.recipient], key });
    // A reader process that exits after its first chunk (tar dying on a full disk) closes its stdin.
    const closing = new Writable({
      write(_chunk, _encoding, callback) {
        callback();
        closing.destroy();
      },
    });
    await expect(runDownloadPipeline({ ...base(), key, expectedSha256: up.sha256, identity: keys[0]!.identity, compression: 'zstd', sink: closing })).rejects.toThrow(
      `the reader of ${key} closed before the download ended`,
    );
  });

  it('a failing source rejects with its message and leaves no object', async () => {
    const key = 'backups/db1/failed.age';
    const failing = Readable.from(
      (async function* () {
        for (let i = 0; i < 40; i++) yield randomBytes(256 * 1024);
        throw new Error('mariadb-dump: Got error: 2013: Lost connection to server during query');
      })(),
    );
    await expect(
      runUploadPipeline({ ...base(), source: failing, compression: { algorithm: 'zstd', level: 'default', threads: 1 }, recipients: [keys[0]!.recipient], key }),
    ).rejects.toThrow('mariadb-dump: Got error: 2013: Lost connection to server during query');
    expect(await objectExists(client, bucket, key)).toBe(false);
  });

  it('an S3 error (a full store) rejects with the store message, aborts the upload and stops the source', async () => {
    const key = 'backups/db1/full-store.age';
    const full = createS3Client({
      endpoint: process.env.S3_ENDPOINT!,
      region: process.env.S3_REGION || 'us-east-1',
      pathStyle: true,
      accessKeyId: process.env.S3_ACCESS_KEY ?? '',
      secretAccessKey: process.env.S3_SECRET_KEY ?? '',
    });
    const target = full as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const uploadPart = target.uploadPart!.bind(full);
    const abort = target.abortMultipartUpload!.bind(full);
    let aborted = 0;
    let parts = 0;
    target.uploadPart = async (...args: unknown[]) => {
      if (++parts === 2) throw Object.assign(new Error('Storage backend has reached its minimum free drive threshold.'), { code: 'XMinioStorageFull' });
      return await uploadPart(...args);
    };
    target.abortMultipartUpload = async (...args: unknown[]) => {
      aborted++;
      return await abort(...args);
    };
    const endless = new Readable({
      read() {
        this.push(randomBytes(MiB));
      },
    });
    await expect(
      runUploadPipeline({ ...base(), client: full, source: endless, compression: { algorithm: 'none', level: 'default', threads: 1 }, recipients: [keys[0]!.recipient], key }),
    ).rejects.toThrow('Storage backend has reached its minimum free drive threshold.');
    expect(aborted).toBe(1);
    expect(endless.destroyed).toBe(true);
    expect(await objectExists(client, bucket, key)).toBe(false);
  });

  it('a stalled source is cut off with "no data flowed" and leaves no object', async () => {
    const key = 'backups/db1/stalled.age';
    const stalled = new Readable({ read() {} });
    stalled.push(randomBytes(7 * MiB));
    await expect(
      runUploadPipeline({ ...base(), stallTimeoutMs: 300, source: stalled, compression: { algorithm: 'none', level: 'default', threads: 1 }, recipients: [keys[0]!.recipient], key }),
    ).rejects.toThrow('no data flowed for 300ms');
    expect(stalled.destroyed).toBe(true);
    expect(await objectExists(client, bucket, key)).toBe(false);
  });

  it('an abort rejects with the reason; a throttled upload reports progress and keeps to the rate', async () => {
    const controller = new AbortController();
    let reads = 0;
    const endless = new Readable({
      read() {
        // Cancelled while data is flowing: after the third MiB.
        if (++reads === 3) controller.abort(new Error('backup cancelled'));
        this.push(randomBytes(MiB));
      },
    });
    await expect(
      runUploadPipeline({ ...base(), signal: controller.signal, source: endless, compression: { algorithm: 'none', level: 'default', threads: 1 }, recipients: [keys[0]!.recipient], key: 'backups/db1/aborted.age' }),
    ).rejects.toThrow('backup cancelled');
    expect(await objectExists(client, bucket, 'backups/db1/aborted.age')).toBe(false);

    const data = randomBytes(2 * MiB);
    const throttled = { ...base(), bandwidthBytesPerSecond: 2 * MiB, compression: { algorithm: 'none', level: 'default', threads: 1 } as const, recipients: [keys[0]!.recipient] };
    // The throttle is the only thing waiting on this clock (no watchdog): its time is the throttle's own pacing.
    const pacing = createVirtualClock();
    await runUploadPipeline({ ...throttled, clock: pacing, stallTimeoutMs: 0, source: source(data, 64 * 1024), key: 'backups/db1/paced.age' });
    // 2 MiB (plus age overhead) at 2 MiB/s past a 0.5 MiB bucket: about 0.77 s of pacing.
    expect(pacing.now()).toBeGreaterThanOrEqual(750);
    expect(pacing.now()).toBeLessThan(800);
    // The same upload on the real clock reports its progress while it goes.
    const progress: number[] = [];
    const up = await runUploadPipeline({ ...throttled, source: source(data, 64 * 1024), key: 'backups/db1/throttled.age', onProgress: (_raw, stored) => progress.push(stored) });
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(up.storedBytes).toBe(data.length + Math.ceil(data.length / AGE_CHUNK_SIZE) * 16 + (await readObject('backups/db1/throttled.age')).indexOf('\n--- ') + 5 + 43 + 1 + 16);

    // A sink that stops reading for longer than the stall timeout (a restore building an index) is no stall.
    const chunks: Buffer[] = [];
    let paused = false;
    const slowSink = new Writable({
      highWaterMark: 16 * 1024,
      write(chunk: Buffer, _encoding, callback) {
        chunks.push(chunk);
        if (paused) return callback();
        paused = true;
        setTimeout(callback, 800);
      },
    });
    await runDownloadPipeline({
      ...base(),
      stallTimeoutMs: 250,
      key: 'backups/db1/throttled.age',
      expectedSha256: up.sha256,
      identity: keys[0]!.identity,
      compression: 'none',
      sink: slowSink,
    });
    expect(Buffer.concat(chunks).equals(data)).toBe(true);
  });
});
