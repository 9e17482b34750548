import type { Request, Response } from 'express';
import type { Bus } from '@sigil/kit/bus';
import type { Logger } from '@sigil/kit/log';
import { EVENTS_SUBJECTS } from '@sigil/proto/events';
import type { ViewerGrant } from '@sigil/proto/internal-viewers';

/** The domain events on plain NATS (every replica hears every event). */
export type EventFeed = Pick<Bus, 'listen' | 'onReconnect'>;

export const HEARTBEAT_MS = 15_000;

interface OpenStream {
  viewerId: string;
  res: Response;
  close(): void;
}

/**
 * `GET /v1/viewer/stream`: server-sent `update` events (`data: {"envelope":"env_..."}`) whenever any event about the
 * viewer's envelope is published, for the page to read the status again. One subscription to the domain events serves
 * every stream of this replica. A stream closes when its viewer is revoked (`viewer.revoked`) and when its access token
 * expires (the page exchanges its link again and reconnects); a comment every 15 s keeps proxies from closing it.
 */
export function createViewerStreams(deps: { feed: EventFeed; log: Logger; heartbeatMs?: number; clock?: () => Date }) {
  const byEnvelope = new Map<string, Set<OpenStream>>();
  const clock = deps.clock ?? (() => new Date());
  let subscribed: Promise<unknown> | undefined;

  function subscribe(): Promise<unknown> {
    return (subscribed ??= Promise.all([
      deps.feed.listen(EVENTS_SUBJECTS, (payload) => deliver(payload)),
      // Events sent while the broker was away are lost: every page reads again.
      Promise.resolve(deps.feed.onReconnect(() => { for (const [envelopeId, open] of byEnvelope) for (const stream of open) update(stream.res, envelopeId); })),
    ]).catch((error: unknown) => {
      subscribed = undefined;
      throw error;
    }));
  }

  function deliver(payload: unknown): void {
    const event = payload as { type?: unknown; data?: { envelopeId?: unknown; viewerId?: unknown } };
    const envelopeId = event.data?.envelopeId;
    if (typeof envelopeId !== 'string') return;
    for (const stream of [...(byEnvelope.get(envelopeId) ?? [])]) {
      if (event.type === 'viewer.revoked' && event.data?.viewerId === stream.viewerId) stream.close();
      else update(stream.res, envelopeId);
    }
  }

  return {
    async serve(viewer: ViewerGrant, req: Request, res: Response): Promise<void> {
      await subscribe();
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no', connection: 'keep-alive' });
      res.write('retry: 3000\n\n');
      const open = byEnvelope.get(viewer.envelopeId) ?? new Set<OpenStream>();
      byEnvelope.set(viewer.envelopeId, open);
      const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), deps.heartbeatMs ?? HEARTBEAT_MS);
      const expiry = setTimeout(() => stream.close(), Math.max(0, new Date(viewer.expiresAt).getTime() - clock().getTime()));
      heartbeat.unref();
      expiry.unref();
      const stream: OpenStream = {
        viewerId: viewer.viewerId,
        res,
        close: () => {
          forget();
          res.end();
        },
      };
      function forget(): void {
        clearInterval(heartbeat);
        clearTimeout(expiry);
        open.delete(stream);
        if (open.size === 0 && byEnvelope.get(viewer.envelopeId) === open) byEnvelope.delete(viewer.envelopeId);
      }
      open.add(stream);
      req.on('close', forget);
    },

    /** Ends every open stream (shutdown). */
    close(): void {
      for (const open of byEnvelope.values()) for (const stream of [...open]) stream.close();
    },
  };
}

function update(res: Response, envelopeId: string): void {
  res.write(`event: update\ndata: ${JSON.stringify({ envelope: envelopeId })}\n\n`);
}
