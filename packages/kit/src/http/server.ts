import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import type { Logger } from '../log.ts';
import type { Health } from './health.ts';

export interface RunOptions {
  app: Express;
  host: string;
  port: number;
  log: Logger;
  health?: Health;
  /** Closed in order after the HTTP server stops accepting and in-flight requests end. */
  resources?: Array<() => Promise<void>>;
  shutdownTimeoutMs?: number;
}

export interface RunningServer {
  server: Server;
  url: string;
  shutdown(): Promise<void>;
}

/** Listens, then on SIGTERM/SIGINT drains: readiness off, stop accepting, finish requests, close resources. */
export async function runServer(options: RunOptions): Promise<RunningServer> {
  const { app, host, port, log, health, resources = [], shutdownTimeoutMs = 10_000 } = options;
  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const url = `http://${host}:${typeof address === 'object' && address ? address.port : port}`;
  log.info({ url }, 'listening');
  // A launcher that started us on port 0 learns the real address here (no race for a "free" port).
  if (process.env.LISTEN_URL_FILE) writeFileSync(process.env.LISTEN_URL_FILE, url);

  let closing: Promise<void> | undefined;
  const shutdown = () =>
    (closing ??= (async () => {
      log.info('shutting down');
      health?.setShuttingDown();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), shutdownTimeoutMs);
      await closed;
      clearTimeout(timer);
      for (const close of resources) {
        await close().catch((error) => log.warn({ err: error }, 'error while closing a resource'));
      }
      log.info('stopped');
    })());

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      shutdown().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
  return { server, url, shutdown };
}
