import { AppError } from '@sigil/kit/errors';
import type { components } from '@sigil/proto/api/sigil';
import type { SignerView } from '@sigil/proto/internal-envelopes';
import { brandingOrNone, type BrandingCache } from '@sigil/kit/branding';
import { brandedName } from '@sigil/mail';
import type { Actor, EnvelopesClient } from './envelopes-client.ts';
import type { Signer } from './access.ts';
import type { AttachmentService } from './attachments.ts';

/** The signer's use cases: what `/v1/signing/*` does once the bearer token named the signer. */
export function createSigningService({ envelopes, attachments, branding }: { envelopes: EnvelopesClient; attachments: AttachmentService; branding?: Pick<BrandingCache, 'get'> }) {
  return {
    /** The signer view; the first load while it is their turn is the recipient's first view of the signing page. */
    async session(signer: Signer, actor: Actor) {
      const view: SignerView = await envelopes.view(signer);
      if (view.yourTurn && view.recipient.status === 'sent') await envelopes.viewed(signer, actor);
      // The page shows the organization as its e-mails do: its display name and logo (none when unreadable).
      const brand = await brandingOrNone(branding, signer.organizationId);
      return {
        object: 'signer_view' as const,
        envelopeId: signer.envelopeId,
        recipientId: signer.recipientId,
        testMode: signer.testMode,
        accessExpiresAt: signer.expiresAt.toISOString(),
        envelope: { ...view.envelope, organizationName: brandedName(view.envelope.organizationName, brand) },
        logoUrl: brand?.logoUrl ?? null,
        recipient: { ...view.recipient, status: view.yourTurn && view.recipient.status === 'sent' ? 'viewed' : view.recipient.status },
        yourTurn: view.yourTurn,
        fields: view.fields,
        verification: { required: view.recipient.verification !== 'none', channel: view.recipient.verification === 'none' ? null : view.recipient.verification, verified: signer.verified },
      };
    },

    document: (signer: Signer) => envelopes.document(signer),

    async submit(signer: Signer, body: components['schemas']['SubmitSigning'], actor: Actor) {
      const view = await envelopes.view(signer);
      if (view.recipient.verification !== 'none' && !signer.verified) {
        throw new AppError('verification-required', `Recipient ${signer.recipientId} must verify a one-time code (${view.recipient.verification}) before signing.`);
      }
      await attachments.checkSubmitted(signer, body.fields ?? {});
      const outcome = await envelopes.submit(signer, { fields: body.fields ?? {}, consent: body.consent === true, ...actor });
      return result(signer, outcome.recipientStatus, outcome.envelopeStatus);
    },

    async decline(signer: Signer, reason: string | undefined, actor: Actor) {
      const outcome = await envelopes.decline(signer, reason?.trim() || null, actor);
      return result(signer, outcome.recipientStatus, outcome.envelopeStatus);
    },
  };
}

function result(signer: Signer, status: string, envelopeStatus: string) {
  return { object: 'signing_result' as const, envelopeId: signer.envelopeId, recipientId: signer.recipientId, status, envelopeStatus, redirectUrl: null };
}

export type SigningService = ReturnType<typeof createSigningService>;
