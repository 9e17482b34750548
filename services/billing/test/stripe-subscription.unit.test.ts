/** Reading the processor's subscription object: where the plan and the period come from, in old and new API versions. */
import type Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { processorPriceSpecs } from '../src/processor/price-catalog.ts';
import { readSubscription, subscriptionPeriod, subscriptionPlan } from '../src/processor/stripe-subscription.ts';

const START = 1_795_000_000;
const END = 1_797_600_000;

function subscription(fields: { metadata?: Record<string, string>; lookupKeys?: string[]; itemPeriod?: boolean; ownPeriod?: boolean; status?: string }): Stripe.Subscription {
  const items = (fields.lookupKeys ?? ['sigil_team_base']).map((lookupKey, index) => ({
    id: `si_${index}`,
    price: { id: `price_${index}`, lookup_key: lookupKey },
    ...(fields.itemPeriod === false ? {} : { current_period_start: START, current_period_end: END }),
  }));
  return {
    id: 'sub_1',
    object: 'subscription',
    customer: { id: 'cus_1' },
    status: fields.status ?? 'active',
    cancel_at_period_end: false,
    metadata: fields.metadata ?? {},
    items: { object: 'list', data: items },
    ...(fields.ownPeriod ? { current_period_start: START - 10, current_period_end: END - 10 } : {}),
  } as unknown as Stripe.Subscription;
}

describe('reading a subscription', () => {
  it('takes the plan from metadata, else from the lookup key of its base or envelopes price', () => {
    expect(subscriptionPlan(subscription({ metadata: { plan: 'business' }, lookupKeys: ['sigil_team_base'] }))).toBe('business');
    expect(subscriptionPlan(subscription({ lookupKeys: ['sigil_sms_otp', 'sigil_payg_envelopes'] }))).toBe('payg');
    expect(subscriptionPlan(subscription({ metadata: { plan: 'free' }, lookupKeys: ['sigil_sms_otp', 'someone_elses_price'] }))).toBeUndefined();
  });

  it("reads the period from the items (current API versions), else from the subscription (older ones)", () => {
    expect(subscriptionPeriod(subscription({}))).toEqual({ start: new Date(START * 1000), end: new Date(END * 1000) });
    expect(subscriptionPeriod(subscription({ itemPeriod: false, ownPeriod: true }))).toEqual({ start: new Date((START - 10) * 1000), end: new Date((END - 10) * 1000) });
    expect(subscriptionPeriod(subscription({ itemPeriod: false }))).toBeUndefined();
  });

  it('refuses a subscription on no Sigil plan, without a period, or in a status Sigil does not know', () => {
    const card = { brand: 'visa', last4: '4242', expMonth: 1, expYear: 2030 };
    expect(readSubscription(subscription({ metadata: { organization: 'org_1' } }), card)).toEqual({
      id: 'sub_1', customerId: 'cus_1', organizationId: 'org_1', plan: 'team', status: 'active', currentPeriodStart: new Date(START * 1000), currentPeriodEnd: new Date(END * 1000), cancelAtPeriodEnd: false, paymentMethod: card,
    });
    expect(() => readSubscription(subscription({ lookupKeys: ['other'] }), null)).toThrow(/is on no Sigil plan/);
    expect(() => readSubscription(subscription({ itemPeriod: false }), null)).toThrow(/has no current period/);
    expect(() => readSubscription(subscription({ status: 'frozen' }), null)).toThrow(/status frozen, which Sigil does not know/);
  });
});

describe('the prices the processor must hold', () => {
  it("moves the catalog's bands down by the included envelopes, since only envelopes beyond them are reported", () => {
    const specs = new Map(processorPriceSpecs().map((spec) => [spec.lookupKey, spec]));
    expect(specs.get('sigil_platform_envelopes')).toEqual({ lookupKey: 'sigil_platform_envelopes', usage: 'metered', meter: 'sigil_envelopes', tiers: [{ upTo: 8_000, unitAmount: 8 }, { upTo: 48_000, unitAmount: 5 }, { upTo: null, unitAmount: 3 }] });
    expect(specs.get('sigil_team_envelopes')).toEqual({ lookupKey: 'sigil_team_envelopes', usage: 'metered', meter: 'sigil_envelopes', unitAmount: 10 });
    expect(specs.get('sigil_team_base')).toEqual({ lookupKey: 'sigil_team_base', usage: 'licensed', unitAmount: 2900 });
    expect(specs.has('sigil_payg_base')).toBe(false);
    expect(specs.get('sigil_qes_signature')).toEqual({ lookupKey: 'sigil_qes_signature', usage: 'metered', meter: 'sigil_qes_signature', unitAmount: 450 });
    expect(specs.size).toBe(10);
  });
});
