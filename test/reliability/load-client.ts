/**
 * The load's HTTP client: what a careful integrator does while the platform is being knocked over. A request that
 * gets no answer, or a 5xx, is sent again (only requests safe to repeat: reads, creates deduplicated on an external id,
 * steps whose repetition is refused with a 4xx the caller reads), until a deadline; every attempt is counted. Each
 * POST carries an `Idempotency-Key`, the same on every attempt, as the API reference asks of a client that retries:
 * without it a webhook endpoint whose first answer was lost was registered twice (the long faults run), and the
 * second endpoint's secret was never known to the receiver.
 */
import { randomUUID } from 'node:crypto';
import { readReply, type Reply } from '../e2e/stack.ts';

export interface Tally {
  requests: number;
  /** Attempts that got no answer (connection refused or reset) or a 5xx, by status ('network' for none). */
  failedAttempts: Record<string, number>;
  /** The first answers of 500 (a fault not recognised as a dependency being down is a 500, not a 503): which and when. */
  internalErrors: Array<{ at: string; request: string; body: string }>;
}

export function newTally(): Tally {
  return { requests: 0, failedAttempts: {}, internalErrors: [] };
}

/** An answer the load got: the end-to-end suite's Reply. */
export type Answer<T = any> = Reply<T>;

export interface SendOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** The statuses that end the request; any other 4xx fails it. Default: 2xx. */
  accept?: (status: number) => boolean;
  /** How long to keep trying while answers are missing or 5xx. */
  withinMs?: number;
}

export class LoadClient {
  readonly tally: Tally;
  readonly base: string;

  constructor(base: string, tally: Tally = newTally()) {
    this.base = base;
    this.tally = tally;
  }

  async send<T = any>(method: string, pathName: string, options: SendOptions = {}): Promise<Answer<T>> {
    const accept = options.accept ?? ((status: number) => status >= 200 && status < 300);
    const deadline = Date.now() + (options.withinMs ?? 120_000);
    const sent = method === 'POST' ? { ...options, headers: { 'idempotency-key': randomUUID(), ...options.headers } } : options;
    let last = '';
    for (;;) {
      this.tally.requests += 1;
      let answer: Answer<T> | undefined;
      try {
        answer = await this.once<T>(method, pathName, sent);
      } catch (error) {
        last = `no answer: ${(error as Error).message}`;
        this.fail('network');
      }
      if (answer) {
        // The attempt whose answer was lost is still running: its outcome is replayed once it ends (never an answer,
        // even to a caller that accepts a 409 of its own).
        const inProgress = answer.status === 409 && String((answer.body as { type?: string } | undefined)?.type).endsWith('/idempotency-in-progress');
        if (!inProgress && accept(answer.status)) return answer;
        if (answer.status < 500 && !inProgress) throw new Error(`${method} ${pathName} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
        last = `${answer.status} ${JSON.stringify(answer.body)}`;
        this.fail(String(answer.status));
        if (answer.status === 500 && this.tally.internalErrors.length < 20) this.tally.internalErrors.push({ at: new Date().toISOString(), request: `${method} ${pathName}`, body: last.slice(0, 500) });
      }
      if (Date.now() > deadline) throw new Error(`${method} ${pathName} got no usable answer within ${options.withinMs ?? 120_000} ms; last: ${last}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** Reads until `ready` holds, each read resilient as `send`; every 200 ms, at most `withinMs`. */
  async until<T = any>(pathName: string, headers: Record<string, string>, ready: (body: T) => boolean, withinMs = 120_000): Promise<T> {
    const deadline = Date.now() + withinMs;
    for (;;) {
      const { body } = await this.send<T>('GET', pathName, { headers, withinMs });
      if (ready(body)) return body;
      if (Date.now() > deadline) throw new Error(`GET ${pathName} not ready within ${withinMs} ms: ${JSON.stringify(body).slice(0, 2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  private fail(kind: string): void {
    this.tally.failedAttempts[kind] = (this.tally.failedAttempts[kind] ?? 0) + 1;
  }

  private async once<T>(method: string, pathName: string, options: SendOptions): Promise<Answer<T>> {
    const res = await fetch(`${this.base}${pathName}`, {
      method,
      headers: { ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(30_000),
    });
    return readReply<T>(res);
  }
}
