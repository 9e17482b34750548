/** What the WAL and binlog streamers share: uploading one segment and reporting it, and waiting for a streamer's lock. */
import fs from 'node:fs';
import { segmentKey, segmentReportKey, type SegmentReport, type StrataReports, type StreamJob } from '@sigil/proto/strata-jobs';
import { assertStrataReportData } from '@sigil/proto/strata-wire';
import { readSmallObject, runUploadPipeline, type S3Client } from '@strata/stream';
import type { Reporter } from '../reports.ts';

export interface SegmentFile {
  /** Where the bytes are (a finished file, or a copy of the one being written). */
  file: string;
  name: string;
  timeline: number;
  chainID: string;
  startPos: string;
  endPos: string;
  partial: boolean;
  commits: number;
  firstTime?: string;
  lastTime?: string;
  coveredUntil?: string;
}

function keyOf(job: StreamJob, segment: Pick<SegmentFile, 'chainID' | 'name' | 'partial' | 'endPos'>): string {
  return segmentKey(job.store.prefix, job.namespace, job.name, segment.chainID, segment.name, job.compression.algorithm === 'zstd', segment.partial ? segment.endPos : undefined);
}

/**
 * A finished segment already in the store (an earlier streamer uploaded it) is reported again from the report kept
 * beside it, not uploaded again: that report was made with the file before it at hand. False when none is kept.
 */
export async function reportStoredSegment(job: StreamJob, client: S3Client, reporter: Reporter, segment: Pick<SegmentFile, 'chainID' | 'name'>): Promise<boolean> {
  const key = keyOf(job, { ...segment, partial: false, endPos: '' });
  const kept = await readSmallObject(client, job.store.bucket, segmentReportKey(key));
  if (!kept) return false;
  const data: unknown = JSON.parse(kept.toString('utf8'));
  assertStrataReportData('segment.uploaded', data);
  if (data.segment.key !== key || data.segment.partial) return false;
  await reporter.report('segment.uploaded', { ...data, streamId: job.streamId });
  return true;
}

/** Compresses, encrypts and uploads a segment, keeps its report beside it, then reports it; answers its key. */
export async function uploadSegment(job: StreamJob, client: S3Client, reporter: Reporter, segment: SegmentFile, signal: AbortSignal): Promise<string> {
  const key = keyOf(job, segment);
  const stored = await runUploadPipeline({
    source: fs.createReadStream(segment.file),
    compression: job.compression,
    recipients: job.store.ageRecipients,
    client,
    bucket: job.store.bucket,
    key,
    partSizeBytes: job.store.partSizeBytes,
    concurrency: 1,
    bandwidthBytesPerSecond: 0,
    stallTimeoutMs: 60_000,
    signal,
    contentType: 'application/octet-stream',
  });
  const report: SegmentReport = {
    chainID: segment.chainID,
    timeline: segment.timeline,
    name: segment.name,
    key,
    startPos: segment.startPos,
    endPos: segment.endPos,
    commits: segment.commits,
    ...(segment.firstTime ? { firstTime: segment.firstTime } : {}),
    ...(segment.lastTime ? { lastTime: segment.lastTime } : {}),
    sha256: stored.sha256,
    size: stored.storedBytes,
    rawSize: stored.rawBytes,
    partial: segment.partial,
    compression: job.compression.algorithm,
    uploadedAt: new Date().toISOString(),
    ...(segment.coveredUntil ? { coveredUntil: segment.coveredUntil } : {}),
  };
  const uploaded: StrataReports['segment.uploaded'] = { streamId: job.streamId, namespace: job.namespace, name: job.name, segment: report };
  // Kept beside the segment before it is reported, so a catalog that lost its database can record it again.
  const sidecar = Buffer.from(JSON.stringify(uploaded));
  await client.putObject(job.store.bucket, segmentReportKey(key), sidecar, sidecar.length, { 'Content-Type': 'application/json' });
  await reporter.report('segment.uploaded', uploaded);
  return key;
}

/** How long a new streamer waits for the lock that a stopping one still holds (a suspend and a quick resume). */
const LOCK_WAIT_MS = 60_000;

/** Tries `lock` every second for a while, unless the stream is stopped or the mover shuts down meanwhile. */
export async function waitForLock(lock: () => Promise<boolean>, stopped: () => boolean, signal: AbortSignal): Promise<boolean> {
  const until = Date.now() + LOCK_WAIT_MS;
  let locked = await lock();
  while (!locked && !stopped() && !signal.aborted && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    locked = await lock();
  }
  return locked;
}
