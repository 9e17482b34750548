/**
 * The products, prices and meters the local processor starts with: what an operator creates once in the real
 * processor's account for Sigil (docs/billing.md, "What the processor adapter sends"). A package cannot read the
 * billing service's plan catalog, so the amounts are written here; the billing service's tests compare this seed with
 * its catalog (`services/billing/test/stripe-processor.test.ts`), so the two cannot drift apart unnoticed.
 */

export interface MeterSeed {
  eventName: string;
  displayName: string;
}

export interface PriceSeed {
  lookupKey: string;
  productKey: string;
  nickname: string;
  usage: 'licensed' | 'metered';
  /** The meter's event name, for metered prices. */
  meter?: string;
  /** Per-unit price in cents; absent for a tiered price. */
  unitAmount?: number;
  /** Graduated tiers over the period's metered quantity (`upTo` null: no end). */
  tiers?: Array<{ upTo: number | null; unitAmount: number }>;
}

export interface ProductSeed {
  key: string;
  name: string;
  description: string;
  unitLabel: string | null;
}

export const ENVELOPES_METER = 'sigil_envelopes';

export const METER_SEEDS: readonly MeterSeed[] = [
  { eventName: ENVELOPES_METER, displayName: 'Completed envelopes beyond the included ones' },
  { eventName: 'sigil_sms_otp', displayName: 'SMS verification codes' },
  { eventName: 'sigil_id_check', displayName: 'ID verifications' },
  { eventName: 'sigil_qes_signature', displayName: 'EU qualified signatures' },
];

interface PlanSeed {
  plan: string;
  name: string;
  monthlyBase: number;
  included: number;
  /** The envelopes price's tiers, counted in envelopes beyond the included ones (what the adapter reports). */
  tiers: Array<{ upTo: number | null; unitAmount: number }>;
}

const PLAN_SEEDS: readonly PlanSeed[] = [
  { plan: 'payg', name: 'Pay-as-you-go', monthlyBase: 0, included: 100, tiers: [{ upTo: null, unitAmount: 20 }] },
  { plan: 'team', name: 'Team', monthlyBase: 2900, included: 500, tiers: [{ upTo: null, unitAmount: 10 }] },
  { plan: 'business', name: 'Business', monthlyBase: 14900, included: 2000, tiers: [{ upTo: null, unitAmount: 8 }] },
  {
    plan: 'platform',
    name: 'Platform',
    monthlyBase: 19900,
    included: 2000,
    tiers: [
      { upTo: 8_000, unitAmount: 8 },
      { upTo: 48_000, unitAmount: 5 },
      { upTo: null, unitAmount: 3 },
    ],
  },
];

const ADD_ON_SEEDS = [
  { key: 'sigil_sms_otp', name: 'SMS verification codes', unitLabel: 'code', unitAmount: 10 },
  { key: 'sigil_id_check', name: 'ID verifications', unitLabel: 'verification', unitAmount: 250 },
  { key: 'sigil_qes_signature', name: 'EU qualified signatures', unitLabel: 'signature', unitAmount: 450 },
] as const;

export const PRODUCT_SEEDS: readonly ProductSeed[] = [
  ...PLAN_SEEDS.map((seed) => ({
    key: `sigil_${seed.plan}`,
    name: `Sigil ${seed.name}`,
    description: `The ${seed.name} plan: ${seed.included.toLocaleString('en-US')} completed envelopes a month included.`,
    unitLabel: 'envelope',
  })),
  ...ADD_ON_SEEDS.map((seed) => ({ key: seed.key, name: seed.name, description: `${seed.name}, billed as used.`, unitLabel: seed.unitLabel })),
];

export const PRICE_SEEDS: readonly PriceSeed[] = [
  ...PLAN_SEEDS.filter((seed) => seed.monthlyBase > 0).map((seed) => ({
    lookupKey: `sigil_${seed.plan}_base`,
    productKey: `sigil_${seed.plan}`,
    nickname: `${seed.name} plan, monthly`,
    usage: 'licensed' as const,
    unitAmount: seed.monthlyBase,
  })),
  ...PLAN_SEEDS.map((seed) => ({
    lookupKey: `sigil_${seed.plan}_envelopes`,
    productKey: `sigil_${seed.plan}`,
    nickname: `Completed envelopes beyond the ${seed.included.toLocaleString('en-US')} included`,
    usage: 'metered' as const,
    meter: ENVELOPES_METER,
    // One band is a plain per-unit price; several are graduated tiers.
    ...(seed.tiers.length === 1 ? { unitAmount: seed.tiers[0]!.unitAmount } : { tiers: seed.tiers }),
  })),
  ...ADD_ON_SEEDS.map((seed) => ({ lookupKey: seed.key, productKey: seed.key, nickname: seed.name, usage: 'metered' as const, meter: seed.key, unitAmount: seed.unitAmount })),
];
