/**
 * The upcoming invoice of a period: the plan's base price, the completed envelopes beyond the included ones priced
 * by the plan's graduated tiers, and each metered add-on, as lines in US cents (api-decisions, "Billing"). Free has
 * none (null).
 */
import { ADD_ONS, ADD_ON_IDS, PLANS, type AddOnId, type Plan, type PlanId } from './catalog.ts';

export interface PeriodUsage {
  completedEnvelopes: number;
  addOns: Readonly<Record<AddOnId, number>>;
}

export interface InvoiceLine {
  description: string;
  quantity: number;
  unitAmount: number;
  amount: number;
}

export interface UpcomingInvoice {
  currency: 'usd';
  periodStart: string;
  periodEnd: string;
  lines: InvoiceLine[];
  subtotal: number;
  total: number;
}

/** A count as invoices and the docs write it: 10,000. */
export const count = (n: number) => n.toLocaleString('en-US');
const line = (description: string, quantity: number, unitAmount: number): InvoiceLine => ({ description, quantity, unitAmount, amount: quantity * unitAmount });

export function upcomingInvoice(planId: PlanId, usage: PeriodUsage, period: { start: Date; end: Date }): UpcomingInvoice | null {
  const plan = PLANS[planId];
  if (!plan.subscription) return null;
  const lines = [
    ...(plan.monthlyBase > 0 ? [line(`${plan.name} plan, monthly`, 1, plan.monthlyBase)] : []),
    ...envelopeLines(plan, usage.completedEnvelopes),
    ...ADD_ON_IDS.filter((id) => plan.addOns.includes(id) && usage.addOns[id] > 0).map((id) => line(ADD_ONS[id].description, usage.addOns[id], ADD_ONS[id].unitAmount)),
  ];
  const subtotal = lines.reduce((sum, l) => sum + l.amount, 0);
  return { currency: 'usd', periodStart: period.start.toISOString(), periodEnd: period.end.toISOString(), lines, subtotal, total: subtotal };
}

/** The included envelopes used (free of charge), then one line per overage tier the period reaches. */
function envelopeLines(plan: Plan, completed: number): InvoiceLine[] {
  const lines: InvoiceLine[] = [];
  const included = Math.min(completed, plan.includedEnvelopes);
  if (included > 0) lines.push(line(`Completed envelopes included in the plan (${count(plan.includedEnvelopes)})`, included, 0));
  let from = plan.includedEnvelopes;
  for (const tier of plan.overage) {
    const to = tier.upTo ?? Number.POSITIVE_INFINITY;
    const quantity = Math.max(0, Math.min(completed, to) - from);
    if (quantity > 0) lines.push(line(tier.upTo === null ? `Completed envelopes beyond ${count(from)}` : `Completed envelopes ${count(from + 1)} to ${count(tier.upTo)}`, quantity, tier.unitAmount));
    from = to;
  }
  return lines;
}

/** The completed envelopes of the period beyond the plan's included ones (counted on Free too: sent before the pause). */
export const overageOf = (planId: PlanId, completedEnvelopes: number): number => Math.max(0, completedEnvelopes - PLANS[planId].includedEnvelopes);
