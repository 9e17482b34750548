/**
 * `POST /v1/billing/webhooks/processor`'s check of `Processor-Signature`: the payment processor's own scheme
 * (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, several `v1` while a secret rotates), verified by the
 * official `stripe` SDK, and refused when its time is more than 5 minutes off either way (the SDK refuses only the
 * old ones). `signProcessorWebhook` signs with the same SDK; the local processor (`@sigil/local-processor`, which cannot
 * import a service) writes the same scheme with `node:crypto`, and the adapter's tests verify its webhooks here.
 */
import Stripe from 'stripe';

export const PROCESSOR_SIGNATURE_HEADER = 'processor-signature';
/** How far a signature's time may be from ours, in seconds. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** The processor's event as its SDK types it (`processor.ts`'s `ProcessorEvent` is the same event in our words). */
export type StripeEvent = Stripe.Event;

export type SignatureCheck = { ok: true; event: StripeEvent } | { ok: false; reason: string };

/** The event a signed body holds, or why it is refused (a 400 with that `detail`). `now` in ms. */
export function verifyProcessorWebhook(rawBody: string | Uint8Array, header: string | undefined, secret: string, now = Date.now()): SignatureCheck {
  if (!header) return { ok: false, reason: 'The Processor-Signature header (or Stripe-Signature) is missing.' };
  const time = /(?:^|,)\s*t=(\d+)(?:,|$)/.exec(header)?.[1];
  if (!time) return { ok: false, reason: 'The Processor-Signature header has no time (t=).' };
  const offSeconds = Math.abs(now / 1000 - Number(time));
  if (offSeconds > SIGNATURE_TOLERANCE_SECONDS) return { ok: false, reason: `The Processor-Signature time is ${Math.round(offSeconds)} seconds off; at most ${SIGNATURE_TOLERANCE_SECONDS} are accepted.` };
  try {
    return { ok: true, event: Stripe.webhooks.constructEvent(typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody), header, secret, SIGNATURE_TOLERANCE_SECONDS, undefined, now) };
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) return { ok: false, reason: 'The Processor-Signature does not match the body with the webhook secret.' };
    throw error;
  }
}

/** The header value that signs a body at a time (unix seconds), as the processor sends it. */
export function signProcessorWebhook(payload: string, secret: string, timestamp: number): string {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
}
