import { enqueueEvent } from '@sigil/kit/bus';
import type { Logger } from '@sigil/kit/log';
import type { Db } from '../db.ts';
import { envelopeTransition, IN_PROGRESS } from '../state.ts';
import { ENVELOPE_INCLUDE, toEnvelopeView } from '../views.ts';

/**
 * Expires every envelope in progress whose `expiresAt` has passed, with `envelope.expired`. The due time is the row's
 * own `expires_at`, so nothing is lost across restarts; `SKIP LOCKED` lets replicas share the work. Returns the ids.
 */
export async function expireDue(db: Db, now: Date, batch = 100): Promise<string[]> {
  return db.$transaction(async (tx) => {
    const due = await tx.$queryRawUnsafe<Array<{ id: string }>>(
      `SELECT id FROM envelopes WHERE status = ANY($1) AND expires_at <= $2 ORDER BY expires_at LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [...IN_PROGRESS],
      now,
      batch,
    );
    for (const { id } of due) {
      const row = await tx.envelope.findUniqueOrThrow({ where: { id } });
      const updated = await tx.envelope.update({
        where: { id },
        data: { status: envelopeTransition(row.status, 'expire', `Envelope ${id}`), endedAt: now },
        include: ENVELOPE_INCLUDE,
      });
      await enqueueEvent(tx, { type: 'envelope.expired', organizationId: row.organizationId, data: { envelopeId: id, testMode: row.testMode, envelope: toEnvelopeView(updated) } });
    }
    return due.map((d) => d.id);
  });
}

/**
 * Runs the due work every `intervalMs` (and once at start): expiry, then reminders when e-mail is configured. A failed
 * pass is logged and the next one tries again.
 */
export function startScheduler(options: { db: Db; clock: () => Date; intervalMs: number; log: Logger; remind?: (now: Date) => Promise<string[]> }): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined;
  const pass = () => {
    if (running) return;
    running = (async () => {
      while ((await expireDue(options.db, options.clock())).length > 0);
      if (options.remind) while ((await options.remind(options.clock())).length > 0);
    })()
      .catch((error: unknown) => options.log.error({ err: error }, 'expiry pass failed'))
      .finally(() => (running = undefined));
  };
  pass();
  const timer = setInterval(pass, options.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
