/** Processor-Signature: the processor's scheme, checked by its SDK, with 5 minutes either way (api-decisions, "Billing"). */
import { createHmac } from 'node:crypto';
import { signWebhookPayload } from '@sigil/local-processor';
import { describe, expect, it } from 'vitest';
import { signProcessorWebhook, verifyProcessorWebhook } from '../src/processor/webhook-signature.ts';

const SECRET = 'whsec_local_test_secret';
const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const T = NOW / 1000;
const body = JSON.stringify({ id: 'evt_1', object: 'event', type: 'customer.subscription.updated', created: T, data: { object: { id: 'sub_1', object: 'subscription' } } });
/** The scheme written out by hand, not by the SDK: what the spec's header says. */
const byHand = (t: number, payload = body, secret = SECRET) => `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${payload}`).digest('hex')}`;

describe('verifyProcessorWebhook', () => {
  it('accepts a body signed by the scheme, and the SDK signs it the same way', () => {
    expect(signProcessorWebhook(body, SECRET, T)).toBe(byHand(T));
    // The local processor (a package: it cannot use this module) writes the same header.
    expect(signWebhookPayload(body, SECRET, T)).toBe(byHand(T));
    const check = verifyProcessorWebhook(body, byHand(T), SECRET, NOW);
    expect(check).toMatchObject({ ok: true, event: { id: 'evt_1', type: 'customer.subscription.updated' } });
    expect(verifyProcessorWebhook(Buffer.from(body), byHand(T), SECRET, NOW).ok).toBe(true);
  });

  it('accepts any of several v1 signatures (a secret being rotated)', () => {
    const header = `t=${T},v1=${'0'.repeat(64)},${byHand(T).split(',')[1]}`;
    expect(verifyProcessorWebhook(body, header, SECRET, NOW).ok).toBe(true);
  });

  it('refuses another body, another secret, a missing or timeless header', () => {
    expect(verifyProcessorWebhook(`${body} `, byHand(T), SECRET, NOW)).toEqual({ ok: false, reason: 'The Processor-Signature does not match the body with the webhook secret.' });
    expect(verifyProcessorWebhook(body, byHand(T, body, 'whsec_other'), SECRET, NOW).ok).toBe(false);
    expect(verifyProcessorWebhook(body, undefined, SECRET, NOW)).toEqual({ ok: false, reason: 'The Processor-Signature header (or Stripe-Signature) is missing.' });
    expect(verifyProcessorWebhook(body, `v1=${'a'.repeat(64)}`, SECRET, NOW)).toEqual({ ok: false, reason: 'The Processor-Signature header has no time (t=).' });
  });

  it('accepts 5 minutes off either way, and refuses more', () => {
    for (const t of [T - 300, T + 300]) expect(verifyProcessorWebhook(body, byHand(t), SECRET, NOW).ok).toBe(true);
    expect(verifyProcessorWebhook(body, byHand(T - 301), SECRET, NOW)).toEqual({ ok: false, reason: 'The Processor-Signature time is 301 seconds off; at most 300 are accepted.' });
    expect(verifyProcessorWebhook(body, byHand(T + 301), SECRET, NOW).ok).toBe(false);
  });
});
