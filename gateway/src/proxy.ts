import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import https from 'node:https';
import { pipeline } from 'node:stream';

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
  agents: { http: http.Agent; https: https.Agent };
  close(): void;
}

export function createUpstream(): Upstream {
  const agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: 512, maxFreeSockets: 64 }),
    https: new https.Agent({ keepAlive: true, maxSockets: 512, maxFreeSockets: 64 }),
  };
  return {
    agents,
    close: () => {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

export interface ForwardOptions {
  /** Base URL of the service; the request's path and query are appended as they arrived. */
  baseUrl: string;
  /** The exact headers to send upstream (the caller strips credentials and adds the principal). */
  headers: OutgoingHttpHeaders;
  upstream: Upstream;
  /** Headers set on the response last, over whatever the service sent (e.g. the gateway's request id). */
  responseHeaders?: Record<string, string>;
  /** Called once the service's status line is in, before the body streams. */
  onResponse?: (status: number) => void;
  /** Called when the service could not be reached and nothing was sent to the client yet. */
  onUnreachable: (error: Error) => void;
  /** How long establishing the connection to the service may take. Default 5 s. */
  connectTimeoutMs?: number;
}

/**
 * Streams one request to a service and its answer back. Neither body is buffered: the request body is
 * piped as it arrives (uploads, with back-pressure) and the response is flushed as the service writes
 * it (PDFs, server-sent events). A client that goes away aborts the upstream request and vice versa.
 */
export function forward(req: IncomingMessage, res: ServerResponse, options: ForwardOptions): void {
  const base = new URL(options.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const isHttps = base.protocol === 'https:';
  const proxyReq = (isHttps ? https : http).request({
    protocol: base.protocol,
    hostname: base.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: base.port || (isHttps ? 443 : 80),
    method: req.method,
    path: basePath + (req.url ?? '/'),
    headers: options.headers,
    agent: isHttps ? options.upstream.agents.https : options.upstream.agents.http,
  });

  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
  proxyReq.on('socket', (socket) => {
    if (!socket.connecting) return;
    const timer = setTimeout(() => proxyReq.destroy(new Error(`connecting to ${base.host} timed out after ${connectTimeoutMs} ms`)), connectTimeoutMs);
    socket.once('connect', () => clearTimeout(timer));
    socket.once('close', () => clearTimeout(timer));
  });

  let answered = false;
  proxyReq.on('response', (proxyRes) => {
    answered = true;
    if (res.destroyed) {
      proxyRes.destroy();
      return;
    }
    const headers = endToEndHeaders(proxyRes.headers);
    for (const [name, value] of Object.entries(headers)) if (value !== undefined) res.setHeader(name, value);
    for (const [name, value] of Object.entries(options.responseHeaders ?? {})) res.setHeader(name, value);
    res.statusCode = proxyRes.statusCode ?? 502;
    if (proxyRes.statusMessage) res.statusMessage = proxyRes.statusMessage;
    options.onResponse?.(res.statusCode);
    // Send the status line now: a server-sent event stream may not write its first byte for a while.
    res.flushHeaders();
    pipeline(proxyRes, res, () => {
      // Either side failed mid-body: the other cannot be completed, tear both down.
      if (!res.writableFinished) res.destroy();
    });
  });

  proxyReq.on('error', (error) => {
    req.unpipe(proxyReq);
    // The client left first (and we tore the upstream request down because of it): nobody to answer.
    if (res.destroyed || (req.destroyed && !req.complete)) return;
    if (!answered && !res.headersSent) {
      // Let the rest of the request body drain so the error answer can be read by the client.
      req.resume();
      options.onUnreachable(error);
    } else {
      res.destroy();
    }
  });

  // The client went away before the response ended: stop the upstream work.
  res.on('close', () => {
    if (!res.writableFinished) proxyReq.destroy();
  });
  req.on('error', () => proxyReq.destroy());

  req.pipe(proxyReq);
}
