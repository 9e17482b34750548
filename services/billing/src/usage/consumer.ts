import { consumerName, startConsumer, type Bus, type RunningConsumer } from '@sigil/kit/bus';
import type { Logger } from '@sigil/kit/log';
import { EVENTS_STREAM, eventSubject } from '@sigil/proto/events';
import type { Db, Tx } from '../db.ts';
import { countUsage, usageOf } from './count.ts';

/** The events usage is counted from: completions (envelopes) and sent codes (SMS, an add-on). */
export const COUNTED_EVENTS = ['envelope.completed', 'otp.sent'] as const;

/**
 * Counts usage from the events stream, from its whole history on a new deployment (usage of a period that started
 * before billing ran still counts; `EVENT_CONSUMERS_START_AT=all`, the default). Replicas share the durable consumer; each event is counted in its own transaction.
 */
export function startUsageConsumer(bus: Bus, deps: { db: Db; log: Logger; prefix?: string; concurrency?: number; startAt?: 'all' | 'new' }): Promise<RunningConsumer> {
  return startConsumer<Tx>({
    bus,
    stream: EVENTS_STREAM,
    durable: consumerName(deps.prefix ?? '', 'billing-usage'),
    filterSubjects: COUNTED_EVENTS.map((type) => eventSubject(type)),
    db: deps.db,
    log: deps.log,
    ackWaitMs: 10_000,
    concurrency: deps.concurrency ?? 32,
    // Unsaid, the bus's choice: a deployment reads the history (`EVENT_CONSUMERS_START_AT`), a test stack starts now.
    startAt: deps.startAt,
    handle: async (event, tx) => {
      const record = usageOf(event);
      if (record) await countUsage(tx, record);
    },
  });
}
