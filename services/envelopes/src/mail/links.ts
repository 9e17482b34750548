import { mintToken, revokeTokens, signingPageUrl } from '../tokens.ts';
import type { Tx } from '../db.ts';
import type { EnvelopeRow } from '../views.ts';
import { deliver, organizationName, type MailDeps } from './outbox-mail.ts';

type RecipientRow = EnvelopeRow['recipients'][number];

export interface Reminders {
  firstAfterHours?: number;
  everyHours?: number;
}

const HOUR_MS = 3_600_000;

/** When the next reminder is due after a link was sent now (none without `reminders`). */
export function nextReminder(reminders: Reminders | null, now: Date, first: boolean): Date | null {
  const hours = first ? (reminders?.firstAfterHours ?? reminders?.everyHours) : (reminders?.everyHours ?? reminders?.firstAfterHours);
  return hours ? new Date(now.getTime() + hours * HOUR_MS) : null;
}

/**
 * E-mails a recipient a fresh signing link (their turn, a resend, a reminder): every earlier link stops working, the new
 * one lives until the envelope expires. Runs in the caller's transaction; a failed send rolls the new link back.
 */
export async function sendLink(tx: Tx, deps: MailDeps, envelope: EnvelopeRow, recipient: RecipientRow, kind: 'your_turn' | 'reminder'): Promise<void> {
  const now = deps.clock();
  await revokeTokens(tx, recipient.id, now, 'link');
  const token = await mintToken(tx, { envelopeId: envelope.id, recipientId: recipient.id, purpose: 'link', expiresAt: envelope.expiresAt });
  await tx.recipient.update({
    where: { id: recipient.id },
    data: { lastLinkAt: now, nextReminderAt: nextReminder(envelope.reminders as Reminders | null, now, kind === 'your_turn' && !recipient.lastLinkAt) },
  });
  await deliver(tx, deps, envelope, { address: recipient.email, recipientId: recipient.id }, {
    kind,
    url: signingPageUrl(deps.publicUrl, token),
    expiresAt: envelope.expiresAt.toISOString(),
    organizationName: await organizationName(tx, envelope.organizationId),
    envelopeTitle: envelope.templateName,
    recipientName: recipient.name,
    testMode: envelope.testMode,
  });
}
