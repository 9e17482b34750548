import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { segmentReportKey, type StrataReports, type StreamJob } from '@sigil/proto/strata-jobs';
import { createS3Client, ensureBucket, removeObjects, type S3Client } from '@strata/stream';
import { reportStoredSegment, scanWaitMs, uploadSegment, type SegmentFile } from '../src/jobs/segment-upload.ts';
import type { Reporter } from '../src/reports.ts';

/** A stored finished segment is reported again (not uploaded) only when the store holds this very file. */
const bucket = `mover-segments-${randomBytes(4).toString('hex')}`;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'segment-upload-'));
let client: S3Client;
let job: StreamJob;

interface Sent {
  type: string;
  data: StrataReports['segment.uploaded'];
}

function recorder(): Reporter & { sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    sent,
    async report(type, data) {
      sent.push({ type, data: data as StrataReports['segment.uploaded'] });
    },
    progress() {},
  };
}

function segmentFile(name: string, bytes: Buffer): SegmentFile {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return { file, name, timeline: 1, chainID: '7300000000000000001-1', startPos: '0/3000000', endPos: '0/4000000', partial: false, commits: 2, firstTime: '2026-11-26T10:00:00.000Z', lastTime: '2026-11-26T10:00:01.000Z' };
}

const withCompression = (algorithm: 'zstd' | 'none'): StreamJob => ({ ...job, compression: { ...job.compression, algorithm } });

beforeAll(async () => {
  const endpoint = process.env.S3_ENDPOINT;
  if (!endpoint) throw new Error('S3_ENDPOINT is not set: run through vitest (the global setup provides S3)');
  const identity = path.join(dir, 'identity.txt');
  execFileSync('age-keygen', ['-o', identity], { stdio: 'ignore' });
  const recipient = execFileSync('age-keygen', ['-y', identity]).toString().trim();
  const store = { endpoint, region: process.env.S3_REGION || 'us-east-1', bucket, prefix: 'strata', pathStyle: true, accessKeyId: process.env.S3_ACCESS_KEY ?? '', secretAccessKey: process.env.S3_SECRET_KEY ?? '', disableConditionalPut: false, partSizeBytes: 5 * 1024 * 1024, concurrency: 1 };
  client = createS3Client(store);
  await ensureBucket(client, bucket, store.region);
  job = {
    streamId: 'stream-1',
    namespace: 'default',
    name: 'pg',
    targetUid: 'uid-1',
    database: { engine: 'postgres', host: '127.0.0.1', port: 5432, username: 'postgres', password: '' },
    slot: 'strata_uid_1',
    store: { ...store, ageRecipients: [recipient] },
    compression: { algorithm: 'zstd', level: 'fastest', threads: 1 },
    partialIntervalMs: 60_000,
  };
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a finished segment the store already holds', () => {
  it('is reported again from the kept report, under the new stream, with the checksum of the first upload', async () => {
    const segment = segmentFile('000000010000000000000003', randomBytes(64 * 1024));
    const first = recorder();
    const key = await uploadSegment(job, client, first, segment, new AbortController().signal);
    const uploaded = first.sent[0]!.data;
    expect(uploaded.segment).toMatchObject({ key, rawSha256: expect.stringMatching(/^[0-9a-f]{64}$/), partial: false });

    const again = recorder();
    expect(await reportStoredSegment({ ...job, streamId: 'stream-2' }, client, again, segment)).toBe(true);
    expect(again.sent).toEqual([{ type: 'segment.uploaded', data: { ...uploaded, streamId: 'stream-2' } }]);
  });

  it('is found under the other compression when the policy changed since', async () => {
    const segment = segmentFile('000000010000000000000004', randomBytes(4096));
    await uploadSegment(withCompression('none'), client, recorder(), segment, new AbortController().signal);
    const again = recorder();
    expect(await reportStoredSegment(withCompression('zstd'), client, again, segment)).toBe(true);
    expect(again.sent[0]!.data.segment.compression).toBe('none');
  });

  it('is uploaded anew when the store has no report, other bytes, a report that is not one, or no object', async () => {
    const never = segmentFile('000000010000000000000005', randomBytes(4096));
    const none = recorder();
    expect(await reportStoredSegment(job, client, none, never)).toBe(false);

    // A server rolled back to a snapshot writes the same file name with other bytes.
    const original = segmentFile('000000010000000000000006', randomBytes(4096));
    const key = await uploadSegment(job, client, recorder(), original, new AbortController().signal);
    const rewritten = segmentFile('000000010000000000000006', randomBytes(4096));
    expect(await reportStoredSegment(job, client, none, rewritten)).toBe(false);

    const sidecar = segmentReportKey(key);
    const restored = segmentFile('000000010000000000000006', fs.readFileSync(rewritten.file));
    await uploadSegment(job, client, recorder(), restored, new AbortController().signal);
    await client.putObject(bucket, sidecar, Buffer.from('{"not":"a report"'));
    expect(await reportStoredSegment(job, client, none, restored)).toBe(false);

    await uploadSegment(job, client, recorder(), restored, new AbortController().signal);
    await removeObjects(client, bucket, [key]);
    expect(await reportStoredSegment(job, client, none, restored)).toBe(false);
    expect(none.sent).toEqual([]);
  });
});

describe('the wait before a streamer looks again', () => {
  it('is a scan (1 s) at most, until the next cut when that is sooner, and almost nothing when the cut is overdue', () => {
    expect(scanWaitMs(70_000, 10_000)).toBe(1000);
    expect(scanWaitMs(10_300, 10_000)).toBe(300);
    expect(scanWaitMs(9_000, 10_000)).toBe(50);
  });
});

describe('previews beside a segment', () => {
  const previews = { tables: { 'shop.customers': { inserts: [{ id: '1', email: '***' }], updates: [], deletes: [] } } };

  it('are stored beside it, encrypted, and reported with their key, checksum and rows', async () => {
    const sent = recorder();
    const key = await uploadSegment(job, client, sent, { ...segmentFile('mariadb-bin.000007', randomBytes(2048)), previews }, new AbortController().signal);
    const report = sent.sent[0]!.data.segment;
    expect(report).toMatchObject({ previewsKey: `${key}.previews.age`, previewsSha256: expect.stringMatching(/^[0-9a-f]{64}$/), previewRows: 1 });
    expect(report.previewsError).toBeUndefined();
    const chunks: Buffer[] = [];
    for await (const chunk of await client.getObject(bucket, report.previewsKey!)) chunks.push(chunk as Buffer);
    const stored = Buffer.concat(chunks);
    expect(stored.subarray(0, 21).toString('latin1')).toBe('age-encryption.org/v1');
    expect(stored.includes('shop.customers')).toBe(false);
  });

  it('that cannot be stored never stop the segment: it is uploaded and reported with previewsError', async () => {
    const sent = recorder();
    const broken = { ...job, store: { ...job.store, catalogRecipients: ['age1notarecipient'] } };
    const key = await uploadSegment(broken, client, sent, { ...segmentFile('mariadb-bin.000008', randomBytes(2048)), previews }, new AbortController().signal);
    const report = sent.sent[0]!.data.segment;
    expect(report.key).toBe(key);
    expect(report.previewsKey).toBeUndefined();
    expect(report.previewsError).toMatch(/^the previews could not be stored: /);
  });

  it('that could not be made are reported as such', async () => {
    const sent = recorder();
    await uploadSegment(job, client, sent, { ...segmentFile('mariadb-bin.000009', randomBytes(2048)), previewsError: 'the previews could not be made: connection lost' }, new AbortController().signal);
    expect(sent.sent[0]!.data.segment).toMatchObject({ previewsError: 'the previews could not be made: connection lost' });
    expect(sent.sent[0]!.data.segment.previewsKey).toBeUndefined();
  });
});
