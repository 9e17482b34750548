import { isRecipientsTurn } from '../state.ts';
import { enqueueEvent } from '@sigil/kit/bus';
import { sendLink } from './links.ts';
import type { MailDeps } from './outbox-mail.ts';
import { ENVELOPE_INCLUDE } from '../views.ts';

/**
 * Sends every reminder that is due: to recipients whose turn it still is, with a fresh link, the next one scheduled by
 * the envelope's `reminders`. A recipient whose turn is over has its due time cleared. Due times are stored, so
 * restarts lose nothing; `SKIP LOCKED` lets replicas share the work (`NO KEY UPDATE`, so the new link's token, committed
 * on its own connection, can still reference the row). Returns the recipients reminded.
 */
export async function remindDue(deps: MailDeps, now: Date, batch = 50): Promise<string[]> {
  return deps.db.$transaction(async (tx) => {
    const due = await tx.$queryRawUnsafe<Array<{ id: string; envelope_id: string }>>(
      'SELECT id, envelope_id FROM recipients WHERE next_reminder_at <= $1 ORDER BY next_reminder_at LIMIT $2 FOR NO KEY UPDATE SKIP LOCKED',
      now,
      batch,
    );
    const reminded: string[] = [];
    for (const { id, envelope_id } of due) {
      const envelope = await tx.envelope.findUniqueOrThrow({ where: { id: envelope_id }, include: ENVELOPE_INCLUDE });
      const recipient = envelope.recipients.find((r) => r.id === id);
      if (!recipient || recipient.delivery !== 'email' || !isRecipientsTurn(envelope.status, recipient.status)) {
        await tx.recipient.update({ where: { id }, data: { nextReminderAt: null } });
        continue;
      }
      await sendLink(tx, deps, envelope, recipient, 'reminder');
      await enqueueEvent(tx, { type: 'envelope.reminded', organizationId: envelope.organizationId, data: { envelopeId: envelope.id, testMode: envelope.testMode, recipientId: id } });
      reminded.push(id);
    }
    return reminded;
  }, { timeout: 60_000 });
}

