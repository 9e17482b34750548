// HTTP client for the console API: JSON requests, `{ error }` answers, and the event stream.
import { createParser } from 'eventsource-parser';

/** Header of the access proxy's access token (the `accessToken` security scheme). */
export const TOKEN_HEADER = 'cf-access-token';
export const API_PREFIX = '/api/v1';

/** A failed request: an HTTP error answer (status > 0) or a network failure (status 0). */
export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  /** JSON body (serialised here). */
  json?: unknown;
  /** Raw body sent as is with `contentType`. */
  body?: string;
  contentType?: string;
  /** Full URL path instead of one under /api/v1 (the dev issuer). */
  absolutePath?: boolean;
  /** Send no token even when one is configured. */
  anonymous?: boolean;
}

export interface StreamEvent {
  /** SSE `event:` field. */
  event: string;
  id: string | undefined;
  /** Parsed `data:` JSON (undefined when not JSON). */
  data: Record<string, unknown> | undefined;
  raw: string;
}

export interface ClientOptions {
  server: string;
  token: string | undefined;
  fetch: typeof fetch;
  userAgent: string;
  /** Aborts every request (Ctrl-C). */
  signal?: AbortSignal | undefined;
}

/** Encodes one path segment. */
export function seg(s: string): string {
  return encodeURIComponent(s);
}

export class ApiClient {
  readonly server: string;
  readonly hasToken: boolean;
  private readonly token: string | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly userAgent: string;
  private readonly signal: AbortSignal | undefined;

  constructor(opts: ClientOptions) {
    this.server = opts.server;
    this.token = opts.token;
    this.hasToken = Boolean(opts.token);
    this.fetchImpl = opts.fetch;
    this.userAgent = opts.userAgent;
    this.signal = opts.signal;
  }

  url(pathname: string, query?: Query, absolute = false): string {
    const url = new URL(this.server + (absolute ? '' : API_PREFIX) + pathname);
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    }
    return url.toString();
  }

  private headers(extra: Record<string, string>, anonymous = false): Record<string, string> {
    const h: Record<string, string> = { 'user-agent': this.userAgent, ...extra };
    if (this.token && !anonymous) h[TOKEN_HEADER] = this.token;
    return h;
  }

  async request<T = unknown>(method: string, pathname: string, opts: RequestOptions = {}): Promise<T> {
    const headers = this.headers({ accept: 'application/json' }, opts.anonymous);
    let body: string | undefined;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['content-type'] = 'application/json';
    } else if (opts.body !== undefined) {
      body = opts.body;
      headers['content-type'] = opts.contentType ?? 'application/octet-stream';
    }
    const url = this.url(pathname, opts.query, opts.absolutePath);
    let res: Response;
    try {
      res = await this.fetchImpl(url, { method, headers, body, signal: this.signal ?? null });
    } catch (err) {
      throw networkError(this.server, err);
    }
    const text = await res.text().catch(() => '');
    if (!res.ok) throw new ApiError(res.status, errorMessage(res, text));
    if (!text) return undefined as T;
    const type = res.headers.get('content-type') ?? '';
    if (type.includes('json') || /^\s*[[{]/.test(text)) {
      try {
        return JSON.parse(text) as T;
      } catch {
        if (type.includes('json')) throw new ApiError(res.status, `invalid JSON in the answer of ${method} ${pathname}`);
      }
    }
    return text as T;
  }

  /**
   * Reads `GET /api/v1/events` and calls `onEvent` per frame until `onEvent` returns true, `signal`
   * aborts, or the stream fails for good. A stream that ends or breaks is reopened with
   * `Last-Event-ID`, waiting the server's `retry:` (default 1 s, backing off to 10 s); a connection that
   * fails five times in a row, or an HTTP error answer, ends it with an ApiError. The server replays
   * nothing after a reconnect, so `onOpen(true)` tells the caller to re-read what it follows.
   */
  async streamEvents(
    onEvent: (e: StreamEvent) => boolean | void,
    signal: AbortSignal,
    /** Called when a connection is established; `reconnected` for every one after the first. */
    onOpen?: (reconnected: boolean) => void,
  ): Promise<'done' | 'aborted'> {
    let lastId: string | undefined;
    let retryMs = 1000;
    let failures = 0;
    let connections = 0;
    for (;;) {
      if (signal.aborted) return 'aborted';
      const headers = this.headers({ accept: 'text/event-stream', 'cache-control': 'no-cache' });
      if (lastId !== undefined) headers['last-event-id'] = lastId;
      const controller = new AbortController();
      const onAbort = (): void => controller.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      let done = false;
      try {
        let res: Response;
        try {
          res = await this.fetchImpl(this.url('/events'), { headers, signal: controller.signal });
        } catch (err) {
          if (signal.aborted) return 'aborted';
          if (++failures >= 5) throw networkError(this.server, err);
          await sleep(Math.min(retryMs * failures, 10_000), signal);
          continue;
        }
        if (!res.ok) {
          const text = await res.text().catch(() => '');
          throw new ApiError(res.status, errorMessage(res, text));
        }
        if (!res.body) throw new ApiError(res.status, 'the event stream answered without a body');
        failures = 0;
        onOpen?.(connections++ > 0);
        let failure: unknown;
        const parser = createParser({
          onRetry: (ms) => {
            retryMs = Math.max(100, Math.min(ms, 30_000));
          },
          onEvent: (msg) => {
            if (done) return;
            if (msg.id !== undefined) lastId = msg.id;
            let data: Record<string, unknown> | undefined;
            try {
              const parsed: unknown = JSON.parse(msg.data);
              if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) data = parsed as Record<string, unknown>;
            } catch {
              data = undefined;
            }
            try {
              if (onEvent({ event: msg.event ?? 'message', id: msg.id, data, raw: msg.data })) done = true;
            } catch (err) {
              failure = err;
              done = true;
            }
          },
        });
        const decoder = new TextDecoder();
        const reader = res.body.getReader();
        try {
          while (!done) {
            const { value, done: end } = await reader.read();
            if (end) break;
            parser.feed(decoder.decode(value, { stream: true }));
          }
        } catch {
          if (signal.aborted && !done) return 'aborted';
          // Otherwise the connection broke: reopen below.
        }
        if (failure !== undefined) throw failure;
        if (done) return 'done';
      } finally {
        signal.removeEventListener('abort', onAbort);
        controller.abort();
      }
      if (signal.aborted) return 'aborted';
      await sleep(retryMs, signal);
    }
  }
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

function errorMessage(res: Response, text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (parsed && typeof parsed.error === 'string' && parsed.error) return parsed.error;
  } catch {
    // not JSON
  }
  const trimmed = text.trim();
  const status = `${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
  if (trimmed && trimmed.length <= 300 && !trimmed.startsWith('<')) return `${status}: ${trimmed}`;
  return status;
}

function networkError(server: string, err: unknown): ApiError {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  const detail = e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
  return new ApiError(0, `cannot reach ${server}: ${detail}`);
}
