import type { Request, Response } from 'express';
import { createSession } from 'better-sse';
import type { Principal } from '@sigil/kit/auth';
import type { Logger } from '@sigil/kit/log';
import type { AuditService } from './audit.ts';
import type { AppendListener } from './appended.ts';

export const KEEP_ALIVE_MS = 15_000;
/** A stream also looks for new entries this often, whatever notification may have been lost. */
export const POLL_MS = 2_000;

/**
 * `GET /v1/envelopes/{id}/events/stream`: server-sent events, `id:` = `seq`, `event:` = `type`, `data:` = the entry.
 * `Last-Event-ID: n` replays everything after `n` from the database, then the stream stays open: any replica's append
 * is announced by Postgres (NOTIFY on commit) to every replica, and each stream reads what it has not sent yet, in
 * order, so there is no gap and no duplicate. A comment every 15 s keeps proxies from closing it.
 */
export function createTrailStream(deps: { audit: AuditService; appended: AppendListener; log: Logger; keepAliveMs?: number; pollMs?: number }) {
  return async function stream(principal: Principal, envelopeId: string, req: Request, res: Response): Promise<void> {
    await deps.audit.requireVisible(principal, envelopeId);
    res.setHeader('x-accel-buffering', 'no');
    const session = await createSession(req, res, { keepAlive: deps.keepAliveMs ?? KEEP_ALIVE_MS, retry: 3000, headers: { 'cache-control': 'no-cache, no-transform' } });
    const resumeFrom = Number.parseInt(session.lastId || '0', 10);
    let last = Number.isInteger(resumeFrom) && resumeFrom > 0 ? resumeFrom : 0;
    let sending: Promise<void> = Promise.resolve();
    // One read at a time, each from the last seq sent: nothing is sent twice or skipped.
    const sendNew = () =>
      (sending = sending
        .then(async () => {
          if (!session.isConnected) return;
          for (const item of await deps.audit.after(envelopeId, last)) {
            session.push(item, item.type, String(item.seq));
            last = item.seq;
          }
        })
        .catch((error: unknown) => deps.log.warn({ err: error, envelopeId }, 'could not send audit entries')));
    const unsubscribe = deps.appended.subscribe(envelopeId, () => void sendNew());
    const poll = setInterval(() => void sendNew(), deps.pollMs ?? POLL_MS);
    session.once('disconnected', () => {
      clearInterval(poll);
      unsubscribe();
    });
    await sendNew();
  };
}
