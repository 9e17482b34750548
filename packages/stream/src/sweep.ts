/**
 * The store sweep: garbage collection of one prefix of an S3 bucket (issue 25, point 3).
 *
 * The caller (the catalog) says which keys are still needed; the sweep lists the prefix with sizes
 * and last-modified times and deletes everything else, in batches of one multi-object delete
 * (S3 DeleteObjects, at most 1,000 keys a call) each, while the listing goes on: at most one listing
 * page and two batches are held at a time, whatever the size of the prefix.
 *
 * What the caller can rely on:
 * - Nothing outside `prefix` is touched; an empty prefix (the whole bucket) needs `wholeBucket: true`.
 * - An object last modified at or after `passStartedAt - skewMarginMs` (to the second, see cutoffMs)
 *   is never deleted (DEFAULT_SKEW_MARGIN_MS: last-modified times are the store's clock,
 *   `passStartedAt` the caller's).
 * - The sweep stops at the first error (listing, a delete, a key the store refused, `isNeeded`
 *   throwing, an abort) and returns what it deleted so far with `error`; it never throws once the
 *   options are valid. Everything it reports deleted (`onBatch`, the result) was confirmed deleted by
 *   the store: `onBatch` runs only after a batch's delete succeeded, before the next batch is sent.
 *   A batch whose request failed is not reported even though the store may have deleted part of it:
 *   those keys were garbage anyway, so the caller's records only undercount what was freed.
 * - A failed request is retried (`attempts`, default 3) before the sweep gives up: a DeleteObjects
 *   batch as it was (deleting is idempotent), a listing from after the last key seen. S3 answers
 *   500/503 under load, and the embedded test store (s3rver) can fail a batch that empties a
 *   directory (two deletions racing to remove it). A listing is retried once the batch in flight
 *   has settled, so that the retry does not compete with it.
 * - `dryRun` lists and decides exactly as a real pass and deletes nothing (`onBatch` is not called).
 * - An abort waits for the batch in flight (its outcome is reported) and sends no other.
 */
import type * as Minio from 'minio';
import { refusedKeys, type S3Client } from './s3.ts';

/** S3's maximum keys per DeleteObjects call. */
export const MAX_DELETE_BATCH = 1000;

/**
 * Default margin subtracted from `passStartedAt`: one minute. NTP keeps servers within milliseconds of
 * each other, so a minute covers a badly synced VM; SigV4 tolerates up to 15 minutes of skew, so a
 * caller that cannot trust the clocks can raise it. The only cost of a margin is that garbage
 * younger than it waits for the next pass. Tests whose objects are seconds old pass 0.
 */
export const DEFAULT_SKEW_MARGIN_MS = 60_000;

/** Tries of one request before the sweep stops. */
export const DEFAULT_ATTEMPTS = 3;

/** How many deleted keys a result names; the counts cover all of them. */
export const MAX_REPORTED_KEYS = 1000;

export interface SweptBatch {
  keys: string[];
  bytes: number;
}

export interface SweepOptions {
  client: S3Client;
  bucket: string;
  /** Only keys starting with this are listed and deleted (a string prefix: end it with '/' for a folder). */
  prefix: string;
  /** Required to sweep the whole bucket with an empty prefix. */
  wholeBucket?: boolean;
  /** Whether the object is still needed (the caller's kept set). A throw stops the sweep. */
  isNeeded: (key: string) => boolean;
  /** Objects last modified at or after this (less `skewMarginMs`) are never deleted. */
  passStartedAt: Date;
  /** Subtracted from `passStartedAt` for clock skew between the store and the caller; default one minute. */
  skewMarginMs?: number;
  dryRun?: boolean;
  /** Keys per DeleteObjects call, 1 to 1000 (default). */
  batchSize?: number;
  /** Tries of one request (a batch's DeleteObjects, a listing page) before the sweep stops (default 3). */
  attempts?: number;
  signal?: AbortSignal;
  /** Called after each batch the store confirmed deleted, in order; a throw stops the sweep. */
  onBatch?: (deleted: SweptBatch) => Promise<void> | void;
}

export interface SweepResult {
  /** Objects deleted (in a dry run: that would be). */
  objects: number;
  bytes: number;
  /** The first MAX_REPORTED_KEYS deleted keys, in listing order. */
  keys: string[];
  /** True when `keys` names fewer than `objects`. */
  truncated: boolean;
  /** Objects left in place: needed, or too recent. */
  kept: number;
  /** Of `kept`, those not needed but written after the pass began (or within the skew margin). */
  recent: number;
  /** Why the sweep stopped early; absent when it went through the whole prefix. */
  error?: string;
}

interface Garbage {
  key: string;
  size: number;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function abortMessage(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return `aborted${reason === undefined ? '' : `: ${message(reason)}`}`;
}

function validate(options: SweepOptions): void {
  if (!options.bucket) throw new Error('sweep: a bucket is required');
  if (options.prefix === '' && options.wholeBucket !== true) throw new Error('sweep: an empty prefix sweeps the whole bucket: say so with wholeBucket: true');
  if (options.prefix !== '' && options.wholeBucket === true) throw new Error('sweep: wholeBucket: true needs an empty prefix');
  const batchSize = options.batchSize ?? MAX_DELETE_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_DELETE_BATCH) throw new Error(`sweep: batchSize must be an integer from 1 to ${MAX_DELETE_BATCH}, got ${batchSize}`);
  const attempts = options.attempts ?? DEFAULT_ATTEMPTS;
  if (!Number.isInteger(attempts) || attempts < 1) throw new Error(`sweep: attempts must be an integer >= 1, got ${attempts}`);
  if (Number.isNaN(options.passStartedAt.getTime())) throw new Error('sweep: passStartedAt is not a valid date');
  const margin = options.skewMarginMs ?? DEFAULT_SKEW_MARGIN_MS;
  if (!Number.isFinite(margin) || margin < 0) throw new Error(`sweep: skewMarginMs must be >= 0, got ${margin}`);
}

/**
 * The time from which objects are too recent to delete. S3 (and s3rver) keep last-modified times to
 * the second, truncated: an object written after the pass began, in the same second, shows a time up
 * to a second before `passStartedAt`. Comparing whole seconds (the cutoff truncated too) keeps it.
 */
export function cutoffMs(passStartedAt: Date, skewMarginMs: number): number {
  return Math.floor((passStartedAt.getTime() - skewMarginMs) / 1000) * 1000;
}

function garbageOf(batch: Map<string, number>): Garbage[] {
  return [...batch].map(([key, size]) => ({ key, size }));
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** One pass over the prefix: decides per object, deletes garbage batch by batch, tallies. */
class Sweep {
  private readonly result: SweepResult = { objects: 0, bytes: 0, keys: [], truncated: false, kept: 0, recent: 0 };
  private readonly cutoffMs: number;
  private readonly batchSize: number;
  /** Garbage listed and not yet sent, key → size. */
  private batch = new Map<string, number>();
  /** The batch being deleted while the listing goes on, and its request. */
  private sending = new Map<string, number>();
  private inFlight: Promise<void> | undefined;
  /** The last key listed, where a failed listing resumes. */
  private lastKey: string | undefined;
  private readonly options: SweepOptions;

  constructor(options: SweepOptions) {
    this.options = options;
    this.cutoffMs = cutoffMs(options.passStartedAt, options.skewMarginMs ?? DEFAULT_SKEW_MARGIN_MS);
    this.batchSize = options.batchSize ?? MAX_DELETE_BATCH;
  }

  async run(): Promise<SweepResult> {
    try {
      await this.walk();
    } catch (error) {
      this.fail(`listing ${this.options.bucket}/${this.options.prefix}: ${message(error)}`);
    }
    await this.inFlight;
    if (this.batch.size > 0 && !this.stopped()) await this.send(garbageOf(this.batch));
    return this.result;
  }

  /**
   * Lists the prefix. A failed listing request resumes after the last key seen, once the batch in
   * flight has settled; the tries count from the last progress.
   */
  private async walk(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const resumeAfter = this.lastKey;
      try {
        await this.walkFrom(resumeAfter);
        return;
      } catch (error) {
        if (this.lastKey !== resumeAfter) attempt = 1;
        await this.inFlight;
        if (this.stopped()) return;
        if (!(await this.mayRetry(attempt))) throw error;
      }
    }
  }

  /**
   * One listing from after `startAfter`. A key already waiting in a batch is a repeat and is skipped,
   * never counted twice: s3rver lists in its files' order, not always the keys' order, and its pages
   * can then list a key again (S3 itself lists each key once, in order).
   */
  private async walkFrom(startAfter: string | undefined): Promise<void> {
    const { client, bucket, prefix } = this.options;
    for await (const item of client.listObjectsV2(bucket, prefix, true, startAfter) as AsyncIterable<Minio.BucketItem>) {
      if (this.stopped()) return;
      const key = item.name;
      if (key === undefined || !key.startsWith(prefix) || this.batch.has(key) || this.sending.has(key)) continue;
      this.lastKey = key;
      if (!this.consider(key, item.size, item.lastModified)) return;
      if (this.batch.size >= this.batchSize) await this.dispatch();
    }
  }

  /** After a failed request: waits (100 ms, then doubling) and says whether to try again. */
  private async mayRetry(attempt: number): Promise<boolean> {
    if (attempt >= (this.options.attempts ?? DEFAULT_ATTEMPTS) || this.options.signal?.aborted) return false;
    await delay(100 * 2 ** (attempt - 1));
    return true;
  }

  /** Sorts one listed object into kept or the current batch; false when `isNeeded` threw. */
  private consider(key: string, size: number, lastModified: Date | undefined): boolean {
    let needed: boolean;
    try {
      needed = this.options.isNeeded(key);
    } catch (error) {
      this.fail(`isNeeded(${key}): ${message(error)}`);
      return false;
    }
    if (needed) {
      this.result.kept++;
    } else if (this.tooRecent(lastModified)) {
      this.result.kept++;
      this.result.recent++;
    } else {
      this.batch.set(key, Number(size) || 0);
    }
    return true;
  }

  /** Without a usable last-modified time the object might be new: it stays. */
  private tooRecent(lastModified: Date | undefined): boolean {
    const time = lastModified instanceof Date ? lastModified.getTime() : Number.NaN;
    return Number.isNaN(time) || time >= this.cutoffMs;
  }

  /** Waits for the batch in flight, then sends the current one while the listing goes on. */
  private async dispatch(): Promise<void> {
    const batch = this.batch;
    this.batch = new Map();
    await this.inFlight;
    if (this.stopped()) return;
    this.sending = batch;
    this.inFlight = this.send(garbageOf(batch));
  }

  /** Deletes one batch (or, in a dry run, only counts it); never rejects. */
  private async send(batch: Garbage[]): Promise<void> {
    if (this.options.dryRun) {
      this.record(batch);
      return;
    }
    const refused = await this.deleteWithRetries(batch.map((g) => g.key));
    if (refused === undefined) return;
    const refusedSet = new Set(refused.map((r) => r.key));
    const deleted = refusedSet.size === 0 ? batch : batch.filter((g) => !refusedSet.has(g.key));
    await this.report(deleted);
    if (refused.length > 0) {
      const sample = refused.slice(0, 5).map((r) => `${r.key}: ${r.reason}`);
      this.fail(`the store refused to delete ${refused.length} object(s): ${sample.join('; ')}${refused.length > 5 ? '; …' : ''}`);
    }
  }

  /** The keys the store refused, or undefined when every attempt of the request failed (the sweep then stops). */
  private async deleteWithRetries(keys: string[]): Promise<{ key: string; reason: string }[] | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        return refusedKeys(await this.options.client.removeObjects(this.options.bucket, keys));
      } catch (error) {
        if (!(await this.mayRetry(attempt))) {
          this.fail(`deleting ${keys.length} object(s) from ${keys[0]}: ${message(error)}`);
          return undefined;
        }
      }
    }
  }

  /** Hands a deleted batch to the caller, then counts it; a throwing `onBatch` stops the sweep. */
  private async report(deleted: Garbage[]): Promise<void> {
    if (deleted.length === 0) return;
    const keys = deleted.map((g) => g.key);
    const bytes = deleted.reduce((sum, g) => sum + g.size, 0);
    try {
      await this.options.onBatch?.({ keys, bytes });
    } catch (error) {
      this.record(deleted);
      this.fail(`onBatch: ${message(error)}`);
      return;
    }
    this.record(deleted);
  }

  private record(deleted: Garbage[]): void {
    for (const { key, size } of deleted) {
      this.result.objects++;
      this.result.bytes += size;
      if (this.result.keys.length < MAX_REPORTED_KEYS) this.result.keys.push(key);
      else this.result.truncated = true;
    }
  }

  /** True once the sweep failed or was aborted (an abort is recorded as the error). */
  private stopped(): boolean {
    const signal = this.options.signal;
    if (signal?.aborted) this.fail(abortMessage(signal));
    return this.result.error !== undefined;
  }

  private fail(error: string): void {
    this.result.error ??= error;
  }
}

/**
 * Deletes the objects under `prefix` that `isNeeded` does not keep and that are older than the pass
 * (see the header for the guarantees). Throws only for invalid options.
 */
export async function sweepStore(options: SweepOptions): Promise<SweepResult> {
  validate(options);
  return await new Sweep(options).run();
}
