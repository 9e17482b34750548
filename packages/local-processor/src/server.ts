/**
 * `startLocalProcessor`: the payment processor for the local stack and the tests. The billing service's adapter
 * talks to it with the official SDK pointed at its address (host, port, protocol), people pay and manage cards on its
 * pages, and it signs and sends the webhooks the real processor would.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler } from 'express';
import { ApiError } from './api-errors.ts';
import { apiRouter } from './api-routes.ts';
import { createContext } from './context.ts';
import type { MeterEvent, ProcessorEventObject } from './objects.ts';
import { pageRouter } from './page-routes.ts';
import { createStore, newObjectId } from './store.ts';
import { createWebhookSender } from './webhooks.ts';

export interface LocalProcessorOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port, read back from `port`. */
  port?: number;
  /** Where webhooks go; none until `setWebhookUrl` (events are then kept but not sent). */
  webhookUrl?: string;
  /** The secret webhooks are signed with (`whsec_…`). */
  webhookSecret: string;
  /** The API key callers must send as `Authorization: Bearer …`; any key is taken when absent. */
  secretKey?: string;
  /** Dates objects, periods and webhook signatures. Default: the system clock. */
  clock?: () => Date;
  /** One line per webhook attempt (and per unexpected error). */
  log?: (line: string) => void;
}

export interface LocalProcessor {
  /** `http://host:port`: the API under `/v1`, the pages under `/checkout` and `/portal`. */
  url: string;
  host: string;
  port: number;
  setWebhookUrl(url: string | undefined): void;
  /** For tests: the meter events recorded, one per identifier, oldest first. */
  meterEvents(): MeterEvent[];
  /** For tests: every event created, oldest first (whether or not its webhook was delivered). */
  events(): ProcessorEventObject[];
  /** For tests: resolves once every webhook handed over so far was delivered or given up. */
  webhooksSettled(): Promise<void>;
  stop(): Promise<void>;
}

export async function startLocalProcessor(options: LocalProcessorOptions): Promise<LocalProcessor> {
  const clock = options.clock ?? (() => new Date());
  const log = options.log ?? (() => {});
  const host = options.host ?? '127.0.0.1';
  const store = createStore(clock);
  const events: ProcessorEventObject[] = [];
  const webhooks = createWebhookSender({ url: options.webhookUrl, secret: options.webhookSecret, clock, log });
  let baseUrl = '';
  const context = createContext({ store, clock, baseUrl: () => baseUrl, webhooks, events });

  const app = express();
  app.disable('x-powered-by');
  app.use((_req, res, next) => {
    res.set('Request-Id', newObjectId('req'));
    next();
  });
  app.use('/v1', apiRouter(context, options.secretKey));
  app.use(pageRouter(context));
  app.use(errorHandler(log));

  const server = createServer(app);
  await listen(server, host, options.port ?? 0);
  const port = (server.address() as AddressInfo).port;
  baseUrl = `http://${urlHost(host)}:${port}`;

  return {
    url: baseUrl,
    host,
    port,
    setWebhookUrl: (url) => webhooks.setUrl(url),
    meterEvents: () => structuredClone([...store.meterEvents.values()]),
    events: () => structuredClone(events),
    webhooksSettled: () => webhooks.idle(),
    async stop() {
      await webhooks.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** API errors as the API's JSON; anything else is a 500 in the same shape, its cause logged. */
function errorHandler(log: (line: string) => void): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const status = typeof error?.status === 'number' && error.status >= 400 && error.status < 500 ? (error.status as number) : 500;
    const known = error instanceof ApiError ? error : status < 500 ? new ApiError(status, 'invalid_request_error', String(error.message ?? 'Invalid request.')) : undefined;
    if (!known) log(`error on ${req.method} ${req.path}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    const answer = known ?? new ApiError(500, 'api_error', 'An unexpected error occurred in the local processor.');
    res.status(answer.status).json(answer.body());
  };
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** A host as it is written in a URL: brackets around IPv6, and a reachable address for "every interface". */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
