import type { Attachment, EnvelopeMessageData, Mailer } from '@sigil/mail';
import type { FileStore } from '@strata/stream/file-store';
import { composeMessage } from '@sigil/mail';
import { enqueueEvent } from '@sigil/kit/bus';
import { brandingOrNone, type BrandingCache } from '@sigil/kit/branding';
import type { Logger } from '@sigil/kit/log';
import { newId } from '@sigil/kit/ids';
import type { Db, Tx } from '../db.ts';

export interface MailDeps {
  db: Db;
  mailer: Mailer;
  clock: () => Date;
  /** The public base URL of the hosted signing page (links in e-mails). */
  publicUrl: string;
  /** Where the envelope's original is (the completed document is attached to the completion e-mails). */
  store: FileStore;
  /** The organization's e-mail branding (accounts', cached); unbranded e-mails without it or when it cannot be read. */
  branding?: Pick<BrandingCache, 'get'>;
  log?: Logger;
}

type MailEnvelope = { id: string; organizationId: string; testMode: boolean; templateName: string };

/** The organization's name as e-mails show it (its id until accounts' event arrived). */
export async function organizationName(conn: Db | Tx, organizationId: string): Promise<string> {
  return (await conn.organization.findUnique({ where: { id: organizationId } }))?.name ?? 'Your correspondent';
}

/**
 * Sends one message and records it. A test-mode envelope e-mails only members of its organization; any other address
 * is recorded as `suppressed` and nothing leaves.
 */
export async function deliver(conn: Db | Tx, deps: MailDeps, envelope: MailEnvelope, to: { address: string; recipientId?: string; attached?: string }, data: EnvelopeMessageData, attachments?: Attachment[]): Promise<'delivered' | 'suppressed'> {
  const address = to.address.toLowerCase();
  const member = !envelope.testMode || (await conn.organizationMember.count({ where: { organizationId: envelope.organizationId, email: address } })) > 0;
  const branding = member ? await brandingOrNone(deps.branding, envelope.organizationId, deps.log) : undefined;
  const sent = member ? await deps.mailer.send({ to: address, message: composeMessage(data, branding), attachments }) : undefined;
  const status = sent ? 'delivered' : 'suppressed';
  await conn.emailDelivery.create({
    data: { id: newId('eml'), envelopeId: envelope.id, recipientId: to.recipientId ?? null, address, kind: data.kind, attachments: to.attached ?? null, status, messageId: sent?.messageId ?? null, createdAt: deps.clock() },
  });
  // The audit trail records every e-mail, sent or not.
  await enqueueEvent(conn, {
    type: sent ? 'email.delivered' : 'email.suppressed',
    organizationId: envelope.organizationId,
    data: { envelopeId: envelope.id, testMode: envelope.testMode, ...(to.recipientId ? { recipientId: to.recipientId } : {}), kind: data.kind as 'your_turn', address },
  });
  return status;
}
