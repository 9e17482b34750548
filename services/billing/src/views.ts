/** The billing answers of the contract (components/schemas Billing, BillingSubscription, Usage), built from state. */
import type { OrganizationEntitlements } from '@sigil/proto/internal-billing';
import type { AccountState } from './account/state.ts';
import { entitlementsOf, overageOf, periodName, PLANS, sendingBlocked, upcomingInvoice, type Period } from './plans/index.ts';
import type { PeriodUsageCounts } from './usage/read.ts';

export function usageView(state: Pick<AccountState, 'plan'>, period: Period, counts: PeriodUsageCounts) {
  return {
    period: periodName(period),
    periodStart: period.start.toISOString(),
    periodEnd: period.end.toISOString(),
    completedEnvelopes: counts.completedEnvelopes,
    included: PLANS[state.plan].includedEnvelopes,
    overage: overageOf(state.plan, counts.completedEnvelopes),
    addOns: { ...counts.addOns },
    daily: counts.daily,
  };
}

export type UsageView = ReturnType<typeof usageView>;

export function subscriptionView(state: AccountState, counts: PeriodUsageCounts) {
  return {
    object: 'billing_subscription' as const,
    plan: state.plan,
    planName: PLANS[state.plan].name,
    status: state.status,
    currentPeriodStart: state.period.start.toISOString(),
    currentPeriodEnd: state.period.end.toISOString(),
    cancelAtPeriodEnd: state.cancelAtPeriodEnd,
    usage: usageView(state, state.period, counts),
  };
}

export function billingView(state: AccountState, counts: PeriodUsageCounts) {
  const { object: _object, ...subscription } = subscriptionView(state, counts);
  return {
    object: 'billing' as const,
    ...subscription,
    hasPaymentMethod: state.paymentMethod !== null,
    paymentMethod: state.paymentMethod,
    sendingBlocked: sendingBlocked(state.plan, counts.completedEnvelopes),
    upcomingInvoice: upcomingInvoice(state.plan, counts, state.period),
    entitlements: entitlementsOf(state.plan),
  };
}

export type BillingView = ReturnType<typeof billingView>;

export function entitlementsView(state: AccountState, upgradeUrl: string): OrganizationEntitlements {
  return {
    organizationId: state.organizationId,
    planName: PLANS[state.plan].name,
    ...entitlementsOf(state.plan),
    periodStart: state.period.start.toISOString(),
    periodEnd: state.period.end.toISOString(),
    upgradeUrl,
  };
}
