import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import { createRoundRobin, neverConnected, type ServiceTarget } from './replicas.ts';

/** Headers that describe one connection, never forwarded (RFC 9110 section 7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** A copy of `headers` without hop-by-hop headers, including those the `Connection` header names. */
export function endToEndHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((token) => token.trim().toLowerCase())
      .filter(Boolean),
  );
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    out[name] = value;
  }
  return out;
}

export interface Upstream {
  /** One keep-alive pool per service origin (undici): cheaper per request than `http.request`. */
  dispatcher: Agent;
  /** The replicas of a service in the order one request tries them (round robin). */
  order(target: ServiceTarget): readonly string[];
  close(): Promise<void>;
}

export function createUpstream(options: { connectTimeoutMs?: number } = {}): Upstream {
  const dispatcher = new Agent({ connections: 512, keepAliveTimeout: 30_000, connectTimeout: options.connectTimeoutMs ?? 5_000 });
  const roundRobin = createRoundRobin();
  return { dispatcher, order: (target) => roundRobin.order(target), close: () => dispatcher.close() };
}

export interface ForwardOptions {
  /**
   * Base URL of the service, or of each of its replicas (the request goes to the next in round robin, and to the one
   * after when a replica refuses the connection); the request's path and query are appended as they arrived.
   */
  baseUrl: ServiceTarget;
  /** The exact headers to send upstream (the caller strips credentials and adds the principal). */
  headers: OutgoingHttpHeaders;
  upstream: Upstream;
  /** Headers set on the response last, over whatever the service sent (e.g. the gateway's request id). */
  responseHeaders?: Record<string, string>;
  /** Called once the service's status line is in, before the body streams. */
  onResponse?: (status: number) => void;
  /** Called when the service could not be reached and nothing was sent to the client yet. */
  onUnreachable: (error: Error) => void;
}

/**
 * Streams one request to a service and its answer back. Neither body is buffered: the request body is
 * piped as it arrives (uploads, with back-pressure) and the response is flushed as the service writes
 * it (PDFs, server-sent events). A client that goes away aborts the upstream request and vice versa. A replica is
 * skipped only when the connection to it failed before any byte of the request left, so no request runs twice.
 */
export function forward(req: IncomingMessage, res: ServerResponse, options: ForwardOptions): void {
  const replicas = options.upstream.order(options.baseUrl);
  const abort = new AbortController();
  let answered = false;
  // The client went away before the response ended: stop the upstream work.
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  req.on('error', () => abort.abort());
  const withBody = hasBody(req);
  const attempt = (index: number): void => {
    const base = new URL(replicas[index] as string);
    const body = withBody ? deferredBody(req) : null;
    options.upstream.dispatcher.stream(
      {
        origin: base.origin,
        path: base.pathname.replace(/\/+$/, '') + (req.url ?? '/'),
        method: req.method as Dispatcher.HttpMethod,
        headers: options.headers as Record<string, string | string[]>,
        body: body?.stream ?? null,
        signal: abort.signal,
      },
      ({ statusCode, headers }) => {
        answered = true;
        for (const [name, value] of Object.entries(endToEndHeaders(headers as IncomingHttpHeaders))) if (value !== undefined) res.setHeader(name, value);
        for (const [name, value] of Object.entries(options.responseHeaders ?? {})) res.setHeader(name, value);
        res.statusCode = statusCode;
        options.onResponse?.(statusCode);
        // A streamed answer (server-sent events, a body of unknown length) may not write its first byte for a while:
        // send the status line now. Otherwise the head leaves with the body in one write, one packet for the client.
        if (headers['content-length'] === undefined) res.flushHeaders();
        return res;
      },
      (error) => {
        if (!error) return;
        // The client left first (and we tore the upstream request down because of it): nobody to answer.
        if (abort.signal.aborted || res.destroyed) return;
        if (!answered && !res.headersSent) {
          // Nothing reached this replica (connection refused): the next one gets the untouched request.
          if (index + 1 < replicas.length && !body?.started() && neverConnected(error)) return attempt(index + 1);
          // Let the rest of the request body drain so the error answer can be read by the client.
          body?.detach();
          req.resume();
          options.onUnreachable(error);
        } else {
          // Either side failed mid-body: the other cannot be completed.
          res.destroy();
        }
      },
    );
  };
  attempt(0);
}

/**
 * The request body as undici reads it: the client's request is read only once undici asks for the first chunk, which
 * it does after the connection is up. A replica that refused the connection leaves the request unread for the next;
 * undici destroys a body stream it could not send, which must not be the client's request (its socket answers us).
 */
function deferredBody(req: IncomingMessage): { stream: Readable; started(): boolean; detach(): void } {
  let started = false;
  const onData = (chunk: Buffer) => {
    if (!stream.push(chunk)) req.pause();
  };
  const onEnd = () => stream.push(null);
  const detach = () => {
    req.off('data', onData);
    req.off('end', onEnd);
  };
  const stream = new Readable({
    read() {
      if (started) return void req.resume();
      started = true;
      if (req.readableEnded) return void stream.push(null);
      req.on('data', onData);
      req.once('end', onEnd);
    },
    destroy(error, callback) {
      detach();
      callback(error);
    },
  });
  return { stream, started: () => started, detach };
}

/** A request without Content-Length or Transfer-Encoding has no body (RFC 9112 section 6.3). */
function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
}
