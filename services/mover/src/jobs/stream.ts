import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import type { Logger } from '@sigil/kit/log';
import { chainIdOf, segmentKey, type SegmentSummary, type StreamJob } from '@sigil/proto/strata-jobs';
import { createS3Client, listKeys, removeObjects, type S3Client } from '@strata/stream';
import { open } from '../engines/postgres/shared.ts';
import { formatLsn, parseWalFileName, summarizeSegment, type PreviousSegment, type WalSummary } from '../engines/postgres/wal.ts';
import { ServerRelationNames } from '../engines/postgres/relation-names.ts';
import type { WalTransaction } from '../engines/postgres/wal-changes.ts';
import { databaseScope, summaryOrReason, type DatabaseScope } from '../engines/postgres/wal-summary.ts';
import { advanceSlot, completeSegments, ensureSlot, lockStream, partialSegment, serverWal, startReceiver, type Receiver, type ServerWal, walPoint } from '../engines/postgres/wal-receiver.ts';
import { LogicalPreviews, releaseLogicalSlots } from '../engines/postgres/logical-previews.ts';
import type { Reporter } from '../reports.ts';
import { messageOf } from './backup.ts';
import { reportStoredSegment, scanWaitMs, uploadSegment, waitForLock, type SegmentFile } from './segment-upload.ts';
import { runBinlogStream } from './binlog-stream.ts';
import { jobTempDir } from '../temp-dir.ts';

/** How long a cut waits for the receiver to hold everything the server had inserted when the cut began. */
const CATCH_UP_MS = 10_000;

/** What the catalog asks of a stopping streamer: drop the target's slots (it is gone), or only its previews' logical slots. */
export interface StopRequest {
  release: boolean;
  releasePreviews?: boolean;
}

export interface StreamControl {
  /** Resolves when the catalog asks this stream to stop (the target was suspended, deleted or lost change capture). */
  stopped: Promise<StopRequest>;
  /** Where what goes wrong without stopping the stream is told (a segment that could not be summarised). */
  log?: Pick<Logger, 'warn'>;
}

interface Cut {
  coveredUntil?: string;
  coveredPos?: string;
  coveredTimeline?: number;
}

/**
 * Streams a Postgres target's WAL into the store until the catalog stops it or the mover shuts down: every
 * finished segment, and the one being written every `partialIntervalMs`, is compressed, encrypted and uploaded as
 * a segment; the slot is advanced only past what is in the store, so a crash of the mover or of Postgres loses no WAL.
 */
export async function runStream(job: StreamJob, reporter: Reporter, signal: AbortSignal, control: StreamControl): Promise<void> {
  if (job.database.engine === 'mysql') return runBinlogStream(job, reporter, signal, control);
  if (job.database.engine !== 'postgres') throw new Error(`change capture of ${job.database.engine} is not available in this release`);
  let previewsProblem: string | undefined;
  const status = (state: 'streaming' | 'stopped' | 'failed', message: string, extra: Cut & { lagSeconds?: number; brokenReason?: string } = {}) =>
    reporter.report('stream.status', { streamId: job.streamId, namespace: job.namespace, name: job.name, state, message, at: new Date().toISOString(), ...extra, ...(previewsProblem ? { previewsProblem } : {}) });
  let client: pg.Client | undefined;
  let receiver: Receiver | undefined;
  let logical: LogicalPreviews | undefined;
  const dir = jobTempDir('strata-wal-');
  try {
    client = await open(job.database, 'postgres');
    let stop = false;
    let asked: StopRequest = { release: false };
    void control.stopped.then((request) => {
      stop = true;
      asked = request;
    });
    // A streamer being stopped (a suspend and a quick resume, a mover shutting down) holds the lock a little longer.
    const held = client;
    if (!(await waitForLock(() => lockStream(held, job.slot), () => stop, signal))) {
      await status('stopped', `another streamer already streams ${job.namespace}/${job.name} (slot ${job.slot})`);
      return;
    }
    const server = await serverWal(client);
    const slot = await ensureSlot(client, job.slot);
    const previews = await openPreviews(job, client);
    if ('problem' in previews) previewsProblem = previews.problem;
    else logical = previews.logical;
    const from = formatLsn(slot.restartLsn);
    await status('streaming', `streaming WAL from ${from} on timeline ${server.timeline} (slot ${job.slot}${slot.created ? ', created' : ''})`, slot.lost ? { brokenReason: `replication slot ${job.slot} lost WAL the chain needed (max_slot_wal_keep_size); the next full backup starts a new chain` } : {});
    receiver = startReceiver(job.database, dir, server.timeline, slot.restartLsn, server.segmentBytes, server.major);
    const streamer = new SegmentUploader(job, createS3Client(job.store), reporter, server, dir, signal, {
      log: control.log,
      scope: await databaseScope(client, job.databases),
      previews: logical ?? (previewsProblem ? { problem: previewsProblem } : undefined),
    });
    let advancedTo: bigint | undefined;
    const advance = async () => {
      if (streamer.retainFrom === undefined || streamer.retainFrom === advancedTo) return;
      await advanceSlot(held, job.slot, streamer.retainFrom);
      advancedTo = streamer.retainFrom;
    };
    let nextCut = Date.now() + job.partialIntervalMs;
    const failed = receiver.done.then(() => undefined, (error: unknown) => error as Error);
    while (!stop && !signal.aborted) {
      const problem = await Promise.race([failed, sleep(scanWaitMs(nextCut), signal)]);
      if (problem) {
        // The segments it finished before failing (its folder full, say) go to the store and the slot moves past them:
        // the next streamer starts there, so a backlog larger than the work folder still drains, attempt by attempt.
        await streamer.uploadFinished().catch(() => undefined);
        await advance().catch(() => undefined);
        throw new Error(`pg_receivewal: ${problem.message}`);
      }
      await streamer.uploadFinished();
      await advance();
      if (Date.now() >= nextCut) {
        nextCut = Date.now() + job.partialIntervalMs;
        const cut = await streamer.cut(client);
        await advance();
        await status('streaming', `streaming; covered up to ${cut.coveredPos ?? 'unknown'}`, { ...cut, ...(cut.coveredUntil ? { lagSeconds: Math.max(0, (Date.now() - Date.parse(cut.coveredUntil)) / 1000) } : {}) });
      }
    }
    await receiver.stop();
    // What finished before the stop is uploaded; the rest stays in the slot for the next streamer.
    await streamer.uploadFinished();
    await advance();
    const { release, releasePreviews } = asked;
    if (release) await client.query('SELECT pg_drop_replication_slot($1)', [job.slot]).catch(() => undefined);
    await logical?.close();
    const dropped = release || releasePreviews ? await releaseLogicalSlots(client, job.database, job.slot).catch(() => []) : [];
    const released = [...(release ? [job.slot] : []), ...dropped];
    await status('stopped', signal.aborted ? 'the mover is shutting down; another streamer takes over' : `stopped by the catalog${released.length ? `; slot${released.length > 1 ? 's' : ''} ${released.join(', ')} released` : ''}`);
    if (signal.aborted) throw new Error('the mover is shutting down');
  } catch (error) {
    if (!signal.aborted) await status('failed', messageOf(error)).catch(() => undefined);
    throw error;
  } finally {
    await receiver?.stop();
    await logical?.close();
    await client?.end().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The target's previews, when it wants them: its logical slots opened (the reason when the server cannot make them);
 * when it does not, logical slots an earlier streamer left are dropped so the server keeps no WAL for them.
 */
async function openPreviews(job: StreamJob, client: pg.Client): Promise<{ logical?: LogicalPreviews } | { problem: string }> {
  if (!job.previews) {
    await releaseLogicalSlots(client, job.database, job.slot);
    return {};
  }
  const opened = await LogicalPreviews.open(job.database, job.slot, job.databases, job.previews);
  return 'problem' in opened ? opened : { logical: opened.previews };
}

interface UploaderOptions {
  log?: Pick<Logger, 'warn'>;
  scope?: DatabaseScope;
  /** Where the previews come from (the target wants them), or why they cannot be made. */
  previews?: LogicalPreviews | { problem: string };
}

class SegmentUploader {
  private lastPartialEnd = -1n;
  /**
   * The start of the newest finished segment in the store: the slot may advance to it. That segment stays on the
   * server, so the next streamer reads it first and has the start of a record crossing into the segment after it.
   */
  retainFrom: bigint | undefined;
  /** The last finished segment, kept until the next one is read: a record crossing into that one starts in it. */
  private previous: PreviousSegment | undefined;
  private readonly partialKeys = new Map<string, string[]>();
  private readonly compressed: boolean;
  private readonly job: StreamJob;
  private readonly client: S3Client;
  private readonly reporter: Reporter;
  private readonly server: ServerWal;
  private readonly dir: string;
  private readonly signal: AbortSignal;
  private readonly names: ServerRelationNames;
  private readonly log: Pick<Logger, 'warn'> | undefined;
  /** Where the previews come from (the target wants them), or why they cannot be made. */
  private readonly previews: LogicalPreviews | { problem: string } | undefined;

  /** The target's databases: a summary counts only their tables. */
  private readonly scope: DatabaseScope;

  constructor(job: StreamJob, client: S3Client, reporter: Reporter, server: ServerWal, dir: string, signal: AbortSignal, options: UploaderOptions) {
    this.names = new ServerRelationNames(job.database);
    this.previews = options.previews;
    this.scope = options.scope;
    this.log = options.log;
    this.job = job;
    this.client = client;
    this.reporter = reporter;
    this.server = server;
    this.dir = dir;
    this.signal = signal;
    this.compressed = job.compression.algorithm === 'zstd';
  }

  /** Uploads every finished segment, oldest first (`retainFrom` follows); one already in the store is reported again. */
  async uploadFinished(): Promise<void> {
    for (const name of completeSegments(this.dir, this.server.segmentBytes)) {
      const file = path.join(this.dir, name);
      const { start, timeline } = parseWalFileName(name, this.server.segmentBytes);
      const summary = await summarizeSegment(file, this.server.major, this.server.segmentBytes, this.previous);
      const end = start + BigInt(this.server.segmentBytes);
      const stored = await reportStoredSegment(this.job, this.client, this.reporter, { file, chainID: chainIdOf(this.server.systemId, timeline), name });
      if (!stored) await this.upload(file, name, { ...summary, endPos: end }, false, summary.lastTime);
      if (this.previews instanceof LogicalPreviews) await this.previews.advance(end);
      await this.removePartials(name);
      this.keep(file, summary.lastRecord, summary.changes.open);
      this.retainFrom = start;
    }
  }

  /**
   * Uploads the segment being written as a partial one. It covers the moment the cut began (on the server's clock)
   * once it holds the WAL inserted by then; an idle server's unchanged segment is not uploaded again.
   */
  async cut(client: pg.Client): Promise<Cut> {
    const { at: began, lsn: inserted } = await walPoint(client, this.server.segmentBytes);
    const deadline = Date.now() + CATCH_UP_MS;
    for (;;) {
      const partial = partialSegment(this.dir);
      if (!partial) return {};
      // The segments before this one go in first: a partial upload never lands ahead of the file it follows.
      await this.uploadFinished();
      const name = partial.slice(0, -'.partial'.length);
      const { start } = parseWalFileName(name, this.server.segmentBytes);
      const copyDir = fs.mkdtempSync(path.join(this.dir, 'cut-'));
      try {
        const copy = path.join(copyDir, name);
        if (!copied(path.join(this.dir, partial), copy)) continue; // finished (renamed) meanwhile: look again
        const summary = await summarizeSegment(copy, this.server.major, this.server.segmentBytes, this.previous);
        const coverage = cutCoverage(summary, inserted, began, Date.now() >= deadline);
        if (coverage === 'wait') {
          await sleep(200, this.signal);
          continue;
        }
        const { coveredUntil } = coverage;
        if (summary.endPos > this.lastPartialEnd && summary.endPos > start) {
          await this.upload(copy, name, summary, true, coveredUntil);
          this.lastPartialEnd = summary.endPos;
        }
        return { ...(coveredUntil ? { coveredUntil } : {}), coveredPos: formatLsn(summary.endPos), coveredTimeline: this.server.timeline };
      } finally {
        fs.rmSync(copyDir, { recursive: true, force: true });
      }
    }
  }

  private async upload(file: string, name: string, summary: WalSummary, partial: boolean, coveredUntil: string | undefined): Promise<void> {
    const { timeline, start } = parseWalFileName(name, this.server.segmentBytes);
    // The server decodes the previews while the segment is summarised, compressed, encrypted and uploaded here.
    const previewsLater = this.rowPreviews(start, summary.endPos);
    const key = await uploadSegment(this.job, this.client, this.reporter, {
      file, name, timeline, chainID: chainIdOf(this.server.systemId, timeline), startPos: formatLsn(start), endPos: formatLsn(summary.endPos), partial,
      commits: summary.commits, ...(await this.changeSummary(name, summary)), previewsLater, ...(summary.firstTime ? { firstTime: summary.firstTime } : {}), ...(summary.lastTime ? { lastTime: summary.lastTime } : {}), ...(coveredUntil ? { coveredUntil } : {}),
    }, this.signal);
    if (partial) this.partialKeys.set(name, [...(this.partialKeys.get(name) ?? []), key]);
  }

  /** What the segment's transactions did; a failure leaves the segment without a summary, never stops its upload. */
  private changeSummary(name: string, summary: WalSummary): Promise<{ summary: SegmentSummary } | { summaryError: string }> {
    return summaryOrReason(summary.changes, this.names, (cause) => this.log?.warn({ segment: name, err: cause }, 'segment uploaded without a change summary'), this.scope);
  }

  /** The masked sample rows of the transactions committed in [start, end); a failure is the segment's `previewsError`. */
  private async rowPreviews(start: bigint, end: bigint): Promise<Pick<SegmentFile, 'previews' | 'previewsError'>> {
    if (!this.previews) return {};
    if (!(this.previews instanceof LogicalPreviews)) return { previewsError: this.previews.problem };
    try {
      return { previews: await this.previews.forSegment(start, end) };
    } catch (error) {
      return { previewsError: `the previews could not be made: ${messageOf(error)}` };
    }
  }

  /** Keeps `file` (just uploaded) as the previous segment, in place of the one before it. */
  private keep(file: string, lastRecord: bigint | undefined, open?: Map<number, WalTransaction>): void {
    if (this.previous) fs.rmSync(this.previous.file, { force: true });
    this.previous = undefined;
    if (lastRecord === undefined) {
      fs.rmSync(file);
      return;
    }
    const kept = path.join(this.dir, '.previous', path.basename(file));
    fs.mkdirSync(path.dirname(kept), { recursive: true });
    fs.renameSync(file, kept);
    this.previous = { file: kept, lastRecord, ...(open?.size ? { open } : {}) };
  }

  /** A finished segment replaces its partial uploads (this streamer's and those a stopped one left). */
  private async removePartials(name: string): Promise<void> {
    const { timeline } = parseWalFileName(name, this.server.segmentBytes);
    const prefix = segmentKey(this.job.store.prefix, this.job.namespace, this.job.name, chainIdOf(this.server.systemId, timeline), name, false, 'X').replace(/X\.age$/, '');
    const keys = new Set(this.partialKeys.get(name) ?? []);
    for await (const key of listKeys(this.client, this.job.store.bucket, prefix)) keys.add(key);
    if (keys.size) await removeObjects(this.client, this.job.store.bucket, [...keys]).catch(() => undefined);
    this.partialKeys.delete(name);
    this.lastPartialEnd = -1n;
  }
}

/** Copies `from`, or answers false when it is gone (pg_receivewal renamed a partial segment it finished). */
function copied(from: string, to: string): boolean {
  try {
    fs.copyFileSync(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/**
 * What a partial segment cut at `began` covers: that moment once it holds the WAL the server had inserted then;
 * a receiver still behind (catching up after a restart, or a segment the server already left) covers only its
 * last commit, and is first given time to catch up.
 */
export function cutCoverage(summary: { endPos: bigint; lastTime?: string }, inserted: bigint, began: Date, waitedOut: boolean): 'wait' | { coveredUntil?: string } {
  if (summary.endPos >= inserted) return { coveredUntil: began.toISOString() };
  if (!waitedOut) return 'wait';
  return summary.lastTime ? { coveredUntil: summary.lastTime } : {};
}

function sleep(ms: number, signal: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve(undefined);
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
