/**
 * A keyed work queue like client-go's workqueue: a key waits at most once, one worker handles a key at a time (a
 * key added while it is being handled runs again afterwards), delayed adds keep the earliest time, and nothing
 * runs while the queue is paused (this replica does not hold the Lease).
 */
export interface WorkQueue {
  /** Runs `key` after `delayMs` (0: as soon as a worker is free); an earlier pending time wins. */
  add(key: string, delayMs?: number): void;
  /** Adds `key` only when it is neither waiting nor delayed (periodic resyncs must not cut a back-off short). */
  addIfIdle(key: string): void;
  forget(key: string): void;
  /** Whether `key` is waiting, delayed or running. */
  has(key: string): boolean;
  pause(): void;
  resume(): void;
  /** Stops the timers; running work finishes on its own. */
  close(): void;
  /** Resolves when nothing is queued, delayed or running (tests). */
  idle(): Promise<void>;
}

export function createWorkQueue(work: (key: string) => Promise<void>, options: { concurrency: number }): WorkQueue {
  const ready: string[] = [];
  const queued = new Set<string>();
  const delayed = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  const running = new Set<string>();
  const again = new Set<string>();
  let paused = true;
  let closed = false;
  let waiters: Array<() => void> = [];

  const settleWaiters = () => {
    if (ready.length || delayed.size || running.size) return;
    const done = waiters;
    waiters = [];
    for (const resolve of done) resolve();
  };

  const enqueue = (key: string) => {
    if (closed) return;
    if (running.has(key)) {
      again.add(key);
      return;
    }
    if (queued.has(key)) return;
    queued.add(key);
    ready.push(key);
    pump();
  };

  function pump() {
    while (!paused && !closed && running.size < options.concurrency && ready.length) {
      const key = ready.shift() as string;
      queued.delete(key);
      running.add(key);
      void work(key).finally(() => {
        running.delete(key);
        if (again.delete(key)) enqueue(key);
        pump();
        settleWaiters();
      });
    }
    settleWaiters();
  }

  return {
    add(key, delayMs = 0) {
      if (closed) return;
      if (delayMs <= 0) {
        const pending = delayed.get(key);
        if (pending) clearTimeout(pending.timer);
        delayed.delete(key);
        enqueue(key);
        return;
      }
      const at = Date.now() + delayMs;
      const pending = delayed.get(key);
      if (pending && pending.at <= at) return;
      if (pending) clearTimeout(pending.timer);
      const timer = setTimeout(() => {
        delayed.delete(key);
        enqueue(key);
      }, delayMs);
      delayed.set(key, { at, timer });
    },
    addIfIdle(key) {
      if (!queued.has(key) && !delayed.has(key) && !running.has(key)) enqueue(key);
    },
    forget(key) {
      const pending = delayed.get(key);
      if (pending) clearTimeout(pending.timer);
      delayed.delete(key);
      settleWaiters();
    },
    has: (key) => queued.has(key) || delayed.has(key) || running.has(key),
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      pump();
    },
    close() {
      closed = true;
      for (const { timer } of delayed.values()) clearTimeout(timer);
      delayed.clear();
      ready.length = 0;
      queued.clear();
      settleWaiters();
    },
    idle() {
      return new Promise((resolve) => {
        waiters.push(resolve);
        settleWaiters();
      });
    },
  };
}

/**
 * Exponential back-off with "equal jitter": the n-th consecutive failure waits between half and all of
 * min(max, base · 2^(n-1)), so replicas and objects that failed together do not retry together.
 */
export function backoffDelay(failures: number, options: { baseMs: number; maxMs: number }, random: () => number = Math.random): number {
  const ceiling = Math.min(options.maxMs, options.baseMs * 2 ** Math.max(0, failures - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
