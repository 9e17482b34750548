import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import type { BackupStoreSpec } from '@sigil/proto/resources';
import { segmentKey, segmentReportKey, type StrataReports } from '@sigil/proto/strata-jobs';
import { createS3Client, ensureBucket } from '@strata/stream';
import { startCatalogHarness, generateAgeIdentity, type CatalogHarness } from './helpers.ts';
import { s3Env, stackDocuments } from './fixtures.ts';

/**
 * The mirror rebuilding segment records from the reports beside the segments (a catalog database lost) while a
 * streamer keeps writing: a report that cannot be read (a superseded partial's, deleted after the listing; one not
 * yet whole) is left for the next pass and named, and every other segment comes back.
 */
const bucket = `strata-mirror-${randomBytes(3).toString('hex')}`;
const CHAIN = '7000000000000000002-1';
let h: CatalogHarness;
const s3 = () => createS3Client({ ...s3Env(), accessKeyId: s3Env().accessKey, secretAccessKey: s3Env().secretKey, pathStyle: true });

async function putSegment(n: number, report: (data: StrataReports['segment.uploaded']) => string = (data) => JSON.stringify(data)): Promise<string> {
  const name = `00000001000000000000000${n}`;
  const key = segmentKey('strata', 'default', 'postgres-main', CHAIN, name, true);
  const data: StrataReports['segment.uploaded'] = {
    streamId: 'stream-1',
    namespace: 'default',
    name: 'postgres-main',
    segment: { chainID: CHAIN, timeline: 1, name, key, startPos: `0/${n}000000`, endPos: `0/${n + 1}000000`, commits: 1, sha256: 'b'.repeat(64), size: 4, rawSize: 16, partial: false, compression: 'zstd', uploadedAt: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString() },
  };
  await s3().putObject(bucket, key, Buffer.from('wal!'));
  await s3().putObject(bucket, segmentReportKey(key), Buffer.from(report(data)));
  return key;
}

beforeAll(async () => {
  h = await startCatalogHarness('mirror_segments');
  const { recipient } = await generateAgeIdentity();
  const docs = stackDocuments({ bucket, recipients: [recipient], postgres: { host: '127.0.0.1', port: 5432, username: 'postgres' } });
  expect((await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml')).status).toBe(200);
  await ensureBucket(s3(), bucket, s3Env().region);
});
afterAll(async () => h?.close());

describe('the mirror rebuilding segments from their reports', () => {
  it('brings back every readable segment, names the report it could not read, and takes it at the next pass', async () => {
    const first = await putSegment(1);
    const torn = await putSegment(2, (data) => JSON.stringify(data).slice(0, 40));
    const third = await putSegment(3);
    await h.runtime.mirror();
    const recorded = async () => (await h.runtime.db.segment.findMany({ orderBy: { startLsn: 'asc' }, select: { key: true } })).map((row) => row.key);
    expect(await recorded()).toEqual([first, third]);
    const store = await h.runtime.deps.resources.get<BackupStoreSpec>(h.runtime.db, 'BackupStore', 'default', 'local');
    const mirrored = (store?.status as { conditions?: Array<{ type: string; status: string; message: string }> }).conditions?.find((c) => c.type === 'Mirrored');
    expect(mirrored).toMatchObject({ status: 'True', message: expect.stringContaining(`1 segment report(s) could not be read (${segmentReportKey(torn)})`) });

    await putSegment(2);
    await h.runtime.mirror();
    expect(await recorded()).toEqual([first, torn, third]);
  });
});
