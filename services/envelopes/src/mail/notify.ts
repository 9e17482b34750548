import { startConsumer, type Bus, type RunningConsumer } from '@sigil/kit/bus';
import type { Logger } from '@sigil/kit/log';
import { EVENTS_STREAM, eventSubject, type AnyDomainEvent, type DomainEvent } from '@sigil/proto/events';
import type { Tx } from '../db.ts';
import { ENVELOPE_INCLUDE } from '../views.ts';
import type { Attachment } from '@sigil/mail';
import { completedDocument } from '../sealed.ts';
import { sendLink } from './links.ts';
import { sendViewerLink } from './viewer-link.ts';
import { deliver, organizationName, type MailDeps } from './outbox-mail.ts';

/** The events whose recipients get an e-mail. */
export const MAIL_EVENTS = ['recipient.sent', 'envelope.voided', 'envelope.declined', 'envelope.expired', 'envelope.sealed', 'envelope.seal_failed', 'viewer.added'] as const;

/**
 * The e-mails of an envelope's life, from its own events (so a crash between the change and the e-mail loses nothing,
 * and each event mails once): a recipient's turn (with a fresh link, unless they sign embedded), voided and expired
 * (to whoever had been sent the envelope), declined (to the others who had), completed (to every recipient and CC).
 * The completion e-mail waits for the seal: it carries the sealed PDF and the certificate of completion. If sealing
 * fails its quick retries, it goes out with the completed document instead, and the sealed copies follow in a second
 * completion e-mail when a later seal succeeds. A new viewer gets its status link (`viewer.added`).
 */
export function createNotifier(deps: MailDeps) {
  return async function notify(event: DomainEvent, tx: Tx): Promise<void> {
    const e = event as AnyDomainEvent;
    if (!(MAIL_EVENTS as readonly string[]).includes(e.type)) return;
    const { envelopeId } = e.data as { envelopeId: string };
    const envelope = await tx.envelope.findUnique({ where: { id: envelopeId }, include: ENVELOPE_INCLUDE });
    if (!envelope) return;
    if (e.type === 'recipient.sent') {
      const recipient = envelope.recipients.find((r) => r.id === e.data.recipientId);
      // A turn that ended before its e-mail went out (signed, declined, voided) gets no link.
      if (recipient && recipient.delivery === 'email' && envelope.status === 'sent' && recipient.status === 'sent') await sendLink(tx, deps, envelope, recipient, 'your_turn');
      return;
    }
    if (e.type === 'viewer.added') return sendViewerLink(tx, deps, envelope, e.data.viewerId);
    const common = { organizationName: await organizationName(tx, envelope.organizationId), envelopeTitle: envelope.templateName, testMode: envelope.testMode };
    const mail = (to: { name: string; email: string; id?: string }, data: Record<string, unknown>, attachments?: Attachment[], attached?: string) =>
      deliver(tx, deps, envelope, { address: to.email, recipientId: to.id, attached }, { ...common, recipientName: to.name, ...data } as Parameters<typeof deliver>[4], attachments);
    const reached = envelope.recipients.filter((r) => r.sentAt !== null);
    if (e.type === 'envelope.voided') for (const r of reached) await mail(r, { kind: 'voided', reason: e.data.reason ?? null });
    if (e.type === 'envelope.expired') for (const r of reached.filter((r) => r.status === 'sent' || r.status === 'viewed')) await mail(r, { kind: 'expired' });
    if (e.type === 'envelope.declined') {
      const decliner = envelope.recipients.find((r) => r.id === e.data.recipientId);
      for (const r of reached.filter((r) => r.id !== e.data.recipientId)) await mail(r, { kind: 'declined', declinedBy: decliner?.name ?? 'A recipient', reason: e.data.reason ?? null });
    }
    if (e.type === 'envelope.sealed' || e.type === 'envelope.seal_failed') {
      const sent = await tx.emailDelivery.findMany({ where: { envelopeId, kind: 'completed' }, select: { attachments: true } });
      // Once with the sealed copies; once earlier with the completed document if sealing had failed.
      if (sent.some((d) => d.attachments === 'sealed') || (e.type === 'envelope.seal_failed' && sent.length > 0)) return;
      const name = envelope.templateName.replace(/[^\w .-]+/g, '_').slice(0, 80) || 'document';
      const documents: Attachment[] =
        e.type === 'envelope.sealed'
          ? [
              { filename: `${name} (sealed).pdf`, content: await deps.store.get(envelope.sealedKey as string), contentType: 'application/pdf' },
              { filename: `${name} (certificate of completion).pdf`, content: await deps.store.get(envelope.certificateKey as string), contentType: 'application/pdf' },
            ]
          : [{ filename: `${name}.pdf`, content: await completedDocument(deps.store, envelope), contentType: 'application/pdf' }];
      const attached = e.type === 'envelope.sealed' ? 'sealed' : 'completed';
      for (const r of envelope.recipients) await mail(r, { kind: 'completed' }, documents, attached);
      for (const cc of envelope.cc as Array<{ name?: string; email: string }>) await mail({ name: cc.name ?? cc.email, email: cc.email }, { kind: 'completed' }, documents, attached);
    }
  };
}

export function startMailConsumer(bus: Bus, deps: MailDeps & { log: Logger; prefix?: string }): Promise<RunningConsumer> {
  return startConsumer<Tx>({
    bus,
    stream: EVENTS_STREAM,
    durable: `${deps.prefix ?? ''}envelopes-mail`,
    filterSubjects: MAIL_EVENTS.map((type) => eventSubject(type)),
    db: deps.db,
    log: deps.log,
    handle: createNotifier(deps),
  });
}
