// The server-sent event stream (`GET /api/v1/events`): openapi-fetch opens it, eventsource-parser reads it.
import { createParser } from 'eventsource-parser';
import { ApiError, errorMessage, parseJson, type Schema, type StrataClient } from '@strata/client';
import { everyOf } from './cli-types.ts';

/** The `data:` of a frame. */
export type StrataEvent = Schema<'Event'>;
type EventKind = NonNullable<StrataEvent['kind']>;

const EVENT_KINDS = everyOf<EventKind>()(['backup', 'restore', 'sandbox', 'target', 'catalog']);

export interface StreamEvent {
  /** SSE `event:` field. */
  event: string;
  id: string | undefined;
  /** Parsed `data:` JSON (undefined when not JSON). */
  data: unknown;
  raw: string;
}

/** A frame's data as an Event: fields of the wrong type are left out, the kind falls back to the `event:` field. */
export function eventOf(e: StreamEvent): StrataEvent {
  const d: Record<string, unknown> = e.data && typeof e.data === 'object' && !Array.isArray(e.data) ? { ...e.data } : {};
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : typeof v === 'string' && v !== '' && !Number.isNaN(Number(v)) ? Number(v) : undefined);
  return {
    kind: eventKind(d.kind) ?? eventKind(e.event),
    namespace: str(d.namespace),
    name: str(d.name),
    phase: str(d.phase),
    stage: str(d.stage),
    message: str(d.message),
    bytes: num(d.bytes),
    version: num(d.version),
  };
}

function eventKind(v: unknown): EventKind | undefined {
  return EVENT_KINDS.find((k) => k === v);
}

const MAX_FAILURES = 5;

/**
 * Reads the event stream and calls `onEvent` per frame until `onEvent` returns true, `signal`
 * aborts, or the stream fails for good. A stream that ends or breaks is reopened with
 * `Last-Event-ID`, waiting the server's `retry:` (default 1 s, backing off to 10 s); a connection that
 * fails five times in a row, or an HTTP error answer, ends it with an ApiError. The server replays
 * nothing after a reconnect, so `onOpen(true)` tells the caller to re-read what it follows.
 */
export async function streamEvents(
  client: StrataClient,
  onEvent: (e: StreamEvent) => boolean | void,
  signal: AbortSignal,
  /** Called when a connection is established; `reconnected` for every one after the first. */
  onOpen?: (reconnected: boolean) => void,
): Promise<'done' | 'aborted'> {
  const state: StreamState = { lastId: undefined, retryMs: 1000, failures: 0, connections: 0 };
  for (;;) {
    if (signal.aborted) return 'aborted';
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const body = await open(client, state, controller.signal);
      if (body) {
        onOpen?.(state.connections++ > 0);
        const outcome = await read(body, state, onEvent);
        if (outcome === 'done') return 'done';
        if (outcome === 'broken' && signal.aborted) return 'aborted';
      } else if (signal.aborted) {
        return 'aborted';
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      controller.abort();
    }
    if (signal.aborted) return 'aborted';
    await sleep(state.failures ? Math.min(state.retryMs * state.failures, 10_000) : state.retryMs, signal);
  }
}

interface StreamState {
  lastId: string | undefined;
  retryMs: number;
  /** Connections in a row that got no answer. */
  failures: number;
  connections: number;
}

/** One connection: its body, or undefined when it got no answer and may be tried again. */
async function open(client: StrataClient, state: StreamState, signal: AbortSignal): Promise<ReadableStream<Uint8Array> | undefined> {
  let answer;
  try {
    answer = await client.api.GET('/events', {
      parseAs: 'stream',
      headers: { accept: 'text/event-stream', 'cache-control': 'no-cache', 'last-event-id': state.lastId },
      signal,
    });
  } catch (err) {
    if (signal.aborted) return undefined;
    if (!(err instanceof ApiError) || err.status !== 0 || ++state.failures >= MAX_FAILURES) throw err;
    return undefined;
  }
  const { data, error, response } = answer;
  if (!response.ok) throw new ApiError(response.status, errorMessage(response, error));
  if (!data) throw new ApiError(response.status, 'the event stream answered without a body');
  state.failures = 0;
  return data;
}

/** Feeds the body to the parser until `onEvent` says done, the body ends or it breaks. */
async function read(
  body: ReadableStream<Uint8Array>,
  state: StreamState,
  onEvent: (e: StreamEvent) => boolean | void,
): Promise<'done' | 'ended' | 'broken'> {
  let done = false;
  let failure: { error: unknown } | undefined;
  const parser = createParser({
    onRetry: (ms) => {
      state.retryMs = Math.max(100, Math.min(ms, 30_000));
    },
    onEvent: (msg) => {
      if (done) return;
      if (msg.id !== undefined) state.lastId = msg.id;
      try {
        if (onEvent({ event: msg.event ?? 'message', id: msg.id, data: parseJson(msg.data), raw: msg.data })) done = true;
      } catch (error) {
        failure = { error };
        done = true;
      }
    },
  });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let outcome: 'ended' | 'broken' = 'ended';
  try {
    while (!done) {
      const { value, done: end } = await reader.read();
      if (end) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
  } catch {
    outcome = 'broken';
  } finally {
    // Cancelling the body closes the connection; aborting the request alone left its socket open, and the CLI
    // process running after `--watch` had printed the outcome.
    await reader.cancel().catch(() => undefined);
  }
  if (failure) throw failure.error;
  return done ? 'done' : outcome;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
