/**
 * Webhooks as the processor sends them: the event as JSON, signed in `Processor-Signature` with the processor's scheme
 * (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`), one at a time in the order they happened, each retried
 * with a growing delay a bounded number of times. Nothing waits on a delivery: the page that caused it has answered.
 */
import { createHmac } from 'node:crypto';
import type { ProcessorEventObject } from './objects.ts';

export const SIGNATURE_HEADER = 'Processor-Signature';
/** The waits before each retry: six attempts over about six seconds, then the event is given up (and logged). */
const RETRY_DELAYS_MS = [200, 400, 800, 1_600, 3_200] as const;
const ATTEMPT_TIMEOUT_MS = 5_000;

/** The `Processor-Signature` value of a body at a time (unix seconds). */
export function signWebhookPayload(payload: string, secret: string, timestamp: number): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${payload}`).digest('hex')}`;
}

export interface WebhookSender {
  send(event: ProcessorEventObject): void;
  setUrl(url: string | undefined): void;
  /** Resolves once every event handed over so far was delivered or given up. */
  idle(): Promise<void>;
  /** Cancels waiting retries and attempts in flight; later events are dropped. */
  stop(): Promise<void>;
}

export function createWebhookSender(options: { url: string | undefined; secret: string; clock: () => Date; log: (line: string) => void }): WebhookSender {
  let url = options.url;
  let queue: Promise<void> = Promise.resolve();
  const stopping = new AbortController();

  async function deliver(event: ProcessorEventObject): Promise<void> {
    const target = url;
    if (!target) return options.log(`webhook ${event.id} ${event.type} not sent: no webhook URL is set`);
    const body = JSON.stringify(event);
    for (let attempt = 1; attempt <= RETRY_DELAYS_MS.length + 1; attempt++) {
      if (stopping.signal.aborted) return;
      const outcome = await postOnce(target, body);
      options.log(`webhook ${event.id} ${event.type} → ${target}: ${outcome} (attempt ${attempt})`);
      if (outcome === 'delivered') return;
      const delay = RETRY_DELAYS_MS[attempt - 1];
      if (delay === undefined) break;
      await pause(delay, stopping.signal);
    }
    if (!stopping.signal.aborted) options.log(`webhook ${event.id} ${event.type} given up after ${RETRY_DELAYS_MS.length + 1} attempts`);
  }

  async function postOnce(target: string, body: string): Promise<string> {
    const signature = signWebhookPayload(body, options.secret, Math.floor(options.clock().getTime() / 1000));
    try {
      const response = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', [SIGNATURE_HEADER]: signature, 'user-agent': 'SigilLocalProcessor/1.0 (webhooks)' },
        body,
        signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(ATTEMPT_TIMEOUT_MS)]),
      });
      await response.body?.cancel();
      return response.ok ? 'delivered' : `answered ${response.status}`;
    } catch (error) {
      return `failed (${error instanceof Error ? error.message : String(error)})`;
    }
  }

  return {
    send(event) {
      if (stopping.signal.aborted) return;
      queue = queue.then(() => deliver(event));
    },
    setUrl(next) {
      url = next;
    },
    idle: () => queue,
    async stop() {
      stopping.abort();
      await queue;
    },
  };
}

/** A wait that ends early when the sender stops (so `stop()` never waits out a retry delay). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
