import { EVENTS_STREAM, eventSubject, type DomainEvent } from '@sigil/proto/events';
import { startConsumer, type Bus, type RunningConsumer } from '@sigil/kit/bus';
import { type Logger } from '@sigil/kit/log';
import type { Db, Tx } from '../db.ts';

export const TEMPLATE_USAGE_CONSUMER = 'templates-usage';

/** Records which envelopes and signing links used a template, so deletion can refuse used templates. */
export async function recordTemplateUsage(event: DomainEvent, tx: Tx): Promise<void> {
  const usage =
    event.type === 'envelope.created'
      ? { kind: 'envelope', id: (event as DomainEvent<'envelope.created'>).data.envelopeId, templateId: (event as DomainEvent<'envelope.created'>).data.templateId }
      : event.type === 'signing_link.created'
        ? {
            kind: 'signing_link',
            id: (event as DomainEvent<'signing_link.created'>).data.signingLinkId,
            templateId: (event as DomainEvent<'signing_link.created'>).data.templateId,
          }
        : undefined;
  if (!usage) return;
  await insertTemplateUsage(tx, { templateId: usage.templateId, organizationId: event.organizationId, kind: usage.kind, id: usage.id, at: new Date(event.occurredAt) });
}

/** Records one use of a template of the organization (nothing for another organization's or a deleted one; idempotent). */
export async function insertTemplateUsage(tx: Tx, use: { templateId: string; organizationId: string; kind: string; id: string; at: Date }): Promise<void> {
  await tx.$executeRawUnsafe(
    `INSERT INTO template_usages (template_id, used_by_kind, used_by_id, used_at)
     SELECT id, $3, $4, $5 FROM templates WHERE id = $1 AND organization_id = $2
     ON CONFLICT DO NOTHING`,
    use.templateId,
    use.organizationId,
    use.kind,
    use.id,
    use.at,
  );
}

/** `durablePrefix` isolates test runs that share one NATS server. */
export function startTemplateUsageConsumer(bus: Bus, db: Db, log: Logger, durablePrefix = ''): Promise<RunningConsumer> {
  return startConsumer<Tx>({
    bus,
    stream: EVENTS_STREAM,
    durable: `${durablePrefix}${TEMPLATE_USAGE_CONSUMER}`,
    filterSubjects: [eventSubject('envelope.created'), eventSubject('signing_link.created')],
    db,
    log,
    handle: recordTemplateUsage,
  });
}
