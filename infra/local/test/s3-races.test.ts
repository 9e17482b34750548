import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as Minio from 'minio';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startS3, type S3Handle } from '../src/s3.ts';

/**
 * Writes and deletes under one prefix at the same moment (a backup's lease: one attempt removes its claim while another
 * renews its own) all succeed on the embedded S3: s3rver removed the folder a delete left empty while a write was
 * about to open its file there, and one of the two answered 500 (s3rver-store.ts).
 */
let s3: S3Handle;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 's3-races-'));
  s3 = await startS3({ stateDir: dir, log: () => {} });
});
afterAll(async () => {
  await s3?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('answers every write and delete racing under one prefix, and keeps what was written last', async () => {
  const { hostname, port } = new URL(s3.endpoint);
  // No retries: a 500 must show.
  const client = new Minio.Client({ endPoint: hostname, port: Number(port), useSSL: false, accessKey: s3.accessKey, secretKey: s3.secretKey, region: s3.region, pathStyle: true, retryOptions: { disableRetry: true } });
  await client.makeBucket('races', s3.region);
  const failures: string[] = [];
  const record = (what: string) => (error: Error) => void failures.push(`${what}: ${error.message}`);
  for (let round = 0; round < 150; round++) {
    const prefix = `backup-${round % 5}/lease/`;
    await client.putObject('races', `${prefix}a.json`, Buffer.from(`a${round}`)).catch(record('put a'));
    await Promise.all([client.removeObject('races', `${prefix}a.json`).catch(record('delete a')), client.putObject('races', `${prefix}b.json`, Buffer.from(`b${round}`)).catch(record('put b'))]);
    await client.removeObject('races', `${prefix}b.json`).catch(record('delete b'));
  }
  expect(failures).toEqual([]);
  const left: string[] = [];
  for await (const item of client.listObjectsV2('races', '', true)) left.push((item as { name: string }).name);
  expect(left).toEqual([]);
});
