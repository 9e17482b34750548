/**
 * What the WAL and binlog streamers share: uploading one segment and reporting it (or reporting again one the store
 * already holds), the wait between two looks, and waiting for a streamer's lock.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { segmentKey, segmentReportKey, type SegmentPreviews, type SegmentReport, type SegmentSummary, type StrataReports, type StreamJob } from '@sigil/proto/strata-jobs';
import { assertStrataReportData } from '@sigil/proto/strata-wire';
import { objectExists, readSmallObject, runUploadPipeline, type S3Client } from '@strata/stream';
import type { Reporter } from '../reports.ts';
import { messageOf } from './backup.ts';
import { previewRows, uploadPreviews } from './segment-previews.ts';
import { storeUpload } from './upload.ts';

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
  /** What the segment's committed transactions did; without it, `summaryError` says why there is none. */
  summary?: SegmentSummary;
  summaryError?: string;
  /** Masked sample rows (the target's previews are on); without them, `previewsError` says why there are none. */
  previews?: SegmentPreviews;
  previewsError?: string;
  /** The same, still being made while the segment uploads (Postgres: the server decodes them meanwhile). */
  previewsLater?: Promise<Pick<SegmentFile, 'previews' | 'previewsError'>>;
}

function keyOf(job: StreamJob, segment: Pick<SegmentFile, 'chainID' | 'name' | 'partial' | 'endPos'>, compressed = job.compression.algorithm === 'zstd'): string {
  return segmentKey(job.store.prefix, job.namespace, job.name, segment.chainID, segment.name, compressed, segment.partial ? segment.endPos : undefined);
}

/** SHA-256 of a file's own bytes. */
async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * A finished segment already in the store (an earlier streamer uploaded it) is reported again from the report kept
 * beside it, not uploaded again: that report was made with the file before it at hand. False when the store does
 * not hold this very file (no report, no object, other bytes: a server rolled back to a snapshot writes the same
 * names anew), and it must be uploaded.
 */
export async function reportStoredSegment(job: StreamJob, client: S3Client, reporter: Reporter, segment: Pick<SegmentFile, 'file' | 'chainID' | 'name'>): Promise<boolean> {
  const stored = await storedReport(job, client, segment);
  if (stored) await reporter.report('segment.uploaded', { ...stored, streamId: job.streamId });
  return stored !== undefined;
}

/** The report kept for this file's bytes, stored with either compression (the policy may have changed since). */
async function storedReport(job: StreamJob, client: S3Client, segment: Pick<SegmentFile, 'file' | 'chainID' | 'name'>): Promise<StrataReports['segment.uploaded'] | undefined> {
  let rawSha256: string | undefined;
  for (const compressed of [true, false]) {
    const key = keyOf(job, { ...segment, partial: false, endPos: '' }, compressed);
    const kept = parseReport(await readSmallObject(client, job.store.bucket, segmentReportKey(key)));
    if (!kept || kept.segment.key !== key || kept.segment.partial || !kept.segment.rawSha256) continue;
    rawSha256 ??= await fileSha256(segment.file);
    if (kept.segment.rawSha256 === rawSha256 && (await objectExists(client, job.store.bucket, key))) return kept;
  }
  return undefined;
}

/** A kept report, or undefined when there is none or it is not one (it is then written anew with the upload). */
export function parseReport(bytes: Buffer | undefined): StrataReports['segment.uploaded'] | undefined {
  if (!bytes) return undefined;
  try {
    const data: unknown = JSON.parse(bytes.toString('utf8'));
    assertStrataReportData('segment.uploaded', data);
    return data;
  } catch {
    return undefined;
  }
}

/**
 * Compresses, encrypts and uploads a segment, then its previews (a failure there is reported with the segment, never
 * stops it), keeps its report beside it, then reports it; answers its key.
 */
export async function uploadSegment(job: StreamJob, client: S3Client, reporter: Reporter, segment: SegmentFile, signal: AbortSignal): Promise<string> {
  const key = keyOf(job, segment);
  const stored = await runUploadPipeline({
    ...storeUpload(job, client, key, signal),
    source: fs.createReadStream(segment.file),
    concurrency: 1,
    bandwidthBytesPerSecond: 0,
    stallTimeoutMs: 60_000,
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
    rawSha256: await fileSha256(segment.file),
    size: stored.storedBytes,
    rawSize: stored.rawBytes,
    partial: segment.partial,
    compression: job.compression.algorithm,
    uploadedAt: new Date().toISOString(),
    ...(segment.coveredUntil ? { coveredUntil: segment.coveredUntil } : {}),
    ...(segment.summary ? { summary: segment.summary } : { summaryError: segment.summaryError ?? 'the segment was not summarised' }),
    ...(await storePreviews(job, client, key, segment, signal)),
  };
  const uploaded: StrataReports['segment.uploaded'] = { streamId: job.streamId, namespace: job.namespace, name: job.name, segment: report };
  // Kept beside the segment before it is reported, so a catalog that lost its database can record it again.
  const sidecar = Buffer.from(JSON.stringify(uploaded));
  await client.putObject(job.store.bucket, segmentReportKey(key), sidecar, sidecar.length, { 'Content-Type': 'application/json' });
  await reporter.report('segment.uploaded', uploaded);
  return key;
}

async function storePreviews(job: StreamJob, client: S3Client, key: string, file: SegmentFile, signal: AbortSignal): Promise<Pick<SegmentReport, 'previewsKey' | 'previewsSha256' | 'previewRows' | 'previewsError'>> {
  const segment = file.previewsLater ? { ...file, ...(await file.previewsLater) } : file;
  if (segment.previewsError !== undefined) return { previewsError: segment.previewsError };
  if (!segment.previews) return {};
  try {
    const stored = await uploadPreviews(job, client, key, segment.previews, signal);
    return { previewsKey: stored.key, previewsSha256: stored.sha256, previewRows: previewRows(segment.previews) };
  } catch (error) {
    return { previewsError: `the previews could not be stored: ${messageOf(error)}` };
  }
}

/** How often a streamer looks for finished files; partial uploads follow the job's own interval. */
const SCAN_MS = 1000;

/** How long a streamer waits before its next look: a cut already due (the last round took longer) waits almost nothing. */
export function scanWaitMs(nextCut: number, now = Date.now()): number {
  return Math.max(50, Math.min(SCAN_MS, nextCut - now));
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
