import fs from 'node:fs';
import { segmentReportKey, type RestoreJob, type SegmentObject } from '@sigil/proto/strata-jobs';
import { objectExists, readSmallObject, runDownloadPipeline, type S3Client } from '@strata/stream';
import { parseLsn, parseWalFileName } from '../engines/postgres/wal.ts';
import { parseReport } from './segment-upload.ts';

/** What a restore fetched for one segment of its plan. */
export interface FetchedSegment {
  /** For messages: the file's name, and which upload of it was used. */
  label: string;
  /** The partial upload named was gone; its file's complete upload, cut, stands in for it. */
  replaced: boolean;
}

type Fetch = Pick<RestoreJob, 'store' | 'bandwidthBytesPerSecond' | 'stallTimeoutMs'>;

/**
 * Fetches one segment of a restore's plan into `file` (checked against its SHA-256, decrypted, decompressed).
 *
 * A partial upload the plan names may be gone by the time the restore reaches it: the WAL streamer removes a file's
 * partial uploads as soon as its complete upload is stored, and garbage collection removes any left, while a plan made
 * a moment earlier still names one. The complete upload holds the same records and those written after them; it is
 * fetched instead and cut where the partial ended (`endPos`), so the replay stops exactly where the plan said: a WAL
 * file keeps its size with zeros past that point (where recovery then finds the end of the WAL, as in the partial), a
 * binlog is truncated there (a binlog's partial upload is the file cut at a transaction's end).
 */
export async function fetchSegment(job: Fetch, client: S3Client, segment: SegmentObject, file: string, signal: AbortSignal): Promise<FetchedSegment> {
  const label = `${segment.name}${segment.partial ? ' (partial)' : ''}`;
  try {
    await download(job, client, segment, file, signal);
    return { label, replaced: false };
  } catch (error) {
    if (!segment.partial || !segment.endPos || signal.aborted || (await objectExists(client, job.store.bucket, segment.key))) throw error;
    const complete = await completeUpload(job, client, segment.key);
    if (!complete) throw error;
    await download(job, client, complete, file, signal);
    cutAt(file, segment.name, segment.endPos);
    return { label: `${segment.name}: its complete upload, cut at ${segment.endPos} where the partial upload the plan named (since removed) ended`, replaced: true };
  }
}

async function download(job: Fetch, client: S3Client, object: Pick<SegmentObject, 'key' | 'sha256' | 'compression'>, file: string, signal: AbortSignal): Promise<void> {
  await runDownloadPipeline({
    client, bucket: job.store.bucket, key: object.key, expectedSha256: object.sha256, identity: job.store.identity, compression: object.compression,
    sink: fs.createWriteStream(file), bandwidthBytesPerSecond: job.bandwidthBytesPerSecond, stallTimeoutMs: job.stallTimeoutMs, signal,
  });
}

/**
 * The complete upload of the file a partial upload belongs to (`<file>.partial.<end>[.zst].age` → `<file>[.zst].age`,
 * either compression: the policy may have changed in between), with the checksum its kept report gives.
 */
async function completeUpload(job: Fetch, client: S3Client, partialKey: string): Promise<Pick<SegmentObject, 'key' | 'sha256' | 'compression'> | undefined> {
  const base = partialKey.split('.partial.')[0];
  for (const key of [`${base}.zst.age`, `${base}.age`]) {
    const report = parseReport(await readSmallObject(client, job.store.bucket, segmentReportKey(key)));
    if (report && report.segment.key === key && !report.segment.partial) return { key, sha256: report.segment.sha256, compression: report.segment.compression };
  }
  return undefined;
}

/** Cuts a fetched complete file where a partial upload of it ended: `X/Y` in a WAL file, `file:offset` in a binlog. */
export function cutAt(file: string, name: string, endPos: string): void {
  const binlog = /^(.+):(\d+)$/.exec(endPos);
  if (binlog) {
    if (binlog[1] !== name) throw new Error(`the partial upload of ${name} ends in another file (${endPos})`);
    fs.truncateSync(file, Number(binlog[2]));
    return;
  }
  const size = fs.statSync(file).size;
  const offset = Number(parseLsn(endPos) - parseWalFileName(name, size).start);
  if (offset < 0 || offset > size) throw new Error(`the partial upload of ${name} ends outside it (${endPos})`);
  const fd = fs.openSync(file, 'r+');
  try {
    fs.writeSync(fd, Buffer.alloc(size - offset), 0, size - offset, offset);
  } finally {
    fs.closeSync(fd);
  }
}
