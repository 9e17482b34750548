import fs from 'node:fs';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { chainIdOf, segmentKey, type StreamJob } from '@sigil/proto/strata-jobs';
import { createS3Client, listKeys, type S3Client } from '@strata/stream';
import { changesIn } from '../engines/mysql/binlog-changes.ts';
import { binlogIndex, nextBinlog, startBinlogReceiver, summarizeBinlog, type BinlogReceiver, type BinlogSummary } from '../engines/mysql/binlog.ts';
import { open, rows, str, num } from '../engines/mysql/shared.ts';
import { summaryOf } from '../engines/change-summary.ts';
import type { Reporter } from '../reports.ts';
import { messageOf } from './backup.ts';
import { MysqlColumnNames, mysqlPreviews } from './segment-previews.ts';
import { scanWaitMs, uploadSegment, waitForLock, type SegmentFile } from './segment-upload.ts';
import type { StreamControl } from './stream.ts';
import { jobTempDir } from '../temp-dir.ts';

const CATCH_UP_MS = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Streams a MariaDB/MySQL target's binlogs into the store: every finished binlog file, and the one being written
 * every `partialIntervalMs` (cut at its last transaction end), compressed, encrypted and uploaded as a segment.
 * The server keeps its binlogs (`expire_logs_days`); a new streamer starts at the file the catalog names.
 */
export async function runBinlogStream(job: StreamJob, reporter: Reporter, signal: AbortSignal, control: StreamControl): Promise<void> {
  const status = (state: 'streaming' | 'stopped' | 'failed', message: string, extra: { coveredUntil?: string; coveredPos?: string; coveredTimeline?: number; lagSeconds?: number } = {}) =>
    reporter.report('stream.status', { streamId: job.streamId, namespace: job.namespace, name: job.name, state, message, at: new Date().toISOString(), ...extra });
  let connection: mysql.Connection | undefined;
  let receiver: BinlogReceiver | undefined;
  const dir = jobTempDir('strata-binlog-');
  let stop = false;
  void control.stopped.then(() => (stop = true));
  try {
    connection = await open(job.database, undefined);
    const held = connection;
    const lock = async () => num((await rows(held, 'SELECT GET_LOCK(?, 0) AS l', [`strata-stream:${job.slot}`]))[0]?.l) === 1;
    if (!(await waitForLock(lock, () => stop, signal))) {
      await status('stopped', `another streamer already streams ${job.namespace}/${job.name}`);
      return;
    }
    const master = async () => {
      const row = (await rows(connection!, 'SHOW MASTER STATUS'))[0];
      if (!row) throw new Error('binary logging is off on the server (log_bin); change capture needs it');
      return { file: str(row.File), position: num(row.Position) };
    };
    const serverId = str((await rows(connection, 'SELECT @@server_id AS id'))[0]?.id);
    const client = createS3Client(job.store);
    // The store says where the last streamer got to (a redelivered job's own startFile may be older than that).
    const startFile = (await newestStoredBinlog(client, job, chainIdOf(serverId, 1))) ?? job.startFile ?? (await master()).file;
    await status('streaming', `streaming binlogs from ${startFile}`);
    receiver = startBinlogReceiver(job.database, dir, startFile);
    const uploader = new BinlogUploader(job, client, reporter, serverId, dir, signal, new MysqlColumnNames(connection));
    const failed = receiver.done.then(() => undefined, (error: unknown) => error as Error);
    let nextCut = Date.now() + job.partialIntervalMs;
    while (!stop && !signal.aborted) {
      const problem = await Promise.race([failed, sleep(scanWaitMs(nextCut)).then(() => undefined)]);
      if (problem) throw new Error(`mariadb-binlog: ${problem.message}`);
      await uploader.uploadFinished();
      if (Date.now() < nextCut) continue;
      nextCut = Date.now() + job.partialIntervalMs;
      const began = new Date();
      const at = await master();
      const cut = await uploader.cut(at, began);
      await status('streaming', `streaming; covered up to ${cut.coveredPos ?? 'unknown'}`, { ...cut, ...(cut.coveredUntil ? { lagSeconds: Math.max(0, (Date.now() - Date.parse(cut.coveredUntil)) / 1000) } : {}) });
    }
    await receiver.stop();
    await uploader.uploadFinished();
    await status('stopped', signal.aborted ? 'the mover is shutting down; another streamer takes over' : 'stopped by the catalog');
    if (signal.aborted) throw new Error('the mover is shutting down');
  } catch (error) {
    if (!signal.aborted) await status('failed', messageOf(error)).catch(() => undefined);
    throw error;
  } finally {
    await receiver?.stop();
    await connection?.end().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Where the last streamer got to: the oldest binlog file in the store that has only partial uploads (the rest of
 * it was never uploaded, whatever came after), else the file after the newest finished one.
 */
async function newestStoredBinlog(client: S3Client, job: StreamJob, chain: string): Promise<string | undefined> {
  const prefix = segmentKey(job.store.prefix, job.namespace, job.name, chain, 'x', false).replace(/x\.age$/, '');
  const stored = new Map<string, boolean>();
  for await (const key of listKeys(client, job.store.bucket, prefix)) {
    const match = /^([^/]*?\.\d+)(\.partial\..*|\.zst)?\.age$/.exec(key.slice(prefix.length));
    if (match?.[1]) stored.set(match[1], (stored.get(match[1]) ?? false) || !match[2]?.startsWith('.partial.'));
  }
  return resumeFile(stored);
}

/** `stored`: binlog file → whether a finished upload of it is in the store. */
export function resumeFile(stored: Map<string, boolean>): string | undefined {
  const names = [...stored.keys()].sort((a, b) => binlogIndex(a) - binlogIndex(b));
  const newestFinished = names.filter((name) => stored.get(name)).at(-1);
  const unfinished = names.find((name) => !stored.get(name) && (!newestFinished || binlogIndex(name) > binlogIndex(newestFinished)));
  return unfinished ?? (newestFinished ? nextBinlog(newestFinished) : undefined);
}

class BinlogUploader {
  private lastPartialEnd = -1;
  /** What the last look at the file being written found, so the next one decodes only what follows. */
  private scanned: { name: string; summary: BinlogSummary } | undefined;
  private readonly job: StreamJob;
  private readonly client: S3Client;
  private readonly reporter: Reporter;
  private readonly serverId: string;
  private readonly dir: string;
  private readonly signal: AbortSignal;
  private readonly columnNames: MysqlColumnNames;

  constructor(job: StreamJob, client: S3Client, reporter: Reporter, serverId: string, dir: string, signal: AbortSignal, columnNames: MysqlColumnNames) {
    this.job = job;
    this.client = client;
    this.reporter = reporter;
    this.serverId = serverId;
    this.dir = dir;
    this.signal = signal;
    this.columnNames = columnNames;
  }

  private files(): string[] {
    // The receiver's files only: not the copies a cut makes (`.cut-<name>`).
    return fs.readdirSync(this.dir).filter((name) => !name.startsWith('.') && /\.\d+$/.test(name)).sort((a, b) => binlogIndex(a) - binlogIndex(b));
  }

  /** Every file but the newest (or every file before `newest`) is finished (the server rotated): upload it whole. */
  async uploadFinished(newest?: string): Promise<void> {
    const files = this.files();
    const finished = newest ? files.filter((name) => binlogIndex(name) < binlogIndex(newest)) : files.slice(0, -1);
    for (const name of finished) {
      const file = path.join(this.dir, name);
      const summary = await summarizeBinlog(file, this.scanned?.name === name ? this.scanned.summary : undefined, this.job.previews);
      await this.upload(file, name, summary, `${nextBinlog(name)}:0`, false, summary.lastTime);
      fs.rmSync(file);
      this.lastPartialEnd = -1;
      this.scanned = undefined;
    }
  }

  /** The file being written, up to its last transaction end; it covers `began` once it holds the server's position then. */
  async cut(master: { file: string; position: number }, began: Date): Promise<{ coveredUntil?: string; coveredPos?: string; coveredTimeline?: number }> {
    const deadline = Date.now() + CATCH_UP_MS;
    for (;;) {
      const name = this.files().at(-1);
      if (!name) return {};
      // The files before this one go in first: a partial upload never lands ahead of the file it follows.
      await this.uploadFinished(name);
      const copy = path.join(this.dir, `.cut-${name}`);
      fs.copyFileSync(path.join(this.dir, name), copy);
      try {
        const summary = await summarizeBinlog(copy, this.scanned?.name === name ? this.scanned.summary : undefined, this.job.previews);
        this.scanned = { name, summary };
        const holds = binlogIndex(name) > binlogIndex(master.file) || (name === master.file && summary.end >= master.position);
        if (!holds && Date.now() < deadline) {
          await sleep(200);
          continue;
        }
        const coveredUntil = holds ? began.toISOString() : summary.lastTime;
        if (summary.end > this.lastPartialEnd) {
          fs.truncateSync(copy, summary.end);
          await this.upload(copy, name, summary, `${name}:${summary.end}`, true, coveredUntil);
          this.lastPartialEnd = summary.end;
        }
        return { ...(coveredUntil ? { coveredUntil } : {}), coveredPos: `${name}:${summary.end}`, coveredTimeline: 1 };
      } finally {
        fs.rmSync(copy, { force: true });
      }
    }
  }

  private async upload(file: string, name: string, whole: BinlogSummary, endPos: string, partial: boolean, coveredUntil: string | undefined): Promise<void> {
    const summary = { ...whole, changes: changesIn(whole.changes, this.job.databases) };
    await uploadSegment(this.job, this.client, this.reporter, {
      file, name, timeline: 1, chainID: chainIdOf(this.serverId, 1), startPos: `${name}:0`, endPos, partial,
      commits: summary.commits, summary: summaryOf(summary.changes.tables, summary.changes.ddl), ...(await this.previews(summary)), ...(summary.firstTime ? { firstTime: summary.firstTime } : {}), ...(summary.lastTime ? { lastTime: summary.lastTime } : {}), ...(coveredUntil ? { coveredUntil } : {}),
    }, this.signal);
  }

  /** The segment's masked previews when the target wants them; a failure is the segment's `previewsError` (it is stored all the same). */
  private async previews(summary: BinlogSummary): Promise<Pick<SegmentFile, 'previews' | 'previewsError'>> {
    const settings = this.job.previews;
    if (!settings) return {};
    if (!summary.changes.samples) return { previewsError: 'the binlog was read without its row images' };
    try {
      return { previews: await mysqlPreviews(summary.changes.samples, summary.changes.ddl, this.columnNames, settings.mask) };
    } catch (error) {
      return { previewsError: `the previews could not be made: ${messageOf(error)}` };
    }
  }
}
