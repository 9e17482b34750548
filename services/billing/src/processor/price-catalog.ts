/**
 * The processor's side of the plan catalog: the lookup key of every price the adapter uses, the meters usage is
 * reported to, and what each price must be (docs/billing.md, "What the processor adapter sends"), all derived from
 * `PLANS` so a price change in the catalog is a change here too.
 */
import { ADD_ONS, ADD_ON_IDS, PLANS, PLAN_IDS, type AddOnId } from '../plans/catalog.ts';
import type { MeterReport, PaidPlanId } from './processor.ts';

export const PAID_PLAN_IDS: readonly PaidPlanId[] = PLAN_IDS.filter((plan): plan is PaidPlanId => PLANS[plan].subscription);

/** The meter of completed envelopes beyond the included ones (every plan's envelopes price is metered on it). */
export const ENVELOPES_METER = 'sigil_envelopes';

/** Each add-on's price lookup key, which is also its meter's event name. */
export const ADD_ON_KEYS: Readonly<Record<AddOnId, string>> = { smsOtp: 'sigil_sms_otp', idCheck: 'sigil_id_check', qesSignature: 'sigil_qes_signature' };

/** The meter event name each reported quantity goes to. */
export const METER_EVENT_NAMES: Readonly<Record<MeterReport['meter'], string>> = { envelopes: ENVELOPES_METER, ...ADD_ON_KEYS };

export const basePriceKey = (plan: PaidPlanId): string => `sigil_${plan}_base`;
export const envelopesPriceKey = (plan: PaidPlanId): string => `sigil_${plan}_envelopes`;

/** The plan's own prices: its monthly base (only when it has one) and its metered envelopes. */
export function planPriceKeys(plan: PaidPlanId): { base: string | undefined; envelopes: string } {
  return { base: PLANS[plan].monthlyBase > 0 ? basePriceKey(plan) : undefined, envelopes: envelopesPriceKey(plan) };
}

/** The plan a base or envelopes price belongs to, from its lookup key; undefined for any other price. */
export function planOfLookupKey(lookupKey: string | null | undefined): PaidPlanId | undefined {
  const plan = /^sigil_([a-z]+)_(?:base|envelopes)$/.exec(lookupKey ?? '')?.[1];
  return PAID_PLAN_IDS.find((paid) => paid === plan);
}

/** One price as it must exist at the processor (amounts in US cents, monthly, USD). */
export interface ProcessorPriceSpec {
  lookupKey: string;
  usage: 'licensed' | 'metered';
  /** The meter's event name, for metered prices. */
  meter?: string;
  unitAmount?: number;
  /** Graduated tiers, over the metered quantity of the period (`upTo` null: no end). */
  tiers?: Array<{ upTo: number | null; unitAmount: number }>;
}

/**
 * Every price Sigil sells, in the processor's terms. The envelopes meter counts only envelopes beyond the included
 * ones, so the catalog's bands (which count from the period's first envelope) move down by the included envelopes:
 * Platform's "$0.08 up to 10,000" with 2,000 included is "$0.08 for the first 8,000 reported". One band is a plain
 * per-unit price.
 */
export function processorPriceSpecs(): ProcessorPriceSpec[] {
  const bases = PAID_PLAN_IDS.filter((plan) => PLANS[plan].monthlyBase > 0).map((plan) => ({ lookupKey: basePriceKey(plan), usage: 'licensed' as const, unitAmount: PLANS[plan].monthlyBase }));
  const envelopes = PAID_PLAN_IDS.map((plan) => {
    const { overage, includedEnvelopes } = PLANS[plan];
    const tiers = overage.map((tier) => ({ upTo: tier.upTo === null ? null : tier.upTo - includedEnvelopes, unitAmount: tier.unitAmount }));
    return { lookupKey: envelopesPriceKey(plan), usage: 'metered' as const, meter: ENVELOPES_METER, ...(tiers.length === 1 ? { unitAmount: tiers[0]!.unitAmount } : { tiers }) };
  });
  const addOns = ADD_ON_IDS.map((addOn) => ({ lookupKey: ADD_ON_KEYS[addOn], usage: 'metered' as const, meter: ADD_ON_KEYS[addOn], unitAmount: ADD_ONS[addOn].unitAmount }));
  return [...bases, ...envelopes, ...addOns];
}
