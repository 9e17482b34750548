/**
 * What an organization's plan lets it do, as the Billing object's `entitlements` says it and every service enforces
 * it; and whether its sending is blocked (Free, once the period's included envelopes are used).
 */
import { PLANS, type PlanFeatures, type PlanId } from './catalog.ts';

export interface Entitlements {
  plan: PlanId;
  includedEnvelopes: number;
  /** Completed envelopes beyond the included ones are billed (a card is on file); false on Free: sending pauses. */
  overageAllowed: boolean;
  features: PlanFeatures;
}

export function entitlementsOf(plan: PlanId): Entitlements {
  const { includedEnvelopes, overage, features } = PLANS[plan];
  return { plan, includedEnvelopes, overageAllowed: overage.length > 0, features: { ...features } };
}

/**
 * Whether new live envelopes are refused (402): on a plan without overage once the period's completed envelopes reach
 * the included ones. Envelopes already sent still complete, and count.
 */
export function sendingBlocked(plan: PlanId, completedEnvelopes: number): boolean {
  const entitlements = entitlementsOf(plan);
  return !entitlements.overageAllowed && completedEnvelopes >= entitlements.includedEnvelopes;
}
