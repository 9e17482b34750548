import type * as Minio from 'minio';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestS3, type TestS3 } from './helpers.ts';

/**
 * The embedded S3 lists more than one page: s3rver's continuation tokens use single DES, which OpenSSL 3 keeps only in
 * its legacy provider; the shim (s3rver-des.ts) serves it as triple DES with equal keys. Without it the second page is
 * a 500.
 */
let s3: TestS3;

beforeAll(async () => {
  s3 = await startTestS3('s3-listing');
});
afterAll(async () => s3?.stop());

it('lists 1,050 keys across two pages, each once and in order', async () => {
  const client = s3.client();
  await client.makeBucket('listing', s3.s3.region);
  const keys = Array.from({ length: 1050 }, (_, i) => `k/${String(i).padStart(5, '0')}`);
  for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((key) => client.putObject('listing', key, Buffer.from('x'), 1)));
  const listed: string[] = [];
  for await (const item of client.listObjectsV2('listing', 'k/', true) as AsyncIterable<Minio.BucketItem>) listed.push(item.name ?? '');
  expect(listed).toEqual(keys);
}, 120_000);
