import type * as Minio from 'minio';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestS3, type TestS3 } from './helpers.ts';

/**
 * The embedded S3 under a backup lease's traffic (s3rver-store.ts): writes and deletes under one prefix at the same
 * moment (one attempt removes its claim while another renews its own), and reads and listings of an object while it is
 * rewritten. Plain s3rver answered 500s to the first, and to the second torn bytes, 500s (a torn metadata file) and
 * bodies shorter than their Content-Length that the client waited for forever.
 */
let s3: TestS3;

beforeAll(async () => {
  s3 = await startTestS3('s3-races');
});
afterAll(async () => s3?.stop());

/** A client that never retries, so a 500 shows; a read that never ends fails within 5 s (`within`). */
function plainClient(): Minio.Client {
  return s3.client({ retry: false });
}

async function within<T>(what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not end within 5 s`)), 5_000)));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function readWhole(client: Minio.Client, bucket: string, key: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of await client.getObject(bucket, key)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

it('reads and lists an object being rewritten as one whole version, never a torn one, a 500 or a body cut short', async () => {
  const client = plainClient();
  await client.makeBucket('rewrites', s3.s3.region);
  // Two versions of different lengths, as a claim's `claiming` and `held` states are.
  const versions = [JSON.stringify({ state: 'claiming', pad: 'x'.repeat(3000) }), JSON.stringify({ state: 'held' })];
  await client.putObject('rewrites', 'lease/first.json', versions[0]!);
  const seen = new Set<string>();
  const failures: string[] = [];
  for (let round = 0; round < 150; round++) {
    const rewrite = client.putObject('rewrites', 'lease/first.json', versions[round % 2]!);
    const read = within('a read', readWhole(client, 'rewrites', 'lease/first.json')).then((text) => {
      if (!versions.includes(text)) failures.push(`round ${round}: read ${text.length} bytes that are neither version`);
      seen.add(text);
    });
    const list = within('a listing', (async () => {
      for await (const item of client.listObjectsV2('rewrites', 'lease/', true)) if ((item as { name: string }).name !== 'lease/first.json') failures.push(`listed ${(item as { name: string }).name}`);
    })());
    const outcomes = await Promise.allSettled([rewrite, read, list]);
    for (const outcome of outcomes) if (outcome.status === 'rejected') failures.push(`round ${round}: ${(outcome.reason as Error).message}`);
    if (failures.length > 0) break;
  }
  expect(failures).toEqual([]);
  expect(seen.size, 'both versions were read').toBe(2);
});

it('answers every write and delete racing under one prefix, and keeps what was written last', async () => {
  const client = plainClient();
  await client.makeBucket('races', s3.s3.region);
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
