import { decodeDomainEvent, type Bus, type RunningConsumer } from '@sigil/kit/bus';
import type { Logger } from '@sigil/kit/log';
import { EVENTS_STREAM, EVENTS_SUBJECTS, type DomainEvent } from '@sigil/proto/events';
import { appendEvent, AUDITED_EVENTS } from '../audit.ts';
import type { Db } from '../db.ts';

const AUDITED = new Set<string>(AUDITED_EVENTS);

/**
 * Every envelope event into its envelope's hash chain, exactly once. One durable over the whole events subject, one
 * message at a time across every replica (`inOrder`): the chain follows the order the services published their events
 * in (a consumer per event type would let a view overtake the creation, and two replicas pulling at once did the same). Events the trail does not record are acknowledged without touching the
 * database, so a new replica catches up on a long stream quickly; recorded ones note their id in
 * `processed_messages` in the transaction of the entry (and the entry's source id is unique besides).
 */
export function startAuditConsumer(bus: Bus, db: Db, log: Logger, prefix = ''): Promise<RunningConsumer> {
  const durable = `${prefix}evidence-audit`;
  return bus.consume<DomainEvent>({
    stream: EVENTS_STREAM,
    durable,
    subjects: [EVENTS_SUBJECTS],
    inOrder: true,
    log,
    decode: decodeDomainEvent,
    handle: async ({ data: event }) => {
      if (!AUDITED.has(event.type)) return;
      await db.$transaction(async (tx) => {
        const fresh = await tx.$executeRawUnsafe('INSERT INTO processed_messages (consumer, message_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', durable, event.id);
        if (fresh === 1) await appendEvent(event, tx);
      });
    },
  });
}
