import { enqueueEvent } from '@sigil/kit/bus';
import type { Tx } from './db.ts';
import { nextTurn, recipientTransition } from './state.ts';
import type { EnvelopeRow } from './views.ts';

/**
 * Gives the next turn to whoever it belongs to (routing by `order`, ties in parallel): their status becomes `sent`
 * with `recipient.sent` each. Returns the recipients started, and whether everyone has finished.
 */
export async function startNextTurn(tx: Tx, row: EnvelopeRow, now: Date): Promise<{ started: string[]; done: boolean }> {
  const turn = nextTurn(row.recipients);
  for (const recipientId of turn.start) {
    const recipient = row.recipients.find((r) => r.id === recipientId) as EnvelopeRow['recipients'][number];
    await tx.recipient.update({ where: { id: recipientId }, data: { status: recipientTransition(recipient.status, 'turn'), sentAt: now } });
  }
  return { started: turn.start, done: turn.done };
}

/** `recipient.sent` for each recipient started, with the envelope as it is after the change. */
export async function announceTurn(tx: Tx, envelope: { id: string; organizationId: string; testMode: boolean }, view: object, started: string[]): Promise<void> {
  for (const recipientId of started) {
    await enqueueEvent(tx, {
      type: 'recipient.sent',
      organizationId: envelope.organizationId,
      data: { envelopeId: envelope.id, testMode: envelope.testMode, recipientId, envelope: view as never },
    });
  }
}
