import { setTimeout as sleep } from 'node:timers/promises';
import { isDependencyUnavailable } from '../http/dependency-down.ts';
import type { Logger } from '../log.ts';
import { retryDelay } from './types.ts';

/**
 * A handler that failed because something it depends on is down (its database restarting, a service it calls not
 * answering) did not fail on its own merits, and will succeed as soon as that dependency is back. Handing the message
 * back to the broker would climb the consumer's retry schedule, made for failures of the message itself (minutes, then
 * hours): a render or a seal that met three restarts in a row then waited five minutes after everything was up again
 * (the long faults run). And each redelivery spends one of `maxDeliver`.
 *
 * So such a failure is retried here, inside the same delivery, on a short schedule, the message kept alive meanwhile;
 * after `OUTAGE_HOLD_MS` it goes back to the broker on the consumer's own schedule, so a long outage neither holds a
 * slot forever nor spins. Any other failure goes back at once. A retry here is what a redelivery would be: handlers
 * are written to be run again (idempotent, or their transaction rolled back).
 */
export const OUTAGE_RETRY_DELAYS_MS: readonly number[] = [250, 500, 1_000, 2_000, 5_000];
export const OUTAGE_HOLD_MS = 120_000;

export interface OutageRetryOptions {
  /** Aborted when the consumer stops: the message goes back to the broker instead of waiting here. */
  signal: AbortSignal;
  /** Keeps the message from being handed to another consumer while it waits. */
  working: () => void;
  log: Logger;
  subject: string;
  delaysMs?: readonly number[];
  holdMs?: number;
}

export async function retryThroughOutages(run: () => Promise<void>, options: OutageRetryOptions): Promise<void> {
  const started = Date.now();
  const holdMs = options.holdMs ?? OUTAGE_HOLD_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (!isDependencyUnavailable(error) || options.signal.aborted || Date.now() - started >= holdMs) throw error;
      const delay = retryDelay(options.delaysMs ?? OUTAGE_RETRY_DELAYS_MS, attempt);
      options.log.warn({ err: error, subject: options.subject, outageAttempt: attempt, retryInMs: delay }, 'a dependency is unavailable; the message is retried in this delivery');
      const waited = await sleep(delay, true, { signal: options.signal }).catch(() => false);
      if (!waited) throw error;
      options.working();
    }
  }
}
