import express, { type Request, type Response, type Router } from 'express';
import type { Principal } from '@sigil/kit/auth';
import type { Bus } from '@sigil/kit/bus';
import type { Logger } from '@sigil/kit/log';
import { DASHBOARD_DIST_DIR } from '@sigil/dashboard';
import { webAppHeaders, webAppRouter } from './web-app.ts';

/** What the live stream tells the dashboard about one domain event: which records changed, never their content. */
export interface DashboardChange {
  type: string;
  at: string;
  /** The event's mode when it has one (envelopes: `testMode`; API keys: `mode`). */
  testMode?: boolean;
  /** Ids of the records the event touched (`envelopeId`, `templateId`, `recipientId`, `apiKeyId`, `memberId`, ...). */
  ids: Record<string, string>;
}

export type LiveFeed = Pick<Bus, 'listen' | 'onReconnect'>;

export interface DashboardOptions {
  /** The domain events (core NATS); without it `/app/live` answers 503. */
  feed?: LiveFeed;
  /** The signed-in dashboard user of a request (the session cookie), or undefined. */
  sessionOf: (req: Request) => Promise<Principal | undefined>;
  log: Logger;
  /** Seconds between heartbeats (comments) on an idle stream; default 20. */
  heartbeatSeconds?: number;
  /** Where the built app is; default apps/dashboard/dist. */
  distDir?: string;
}

/**
 * The dashboard under `/app`: the built single-page app (every path that is not a file answers index.html, so that
 * a reload on /app/envelopes/env_... works), and `/app/live`, the stream of changes to the signed-in organization
 * that keeps every page current without a refresh.
 */
export function dashboardRouter(options: DashboardOptions): { router: Router; close(): void } {
  const dist = options.distDir ?? DASHBOARD_DIST_DIR;
  const live = createLiveHub(options);
  const router = express.Router();
  router.use(webAppHeaders());
  router.get('/live', (req, res, next) => void live.serve(req, res).catch(next));
  // After /live: a compressed event stream would wait for a flush.
  router.use(webAppRouter({ title: 'the dashboard', distDir: dist, buildCommand: 'npm run build -w @sigil/dashboard' }));
  return { router, close: () => live.close() };
}

/** One subscription to the domain events for the whole gateway, fanned out to each organization's open streams. */
function createLiveHub(options: DashboardOptions) {
  const streams = new Map<string, Set<Response>>();
  const heartbeatMs = (options.heartbeatSeconds ?? 20) * 1000;
  let subscribed: Promise<unknown> | undefined;

  function subscribe(feed: LiveFeed): Promise<unknown> {
    return (subscribed ??= Promise.all([
      feed.listen('sigil.events.>', (payload) => deliver(payload)),
      // Events sent while the broker was away are lost: tell every page to read again.
      Promise.resolve(feed.onReconnect(() => broadcast({ type: 'resync', at: new Date().toISOString(), ids: {} }))),
    ]).catch((error: unknown) => {
      subscribed = undefined;
      throw error;
    }));
  }

  function deliver(payload: unknown): void {
    const event = payload as { type?: unknown; organizationId?: unknown; occurredAt?: unknown; data?: unknown };
    if (typeof event.organizationId !== 'string' || typeof event.type !== 'string') return;
    const open = streams.get(event.organizationId);
    if (!open?.size) return;
    const change = changeOf(event.type, typeof event.occurredAt === 'string' ? event.occurredAt : new Date().toISOString(), event.data);
    for (const res of open) write(res, change);
  }

  function broadcast(change: DashboardChange): void {
    for (const open of streams.values()) for (const res of open) write(res, change);
  }

  async function serve(req: Request, res: Response): Promise<void> {
    const principal = await options.sessionOf(req);
    if (!principal) {
      res.status(401).type('application/problem+json').json({ type: 'https://sigil.dev/problems/unauthorized', title: 'Unauthorized', status: 401, detail: 'Sign in to the dashboard first.', requestId: String(res.locals.requestId ?? '') });
      return;
    }
    if (!options.feed) {
      res.status(503).type('application/problem+json').json({ type: 'https://sigil.dev/problems/service-unavailable', title: 'Service Unavailable', status: 503, detail: 'The live stream needs the event broker, which this gateway has not got.', requestId: String(res.locals.requestId ?? '') });
      return;
    }
    await subscribe(options.feed);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no', connection: 'keep-alive' });
    res.write('retry: 2000\n\n');
    const org = principal.organizationId;
    const open = streams.get(org) ?? new Set();
    streams.set(org, open.add(res));
    const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), heartbeatMs);
    heartbeat.unref();
    req.on('close', () => {
      clearInterval(heartbeat);
      open.delete(res);
      if (open.size === 0) streams.delete(org);
    });
  }

  return {
    serve,
    close(): void {
      for (const open of streams.values()) for (const res of open) res.end();
      streams.clear();
    },
  };
}

function write(res: Response, change: DashboardChange): void {
  res.write(`event: change\ndata: ${JSON.stringify(change)}\n\n`);
}

/** The ids and the mode of an event's payload: `*Id` strings, `template.id`, `envelope.id`, `testMode` or `mode`. */
export function changeOf(type: string, at: string, data: unknown): DashboardChange {
  const ids: Record<string, string> = {};
  let testMode: boolean | undefined;
  if (typeof data === 'object' && data !== null) {
    for (const [key, value] of Object.entries(data)) {
      if (key.endsWith('Id') && typeof value === 'string') ids[key] = value;
      else if (key === 'testMode' && typeof value === 'boolean') testMode = value;
      else if (key === 'mode' && (value === 'test' || value === 'live')) testMode = value === 'test';
      else if ((key === 'template' || key === 'envelope') && typeof value === 'object' && value !== null) {
        const nested = value as { id?: unknown; testMode?: unknown };
        if (typeof nested.id === 'string') ids[`${key}Id`] ??= nested.id;
        if (typeof nested.testMode === 'boolean') testMode ??= nested.testMode;
      }
    }
  }
  return testMode === undefined ? { type, at, ids } : { type, at, testMode, ids };
}
