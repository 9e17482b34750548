import { discardToken, mintCommittedToken, revokeTokens, signingPageUrl } from '../tokens.ts';
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
 * one lives until the envelope expires. The new token is committed before the e-mail leaves, so the link works the
 * moment it can be read; the rest runs in the caller's transaction. A failed send discards the new token and rolls the
 * rest back, so the earlier link keeps working.
 */
export async function sendLink(tx: Tx, deps: MailDeps, envelope: EnvelopeRow, recipient: RecipientRow, kind: 'your_turn' | 'reminder'): Promise<void> {
  const now = deps.clock();
  const token = await mintCommittedToken(deps.db, { envelopeId: envelope.id, recipientId: recipient.id, purpose: 'link', expiresAt: envelope.expiresAt });
  try {
    await revokeTokens(tx, recipient.id, now, 'link', token);
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
  } catch (error) {
    await discardToken(deps.db, token).catch((cause: unknown) => deps.log?.warn({ err: cause, recipientId: recipient.id }, 'an unsent signing link could not be discarded'));
    throw error;
  }
}
