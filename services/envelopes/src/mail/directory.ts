import { startConsumer, type Bus, type RunningConsumer } from '@sigil/kit/bus';
import type { Logger } from '@sigil/kit/log';
import { EVENTS_STREAM, eventSubject, type AnyDomainEvent, type DomainEvent } from '@sigil/proto/events';
import type { Db, Tx } from '../db.ts';

/**
 * What e-mails need to know of organizations, learnt from accounts' events: each organization's name (for the sender
 * line) and its members' addresses (test-mode envelopes e-mail members only).
 */
export async function recordDirectoryEvent(event: DomainEvent, tx: Tx): Promise<void> {
  const e = event as AnyDomainEvent;
  if (e.type === 'organization.created') {
    await tx.organization.upsert({ where: { id: e.organizationId }, create: { id: e.organizationId, name: e.data.name }, update: { name: e.data.name } });
  } else if (e.type === 'member.added') {
    const email = e.data.email.toLowerCase();
    await tx.organizationMember.upsert({ where: { memberId: e.data.memberId }, create: { memberId: e.data.memberId, organizationId: e.organizationId, email }, update: { email } });
  } else if (e.type === 'member.removed') {
    await tx.organizationMember.deleteMany({ where: { memberId: e.data.memberId } });
  }
}

export function startDirectoryConsumer(bus: Bus, db: Db, log: Logger, prefix = ''): Promise<RunningConsumer> {
  return startConsumer<Tx>({
    bus,
    stream: EVENTS_STREAM,
    durable: `${prefix}envelopes-directory`,
    filterSubjects: [eventSubject('organization.created'), eventSubject('member.added'), eventSubject('member.removed')],
    db,
    log,
    handle: recordDirectoryEvent,
  });
}
