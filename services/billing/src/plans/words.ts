/** Prices in words, as the docs and the dashboard's plan offers read them. */
import { PLANS, type PlanId } from './catalog.ts';
import { count } from './invoice.ts';

export const dollars = (cents: number) => `$${(cents / 100).toFixed(2).replace(/\.00$/, '')}`;

/** What completed envelopes beyond the included ones cost: `$0.08 up to 10,000, $0.05 up to 50,000, …`. */
export function overageWords(planId: PlanId): string {
  const plan = PLANS[planId];
  if (plan.overage.length === 0) return 'sending pauses';
  let from = plan.includedEnvelopes;
  return plan.overage
    .map((tier) => {
      const words = tier.upTo === null ? `${dollars(tier.unitAmount)} each${from > plan.includedEnvelopes ? ` beyond ${count(from)}` : ''}` : `${dollars(tier.unitAmount)} up to ${count(tier.upTo)}`;
      from = tier.upTo ?? from;
      return words;
    })
    .join(', ');
}

