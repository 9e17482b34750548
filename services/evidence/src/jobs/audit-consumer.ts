import { startConsumer, type Bus, type RunningConsumer } from '@sigil/kit/bus';
import type { Logger } from '@sigil/kit/log';
import { EVENTS_STREAM, EVENTS_SUBJECTS, type DomainEvent } from '@sigil/proto/events';
import { appendEvent, AUDITED_EVENTS } from '../audit.ts';
import type { Db, Tx } from '../db.ts';

/**
 * Every envelope event into its envelope's hash chain, exactly once (the consumer records what it handled). One durable
 * over the whole events subject, one message at a time: the chain follows the order envelopes published its events in
 * (a consumer per event type would let a view overtake the creation).
 */
export function startAuditConsumer(bus: Bus, db: Db, log: Logger, prefix = ''): Promise<RunningConsumer> {
  return startConsumer<Tx>({
    bus,
    stream: EVENTS_STREAM,
    durable: `${prefix}evidence-audit`,
    filterSubjects: [EVENTS_SUBJECTS],
    db,
    log,
    handle: async (event: DomainEvent, tx: Tx) => {
      if ((AUDITED_EVENTS as readonly string[]).includes(event.type)) await appendEvent(event, tx);
    },
  });
}
