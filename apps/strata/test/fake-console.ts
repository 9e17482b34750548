// A fake console API on 127.0.0.1 for driving the strata CLI in-process (runCli), as a user would.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { runCli } from '../src/cli.ts';

export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Handler = (req: Recorded, res: ServerResponse) => void;

export interface Fake {
  url: string;
  requests: Recorded[];
  routes: Map<string, Handler>;
  close(): Promise<void>;
}

export function json(status: number, body: unknown): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
}

export interface Frame {
  event?: string;
  id?: string;
  data: unknown;
  /** Milliseconds to wait before writing this frame. */
  delay?: number;
}

/** An SSE answer writing `frames` with small delays, then staying open until the client leaves. */
export function sse(frames: Frame[]): Handler {
  return (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(': hello\n\n');
    let closed = false;
    res.on('close', () => {
      closed = true;
    });
    void (async () => {
      for (const f of frames) {
        await new Promise((r) => setTimeout(r, f.delay ?? 5));
        if (closed) return;
        let text = '';
        if (f.event) text += `event: ${f.event}\n`;
        if (f.id) text += `id: ${f.id}\n`;
        text += `data: ${typeof f.data === 'string' ? f.data : JSON.stringify(f.data)}\n\n`;
        // Split a frame in two writes to exercise the parser's buffering.
        const cut = Math.floor(text.length / 2);
        res.write(text.slice(0, cut));
        await new Promise((r) => setTimeout(r, 1));
        if (closed) return;
        res.write(text.slice(cut));
      }
    })();
    void req;
  };
}

export async function startFake(): Promise<Fake> {
  const requests: Recorded[] = [];
  const routes = new Map<string, Handler>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const rec: Recorded = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(rec);
      const handler = routes.get(`${rec.method} ${rec.path}`) ?? json(404, { error: `no route ${rec.method} ${rec.path}` });
      handler(rec, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    routes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sink(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return { stream, text: () => chunks.join('') };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `strata <args>` in-process with HOME `home` and the config file `configFile`. */
export async function runStrata(args: string[], where: { home: string; configFile: string }, opts: { env?: NodeJS.ProcessEnv; stdin?: string } = {}): Promise<RunResult> {
  const out = sink();
  const err = sink();
  const code = await runCli(args, {
    stdout: out.stream,
    stderr: err.stream,
    env: { HOME: where.home, STRATA_CONFIG: where.configFile, ...opts.env },
    stdin: opts.stdin !== undefined ? Readable.from([Buffer.from(opts.stdin)]) : undefined,
  });
  return { code, stdout: out.text(), stderr: err.text() };
}

/** Writes a config as `strata login` would: the server and a token. */
export async function writeLogin(configFile: string, server: string, token = 'tok-123'): Promise<void> {
  await mkdir(path.dirname(configFile), { recursive: true });
  await writeFile(configFile, JSON.stringify({ server, token }), { mode: 0o600 });
}
