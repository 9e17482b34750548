import type { Logger } from '@sigil/kit/log';
import type { Db } from './db.ts';
import type { AttemptRecord } from './deliver.ts';

/**
 * Writes attempts in batches: every few milliseconds (or every `maxBatch` records) one transaction inserts the
 * attempts and moves their deliveries on, instead of one transaction per attempt. A batch that fails to write is
 * logged; its deliveries keep their leases, which expire, and they are tried again (at least once).
 */
export function createAttemptRecorder(db: Db, log: Logger, options: { maxBatch?: number; flushMs?: number } = {}) {
  const maxBatch = options.maxBatch ?? 200;
  let queue: Array<{ record: AttemptRecord; done: () => void }> = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();

  const write = async (batch: typeof queue): Promise<void> => {
    const r = batch.map((b) => b.record);
    try {
      await db.$transaction([
        db.$executeRawUnsafe(
          `INSERT INTO webhook_attempts (id, delivery_id, endpoint_id, event_id, event_type, attempt, status, status_code, error, duration_ms, attempted_at, next_attempt_at)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::int[], $9::text[], $10::int[], $11::timestamptz[], $12::timestamptz[])`,
          r.map((x) => x.id), r.map((x) => x.deliveryId), r.map((x) => x.endpointId), r.map((x) => x.eventId), r.map((x) => x.eventType), r.map((x) => x.attempt),
          r.map((x) => x.status), r.map((x) => x.statusCode), r.map((x) => x.error), r.map((x) => x.durationMs), r.map((x) => x.attemptedAt), r.map((x) => x.nextAttemptAt),
        ),
        db.$executeRawUnsafe(
          `UPDATE webhook_deliveries d SET status = v.status, attempts = v.attempt, next_attempt_at = v.next, leased_until = NULL
           FROM unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[]) AS v(id, status, attempt, next) WHERE d.id = v.id`,
          r.map((x) => x.deliveryId), r.map((x) => x.status), r.map((x) => x.attempt), r.map((x) => x.nextAttemptAt),
        ),
      ]);
    } catch (error) {
      log.error({ err: error, attempts: r.length }, 'recording webhook attempts failed; their deliveries are tried again when the leases expire');
    }
    for (const b of batch) b.done();
  };

  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = queue;
    queue = [];
    if (batch.length) writing = writing.then(() => write(batch));
    return writing;
  };

  return {
    /** Resolves when the record is written (or its write failed and was logged). */
    record(record: AttemptRecord): Promise<void> {
      return new Promise<void>((done) => {
        queue.push({ record, done });
        if (queue.length >= maxBatch) void flush();
        else timer ??= setTimeout(() => void flush(), options.flushMs ?? 5);
      });
    },
    flush,
  };
}

export type AttemptRecorder = ReturnType<typeof createAttemptRecorder>;
