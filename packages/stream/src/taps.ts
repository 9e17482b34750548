/**
 * Small pass-through stages of the mover's pipelines: a SHA-256 tap, byte counters, a token-bucket
 * throttle and a stall watchdog. Each holds at most the chunk it is working on. Time comes from an
 * injectable clock so tests run without sleeping.
 */
import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

export type TimerHandle = unknown;

export interface StreamClock {
  /** Milliseconds on a monotonic scale. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const systemClock: StreamClock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** A clock that moves only when told to: `advance(ms)` runs the timers that fall due, in order. */
export interface ManualClock extends StreamClock {
  advance(ms: number): void;
  /** Timers not yet run nor cleared. */
  pending(): number;
}

/**
 * A clock whose time jumps to the next timer as soon as the event loop has nothing else to do (one timer per
 * `setImmediate` turn, earliest first). Work that waits on timers (a throttle, a stall watchdog) runs at full speed and
 * its durations are measured in the clock's time, so tests assert them exactly without waiting for them.
 */
export function createVirtualClock(start = 0): StreamClock {
  let now = start;
  let nextId = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
  let pumping = false;
  const pump = () => {
    pumping = false;
    let dueId: number | undefined;
    for (const [id, timer] of timers) if (dueId === undefined || timer.at < (timers.get(dueId) as { at: number }).at) dueId = id;
    if (dueId === undefined) return;
    const due = timers.get(dueId) as { at: number; fn: () => void };
    timers.delete(dueId);
    now = Math.max(now, due.at);
    schedule();
    due.fn();
  };
  const schedule = () => {
    if (pumping || timers.size === 0) return;
    pumping = true;
    setImmediate(pump);
  };
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const id = nextId++;
      timers.set(id, { at: now + Math.max(0, ms), fn });
      schedule();
      return id;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
  };
}

export function createManualClock(start = 0): ManualClock {
  let now = start;
  let nextId = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const id = nextId++;
      timers.set(id, { at: now + Math.max(0, ms), fn });
      return id;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    advance(ms) {
      const end = now + ms;
      for (;;) {
        let dueId: number | undefined;
        let due: { at: number; fn: () => void } | undefined;
        for (const [id, timer] of timers) {
          if (timer.at <= end && (!due || timer.at < due.at)) {
            dueId = id;
            due = timer;
          }
        }
        if (!due || dueId === undefined) break;
        timers.delete(dueId);
        now = Math.max(now, due.at);
        due.fn();
      }
      now = end;
    },
    pending: () => timers.size,
  };
}

/** A pass-through that hashes (SHA-256) and counts what flows; read `digest()` after the end. */
export class HashTap extends Transform {
  #hash: Hash = createHash('sha256');
  #digest: string | undefined;
  #bytes = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#hash.update(chunk);
    this.#bytes += chunk.length;
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.#digest = this.#hash.digest('hex');
    callback();
  }

  /** Bytes seen so far. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Lower-case hex SHA-256 of everything that passed; throws before the stream ended. */
  digest(): string {
    if (this.#digest === undefined) throw new Error('hash tap: digest() before the stream ended');
    return this.#digest;
  }
}

export function createHashTap(): HashTap {
  return new HashTap();
}

/** A pass-through counting bytes; `onBytes(chunkBytes, totalBytes)` runs for every chunk. */
export class ByteCounter extends Transform {
  #bytes = 0;
  readonly #onBytes: ((chunkBytes: number, totalBytes: number) => void) | undefined;

  constructor(onBytes?: (chunkBytes: number, totalBytes: number) => void) {
    super();
    this.#onBytes = onBytes;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#bytes += chunk.length;
    try {
      this.#onBytes?.(chunk.length, this.#bytes);
    } catch (error) {
      callback(error as Error);
      return;
    }
    callback(null, chunk);
  }

  get bytes(): number {
    return this.#bytes;
  }
}

export function createByteCounter(onBytes?: (chunkBytes: number, totalBytes: number) => void): ByteCounter {
  return new ByteCounter(onBytes);
}

/**
 * A token-bucket throttle: passes each chunk once the bucket covers it (a chunk larger than the
 * bucket goes into debt that later chunks wait for). The bucket holds a quarter second of traffic
 * (at least 64 KiB), so the rate over any window longer than that is within a bucket of the limit.
 * 0 means unlimited (a plain pass-through). It holds one chunk at a time.
 */
export function createThrottle(bytesPerSecond: number, clock: StreamClock = systemClock): Transform {
  if (!Number.isFinite(bytesPerSecond) || bytesPerSecond < 0) throw new Error(`bandwidth must be >= 0 bytes per second, got ${bytesPerSecond}`);
  if (bytesPerSecond === 0) {
    return new Transform({ transform: (chunk: Buffer, _encoding, callback: TransformCallback) => callback(null, chunk) });
  }
  const capacity = Math.max(64 * 1024, bytesPerSecond / 4);
  let tokens = capacity;
  let last = clock.now();
  let timer: TimerHandle | undefined;

  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      const now = clock.now();
      tokens = Math.min(capacity, tokens + ((now - last) * bytesPerSecond) / 1000);
      last = now;
      tokens -= chunk.length;
      if (tokens >= 0) return callback(null, chunk);
      timer = clock.setTimeout(() => {
        timer = undefined;
        callback(null, chunk);
      }, Math.ceil((-tokens * 1000) / bytesPerSecond));
    },
    destroy(error, callback) {
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
      callback(error);
    },
  });
}

/** `no data flowed for 60s` (or `for 250ms` below a second). */
export function stallMessage(timeoutMs: number): string {
  const text = timeoutMs >= 1000 && timeoutMs % 1000 === 0 ? `${timeoutMs / 1000}s` : timeoutMs >= 1000 ? `${(timeoutMs / 1000).toFixed(1)}s` : `${timeoutMs}ms`;
  return `no data flowed for ${text}`;
}

/**
 * A pass-through that calls `onStall` once when no bytes passed for `timeoutMs` (counting from its
 * creation, so a source that never starts is caught too). The caller destroys the pipeline, e.g.
 * with `new Error(stallMessage(timeoutMs))`. Its timer stops at the end, on destroy and after a stall;
 * 0 disables it.
 *
 * By default a consumer that stops reading counts as a stall too (an S3 upload that hangs). With
 * `pauseWhileBackpressured`, time during which bytes wait in the watchdog for its consumer does not
 * count: only a silent producer is a stall. A restore uses it because its consumer, the database
 * client, stops reading while a long statement (an index build) runs.
 */
export function createStallWatchdog(
  timeoutMs: number,
  onStall: () => void,
  clock: StreamClock = systemClock,
  options: { pauseWhileBackpressured?: boolean } = {},
): Transform {
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0) throw new Error(`stall timeout must be >= 0 ms, got ${timeoutMs}`);
  let last = clock.now();
  let timer: TimerHandle | undefined;
  let stopped = timeoutMs === 0;

  const stop = (): void => {
    stopped = true;
    if (timer !== undefined) clock.clearTimeout(timer);
    timer = undefined;
  };
  const arm = (delay: number): void => {
    timer = clock.setTimeout(check, delay);
  };
  function check(): void {
    timer = undefined;
    if (stopped) return;
    if (options.pauseWhileBackpressured && (watchdog.readableLength > 0 || watchdog.writableLength > 0)) {
      // Waiting on the consumer: look again soon, and count silence from when it drains.
      last = clock.now();
      return arm(Math.min(timeoutMs, 1000));
    }
    const idle = clock.now() - last;
    if (idle >= timeoutMs) {
      stop();
      onStall();
    } else {
      arm(timeoutMs - idle);
    }
  }

  const watchdog = new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      // Re-arming on every chunk would churn timers; the timer re-checks the idle time instead.
      last = clock.now();
      callback(null, chunk);
    },
    destroy(error, callback) {
      stop();
      callback(error);
    },
  });
  watchdog.once('end', stop);
  watchdog.once('close', stop);
  if (!stopped) arm(timeoutMs);
  return watchdog;
}

/**
 * Gathers small chunks (a child's 64 KiB pipe reads) into blocks of about `blockBytes` before compression:
 * node:zlib pays a fixed cost per write, so fewer, larger writes cost less CPU. Holds at most one block.
 */
export function createCoalescer(blockBytes = 1024 * 1024): Transform {
  let pending: Buffer[] = [];
  let size = 0;
  const take = (): Buffer => {
    const block = pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending, size);
    pending = [];
    size = 0;
    return block;
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      pending.push(chunk);
      size += chunk.length;
      callback(null, size >= blockBytes ? take() : undefined);
    },
    flush(callback) {
      callback(null, size > 0 ? take() : undefined);
    },
  });
}
