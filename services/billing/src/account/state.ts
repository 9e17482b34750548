/**
 * An organization's billing state read from its account row: the plan in force, its status and its current period.
 * Pure: the row and the clock in, the state out.
 */
import { calendarMonth, isPlanId, PLANS, type Period, type PlanId } from '../plans/index.ts';
import type { PaymentMethodSummary } from '../processor/processor.ts';

/** The account row as this module needs it (Prisma's `BillingAccount`). */
export interface AccountRow {
  organizationId: string;
  plan: string;
  status: string;
  customerId: string | null;
  subscriptionId: string | null;
  currentPeriodStart: Date | null;
  currentPeriodEnd: Date | null;
  cancelAtPeriodEnd: boolean;
  paymentMethod: unknown;
}

export interface AccountState {
  organizationId: string;
  plan: PlanId;
  status: string;
  period: Period;
  cancelAtPeriodEnd: boolean;
  customerId: string | null;
  /** The paid subscription in force, if any. */
  subscriptionId: string | null;
  paymentMethod: PaymentMethodSummary | null;
}

/** The processor's states in which a subscription's plan applies (past_due: the processor still retries the card). */
const PLAN_APPLIES = new Set(['active', 'trialing', 'past_due']);

/** Whether a subscription in this state can be switched to another plan in place (rather than checked out anew). */
export const subscriptionLive = (state: AccountState): boolean => state.subscriptionId !== null && state.plan !== 'free';

/**
 * Pay-as-you-go is Free with a card on file: its period stays the UTC calendar month (its subscription is anchored to
 * the 1st), so the envelopes completed before the card was added still count, and the next one past the included ones
 * is overage. The other paid plans count in their subscription's period.
 */
export function accountState(organizationId: string, row: AccountRow | null, now: Date): AccountState {
  const applies = row !== null && row.subscriptionId !== null && PLAN_APPLIES.has(row.status) && isPlanId(row.plan) && row.plan !== 'free';
  const plan: PlanId = applies ? (row.plan as PlanId) : 'free';
  return {
    organizationId,
    plan,
    // Free is `active`; a subscription that ended or never started leaves the workspace on Free, active.
    status: applies ? row.status : 'active',
    period: applies && plan !== 'payg' && row.currentPeriodStart && row.currentPeriodEnd ? periodContaining({ start: row.currentPeriodStart, end: row.currentPeriodEnd }, now) : calendarMonth(now),
    cancelAtPeriodEnd: applies ? row.cancelAtPeriodEnd : false,
    customerId: row?.customerId ?? null,
    subscriptionId: applies ? row.subscriptionId : null,
    paymentMethod: readPaymentMethod(row?.paymentMethod),
  };
}

/**
 * The subscription's period holding `now`. The processor renews a period with an event; until it arrives, the period
 * after the last one known is counted in, a month at a time from its start (the processor's monthly anchor).
 */
export function periodContaining(known: Period, now: Date): Period {
  let period = known;
  for (let i = 0; i < 1200 && now.getTime() >= period.end.getTime(); i++) period = { start: period.end, end: addMonths(known.start, i + 2) };
  return period;
}

function addMonths(anchor: Date, months: number): Date {
  const next = new Date(anchor);
  const day = anchor.getUTCDate();
  next.setUTCDate(1);
  next.setUTCMonth(next.getUTCMonth() + months);
  // The 31st anchors to the month's last day when the month is shorter (the processor does the same).
  const last = new Date(Date.UTC(next.getUTCFullYear(), next.getUTCMonth() + 1, 0)).getUTCDate();
  next.setUTCDate(Math.min(day, last));
  return next;
}

function readPaymentMethod(value: unknown): PaymentMethodSummary | null {
  if (!value || typeof value !== 'object') return null;
  const card = value as Partial<PaymentMethodSummary>;
  return typeof card.last4 === 'string' && typeof card.brand === 'string' ? { brand: card.brand, last4: card.last4, expMonth: Number(card.expMonth), expYear: Number(card.expYear) } : null;
}

export const planName = (plan: PlanId): string => PLANS[plan].name;
