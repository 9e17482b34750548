import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as Minio from 'minio';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startS3, type S3Handle } from '../src/s3.ts';

/**
 * The embedded S3 lists more than one page: s3rver's continuation tokens use single DES, which OpenSSL 3 keeps only in
 * its legacy provider; the shim (s3rver-des.ts) serves it as triple DES with equal keys. Without it the second page is
 * a 500.
 */
let s3: S3Handle;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 's3-listing-'));
  s3 = await startS3({ stateDir: dir, log: () => {} });
});
afterAll(async () => {
  await s3?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('lists 1,050 keys across two pages, each once and in order', async () => {
  const { hostname, port } = new URL(s3.endpoint);
  const client = new Minio.Client({ endPoint: hostname, port: Number(port), useSSL: false, accessKey: s3.accessKey, secretKey: s3.secretKey, region: s3.region, pathStyle: true });
  await client.makeBucket('listing', s3.region);
  const keys = Array.from({ length: 1050 }, (_, i) => `k/${String(i).padStart(5, '0')}`);
  for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((key) => client.putObject('listing', key, Buffer.from('x'), 1)));
  const listed: string[] = [];
  for await (const item of client.listObjectsV2('listing', 'k/', true) as AsyncIterable<Minio.BucketItem>) listed.push(item.name ?? '');
  expect(listed).toEqual(keys);
}, 120_000);
