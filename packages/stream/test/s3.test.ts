import { createHash, randomBytes, randomInt } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createS3Client,
  ensureBucket,
  listKeys,
  objectExists,
  ObjectExistsError,
  presignGet,
  putObjectUnique,
  readSmallObject,
  removeObjects,
  uploadStream,
  type S3Client,
} from '../src/s3.ts';
import { downloadStream } from '../src/download.ts';

const MiB = 1024 * 1024;
const bucket = `mover-stream-s3-${randomBytes(4).toString('hex')}`;
let client: S3Client;

function s3Env(): { endpoint: string; accessKeyId: string; secretAccessKey: string; region: string } {
  const endpoint = process.env.S3_ENDPOINT;
  if (!endpoint) throw new Error('S3_ENDPOINT is not set: run through vitest (the global setup provides S3)');
  return { endpoint, accessKeyId: process.env.S3_ACCESS_KEY ?? '', secretAccessKey: process.env.S3_SECRET_KEY ?? '', region: process.env.S3_REGION || 'us-east-1' };
}

/** Yields `data` in random pieces, optionally failing after `failAfter` bytes. */
function source(data: Buffer, failAfter?: { bytes: number; error: Error }): Readable {
  return Readable.from(
    (async function* () {
      for (let offset = 0; offset < data.length; ) {
        if (failAfter && offset >= failAfter.bytes) throw failAfter.error;
        const n = Math.min(data.length - offset, randomInt(1, 300_000));
        yield data.subarray(offset, offset + n);
        offset += n;
      }
    })(),
  );
}

async function readObject(key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of await downloadStream(client, bucket, key)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Counts calls and the most parts in flight at once on this client instance. */
function instrument(c: S3Client): { calls: Record<string, number>; maxInFlight: () => number } {
  const calls: Record<string, number> = {};
  let inFlight = 0;
  let max = 0;
  const target = c as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of ['initiateNewMultipartUpload', 'uploadPart', 'completeMultipartUpload', 'abortMultipartUpload', 'putObject']) {
    const original = target[name]!.bind(c);
    target[name] = async (...args: unknown[]) => {
      calls[name] = (calls[name] ?? 0) + 1;
      if (name !== 'uploadPart') return await original(...args);
      max = Math.max(max, ++inFlight);
      try {
        return await original(...args);
      } finally {
        inFlight--;
      }
    };
  }
  return { calls, maxInFlight: () => max };
}

function freshClient(): S3Client {
  const env = s3Env();
  return createS3Client({ ...env, pathStyle: true });
}

beforeAll(async () => {
  client = freshClient();
  await ensureBucket(client, bucket, s3Env().region);
  await ensureBucket(client, bucket, s3Env().region); // idempotent
});

afterAll(async () => {
  if (!client) return;
  const keys: string[] = [];
  for await (const key of listKeys(client, bucket, '')) keys.push(key);
  await removeObjects(client, bucket, keys);
  await client.removeBucket(bucket);
});

describe('createS3Client', () => {
  it('reads http/https endpoints, ports and path style', () => {
    const base = { region: 'eu-west-1', accessKeyId: 'a', secretAccessKey: 'b', pathStyle: false };
    const c = createS3Client({ ...base, endpoint: 'https://s3.example.com' }) as unknown as Record<string, unknown>;
    expect([c.host, c.port, c.protocol, c.pathStyle, c.region]).toEqual(['s3.example.com', 443, 'https:', false, 'eu-west-1']);
    const d = createS3Client({ ...base, endpoint: 'http://127.0.0.1:9000/', pathStyle: true }) as unknown as Record<string, unknown>;
    expect([d.host, d.port, d.protocol, d.pathStyle]).toEqual(['127.0.0.1', 9000, 'http:', true]);
    expect(() => createS3Client({ ...base, endpoint: 'ftp://x' })).toThrow(/http/);
    expect(() => createS3Client({ ...base, endpoint: 'not a url' })).toThrow(/not a URL/);
    expect(() => createS3Client({ ...base, endpoint: 'http://x/bucket' })).toThrow(/no path/);
  });
});

describe('uploadStream', () => {
  it('uploads ~23 MiB as 5 MiB parts, at most 2 in flight, and it reads back equal', async () => {
    const c = freshClient();
    const probe = instrument(c);
    const data = randomBytes(23 * MiB + 12345);
    const result = await uploadStream(c, bucket, 'multi/object.bin', source(data), { partSizeBytes: 5 * MiB, concurrency: 2, contentType: 'application/x-test' });
    expect(result.size).toBe(data.length);
    expect(result.parts).toBe(5);
    expect(probe.calls).toMatchObject({ initiateNewMultipartUpload: 1, uploadPart: 5, completeMultipartUpload: 1 });
    expect(probe.calls.abortMultipartUpload).toBeUndefined();
    expect(probe.maxInFlight()).toBe(2);
    const back = await readObject('multi/object.bin');
    expect(createHash('sha256').update(back).digest('hex')).toBe(createHash('sha256').update(data).digest('hex'));
    const stat = await client.statObject(bucket, 'multi/object.bin');
    expect(stat.size).toBe(data.length);
  });

  it('sends a source of at most one part as a single PUT (empty and exactly one part included)', async () => {
    for (const [key, size] of [['small/one.bin', 1 * MiB + 7], ['small/exact.bin', 5 * MiB], ['small/empty.bin', 0]] as const) {
      const c = freshClient();
      const probe = instrument(c);
      const data = randomBytes(size);
      const result = await uploadStream(c, bucket, key, source(data), { partSizeBytes: 5 * MiB, concurrency: 4 });
      expect(result).toMatchObject({ size, parts: 1 });
      expect(probe.calls).toEqual({ putObject: 1 });
      expect((await readObject(key)).equals(data)).toBe(true);
    }
  });

  it('a source failing mid-stream rejects with its message, aborts the upload and leaves no object', async () => {
    const c = freshClient();
    const probe = instrument(c);
    const data = randomBytes(16 * MiB);
    await expect(
      uploadStream(c, bucket, 'fail/source.bin', source(data, { bytes: 12 * MiB, error: new Error('pg_dump: error: connection lost') }), { partSizeBytes: 5 * MiB, concurrency: 2 }),
    ).rejects.toThrow('pg_dump: error: connection lost');
    expect(probe.calls.uploadPart).toBeGreaterThanOrEqual(1);
    expect(probe.calls.abortMultipartUpload).toBe(1);
    expect(probe.calls.completeMultipartUpload).toBeUndefined();
    expect(await objectExists(client, bucket, 'fail/source.bin')).toBe(false);
  });

  it('an S3 error on a part rejects with the store message and aborts', async () => {
    const c = freshClient();
    const probe = instrument(c);
    const target = c as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const uploadPart = target.uploadPart!;
    let n = 0;
    target.uploadPart = async (...args: unknown[]) => {
      if (++n === 2) {
        const error = new Error('Storage backend has reached its minimum free drive threshold. Please delete a few objects to proceed.') as Error & { code: string };
        error.code = 'XMinioStorageFull';
        throw error;
      }
      return await uploadPart(...args);
    };
    await expect(uploadStream(c, bucket, 'fail/full.bin', source(randomBytes(18 * MiB)), { partSizeBytes: 5 * MiB, concurrency: 1 })).rejects.toThrow(
      /minimum free drive threshold/,
    );
    expect(probe.calls.abortMultipartUpload).toBe(1);
    expect(await objectExists(client, bucket, 'fail/full.bin')).toBe(false);
  });

  it('an abort signal stops reading, aborts the upload and rejects with the reason', async () => {
    const c = freshClient();
    const probe = instrument(c);
    const controller = new AbortController();
    let produced = 0;
    const endless = new Readable({
      read() {
        produced += 1 * MiB;
        if (produced === 11 * MiB) controller.abort(new Error('backup cancelled by user'));
        this.push(randomBytes(1 * MiB));
      },
    });
    await expect(uploadStream(c, bucket, 'fail/aborted.bin', endless, { partSizeBytes: 5 * MiB, concurrency: 2, signal: controller.signal })).rejects.toThrow(
      'backup cancelled by user',
    );
    expect(endless.destroyed).toBe(true);
    expect(probe.calls.abortMultipartUpload).toBe(1);
    expect(await objectExists(client, bucket, 'fail/aborted.bin')).toBe(false);
    await expect(uploadStream(c, bucket, 'fail/x.bin', source(Buffer.alloc(1)), { partSizeBytes: 1 * MiB, concurrency: 1 })).rejects.toThrow(/part size/);
  });
});

describe('small objects, listing, deletion, presigned URLs', () => {
  it('putObjectUnique without conditional put: writes, refuses an existing key, detects a racing writer', async () => {
    const body = Buffer.from(JSON.stringify({ version: 1, id: 'b-1' }));
    await putObjectUnique(client, bucket, 'manifests/b-1.json', body, { disableConditionalPut: true, contentType: 'application/json' });
    expect((await readObject('manifests/b-1.json')).equals(body)).toBe(true);
    await expect(putObjectUnique(client, bucket, 'manifests/b-1.json', body, { disableConditionalPut: true })).rejects.toBeInstanceOf(ObjectExistsError);

    // Another writer lands between our PUT and our read-back.
    const racy = freshClient();
    const target = racy as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const putObject = target.putObject!.bind(racy);
    target.putObject = async (...args: unknown[]) => {
      const result = await putObject(...args);
      await client.putObject(bucket, 'manifests/b-2.json', Buffer.from('{"other":true}'));
      return result;
    };
    await expect(putObjectUnique(racy, bucket, 'manifests/b-2.json', body, { disableConditionalPut: true })).rejects.toThrow(/already exists/);
  });

  it('reads a small object whole, answers undefined for a missing key, and refuses one over the limit', async () => {
    const body = Buffer.from(JSON.stringify({ segment: 'x' }));
    await client.putObject(bucket, 'small/report.json', body);
    expect((await readSmallObject(client, bucket, 'small/report.json'))?.equals(body)).toBe(true);
    expect(await readSmallObject(client, bucket, 'small/missing.json')).toBeUndefined();
    await expect(readSmallObject(client, bucket, 'small/report.json', body.length - 1)).rejects.toThrow(/larger than/);
  });

  it('lists keys under a prefix, deletes them, and serves presigned GETs', async () => {
    const keys = ['list/a/1', 'list/a/2', 'list/a/sub/3', 'list/b/4'];
    for (const key of keys) await client.putObject(bucket, key, Buffer.from(key));
    const listed: string[] = [];
    for await (const key of listKeys(client, bucket, 'list/a/')) listed.push(key);
    expect(listed.sort()).toEqual(['list/a/1', 'list/a/2', 'list/a/sub/3']);

    const url = await presignGet(client, bucket, 'list/b/4', 600);
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('list/b/4');

    await removeObjects(client, bucket, listed);
    await removeObjects(client, bucket, []);
    const after: string[] = [];
    for await (const key of listKeys(client, bucket, 'list/')) after.push(key);
    expect(after).toEqual(['list/b/4']);
  });
});

describe('putObjectUnique with conditional put (a tiny fake S3)', () => {
  let server: http.Server;
  const seen: { method: string; url: string; ifNoneMatch: string | undefined }[] = [];
  const stored = new Map<string, Buffer>();
  let conflict = false;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const ifNoneMatch = req.headers['if-none-match'] as string | undefined;
        seen.push({ method: req.method!, url: req.url!, ifNoneMatch });
        const path = req.url!.split('?')[0]!;
        if (req.method === 'PUT') {
          if (conflict || (ifNoneMatch === '*' && stored.has(path))) {
            const [status, code] = conflict ? [409, 'ConditionalRequestConflict'] : [412, 'PreconditionFailed'];
            res.writeHead(status, { 'content-type': 'application/xml' });
            res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>`);
            return;
          }
          stored.set(path, Buffer.concat(chunks));
          res.writeHead(200, { etag: '"abc"' });
          res.end();
          return;
        }
        res.writeHead(405);
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends If-None-Match: * and maps 412 and 409 to ObjectExistsError', async () => {
    const { port } = server.address() as AddressInfo;
    const fake = createS3Client({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', pathStyle: true, accessKeyId: 'k', secretAccessKey: 's' });
    const body = Buffer.from('{"manifest":1}');
    await putObjectUnique(fake, 'bkt', 'm/1.json', body, { disableConditionalPut: false });
    expect(seen.at(-1)).toMatchObject({ method: 'PUT', url: '/bkt/m/1.json', ifNoneMatch: '*' });
    expect(stored.get('/bkt/m/1.json')?.equals(body)).toBe(true);
    const error = await putObjectUnique(fake, 'bkt', 'm/1.json', body, { disableConditionalPut: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ObjectExistsError);
    expect((error as Error).message).toBe('object m/1.json already exists');
    conflict = true;
    await expect(putObjectUnique(fake, 'bkt', 'm/2.json', body, { disableConditionalPut: false })).rejects.toBeInstanceOf(ObjectExistsError);
    expect(seen.filter((s) => s.method !== 'PUT')).toEqual([]);
  });
});
