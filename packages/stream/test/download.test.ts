import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { downloadStream, isConnectionDrop } from '../src/download.ts';
import { createS3Client } from '../src/s3.ts';

/**
 * A store on loopback that serves one object and drops the connection of the first `drops` GETs half-way through
 * the bytes they were asked for (as a proxy or a restarting store does). It answers ranged GETs as S3 does (206).
 */
async function droppingStore(data: Buffer, drops: number, status = 200) {
  const ranges: string[] = [];
  let dropped = 0;
  const server = http.createServer((req, res) => {
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    ranges.push(req.headers.range ?? 'whole');
    if (status !== 200) {
      res.writeHead(status, { 'content-type': 'application/xml' });
      res.end('<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>');
      return;
    }
    const start = range ? Number(range[1]) : 0;
    const body = data.subarray(start);
    res.writeHead(range ? 206 : 200, { 'content-length': String(body.length), 'content-type': 'application/octet-stream' });
    if (dropped < drops) {
      dropped++;
      res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.socket?.destroy());
      return;
    }
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const client = createS3Client({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', pathStyle: true, accessKeyId: 'key', secretAccessKey: 'secret' });
  return { client, ranges, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

async function readAll(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('downloadStream', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('resumes a body whose connection dropped from the next byte, and the bytes are the object', async () => {
    const data = randomBytes(3 * 1024 * 1024);
    const store = await droppingStore(data, 2);
    close = store.close;
    const got = await readAll(await downloadStream(store.client, 'bucket', 'base.tar.zst.age', { resumeDelayMs: 1 }));
    expect(sha(got)).toBe(sha(data));
    expect(store.ranges[0]).toBe('whole');
    // Each resume asks for exactly what was not read yet: past the half of what the GET before it was asked for.
    expect(store.ranges).toHaveLength(3);
    const offsets = store.ranges.slice(1).map((r) => Number(/bytes=(\d+)-/.exec(r)![1]));
    expect(offsets[0]).toBeGreaterThan(0);
    expect(offsets[1]).toBeGreaterThan(offsets[0]!);
  });

  it('gives up after its resume attempts, naming the object and how far it got', async () => {
    const data = randomBytes(1024 * 1024);
    const store = await droppingStore(data, 10);
    close = store.close;
    const failure = await readAll(await downloadStream(store.client, 'bucket', 'obj', { resumeAttempts: 2, resumeDelayMs: 1 })).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toMatch(/^download of obj lost its connection after \d+ bytes: /);
    expect(store.ranges).toHaveLength(3);
  });

  it('does not retry a refusal', async () => {
    const store = await droppingStore(Buffer.alloc(10), 0, 403);
    close = store.close;
    await expect(downloadStream(store.client, 'bucket', 'obj')).rejects.toThrow(/Access Denied/);
    expect(store.ranges).toHaveLength(1);
  });

  it('classifies what a lost connection looks like, and nothing else', () => {
    expect(isConnectionDrop(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }))).toBe(true);
    expect(isConnectionDrop(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isConnectionDrop(new Error('aborted'))).toBe(true);
    expect(isConnectionDrop(new Error('checksum mismatch'))).toBe(false);
    expect(isConnectionDrop(undefined)).toBe(false);
  });
});
