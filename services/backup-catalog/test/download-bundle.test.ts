// The README of a download with selective exports: signed links to the dump and each export, as stored, on the test S3.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createS3Client, ensureBucket, putObjectUnique } from '@strata/stream';
import { writeDownloadBundle, writeRecoveryBundle } from '../src/restores/recovery-bundle.ts';
import { s3Env } from './fixtures.ts';

const s3 = s3Env();
const client = createS3Client({ endpoint: s3.endpoint, region: s3.region, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey, pathStyle: true });
const bucket = `strata-dl-${randomBytes(3).toString('hex')}`;
const where = { prefix: 'strata', namespace: 'default', target: 'orders', restoreId: 'r1' };

async function stored(key: string): Promise<{ key: string; sha256: string; compression: string; bytes: Buffer }> {
  const bytes = randomBytes(64);
  await putObjectUnique(client, bucket, key, bytes, { disableConditionalPut: true });
  return { key, sha256: 'a'.repeat(64), compression: 'zstd', bytes };
}

async function linkBefore(readme: string, file: string): Promise<Buffer> {
  const line = readme.split('\n').find((l) => l.includes(`> ${file}`));
  const url = /curl -fsS '([^']+)'/.exec(line ?? '')?.[1];
  expect(url, readme).toBeTruthy();
  return Buffer.from(await (await fetch(url!)).arrayBuffer());
}

describe('download bundles with selective exports', () => {
  it('links the dump and every export, each readable as stored', async () => {
    await ensureBucket(client, bucket, s3.region);
    const dump = await stored('strata/default/orders/b1/data/app.pgdump.zst.age');
    const ledger = await stored('strata/default/orders/b1/exports/ledger.csv.zst.age');
    const open = await stored('strata/default/orders/b1/exports/open%20orders.csv.zst.age');
    const url = await writeDownloadBundle(client, bucket, where, {
      dump: { ...dump, database: 'app' },
      exports: [{ ...ledger, name: 'ledger', database: 'app', rows: 12 }, { ...open, name: 'open orders', database: 'app', rows: 0 }],
      ttlSeconds: 600,
    });
    const readme = await (await fetch(url)).text();
    expect(readme).toContain('## Selective exports (2)');
    expect(readme).toContain('12 rows from app');
    expect(await linkBefore(readme, 'dump')).toEqual(dump.bytes);
    expect(await linkBefore(readme, 'ledger.csv')).toEqual(ledger.bytes);
    expect(await linkBefore(readme, 'open_orders.csv')).toEqual(open.bytes);
  });

  it('a recovery bundle lists the exports after the recovery steps', async () => {
    await ensureBucket(client, bucket, s3.region);
    const base = await stored('strata/default/orders/b2/data/base.tar.zst.age');
    const ledger = await stored('strata/default/orders/b2/exports/ledger.csv.zst.age');
    const url = await writeRecoveryBundle(client, bucket, { ...where, restoreId: 'r2' }, { base, segments: [], exports: [{ ...ledger, name: 'ledger', rows: 3 }], ttlSeconds: 600 });
    const readme = await (await fetch(url)).text();
    expect(readme.indexOf('## Selective exports (1)')).toBeGreaterThan(readme.indexOf('## 3. Recover'));
    expect(await linkBefore(readme, 'ledger.csv')).toEqual(ledger.bytes);
  });
});
