import type { Principal } from '@sigil/kit/auth';
import { AppError, notFound } from '@sigil/kit/errors';
import { visibleTo } from '../caller.ts';
import { lockEnvelope } from '../envelopes.ts';
import { isRecipientsTurn } from '../state.ts';
import { enqueueEvent } from '@sigil/kit/bus';
import { sendLink } from './links.ts';
import type { MailDeps } from './outbox-mail.ts';

/** At most one resend a minute per recipient. */
export const RESEND_INTERVAL_MS = 60_000;

/**
 * `POST /v1/envelopes/{id}/recipients/{recipient}/resend`: a fresh link by e-mail, only on the recipient's turn; the old
 * link stops working. Within a minute of the last link: 429 `rate-limited` with `Retry-After`.
 */
export async function resendLink(deps: MailDeps, principal: Principal, envelopeId: string, recipientId: string): Promise<void> {
  await deps.db.$transaction(async (tx) => {
    const envelope = await lockEnvelope(tx, { ...visibleTo(principal), id: envelopeId });
    const recipient = envelope.recipients.find((r) => r.id === recipientId);
    if (!recipient) throw notFound(`Recipient ${recipientId} of envelope ${envelopeId}`);
    if (!isRecipientsTurn(envelope.status, recipient.status)) throw new AppError('not-recipients-turn', `It is not recipient ${recipientId}'s turn to sign (envelope ${envelope.status}, recipient ${recipient.status}).`);
    if (recipient.delivery !== 'email') throw new AppError('conflict', `Recipient ${recipientId} signs embedded: mint a signing session instead (POST /v1/envelopes/${envelopeId}/sessions).`);
    const wait = recipient.lastLinkAt ? recipient.lastLinkAt.getTime() + RESEND_INTERVAL_MS - deps.clock().getTime() : 0;
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      throw new AppError('rate-limited', `A link was sent to this recipient less than a minute ago; try again in ${seconds} s.`, { headers: { 'retry-after': String(seconds) } });
    }
    await sendLink(tx, deps, envelope, recipient, 'your_turn');
    await enqueueEvent(tx, {
      type: 'recipient.resent',
      organizationId: envelope.organizationId,
      data: { envelopeId, testMode: envelope.testMode, recipientId, actor: { kind: principal.kind, id: principal.actorId } },
    });
  }, { timeout: 30_000 });
}
