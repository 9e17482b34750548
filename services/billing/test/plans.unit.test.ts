/**
 * The plans against the spec's tables (part 8), restated here by hand, and upcoming invoices worked out by hand:
 * each plan's included envelopes and overage, Platform's tiers at 9,999 / 10,001 / 50,001 envelopes, the add-ons.
 */
import { describe, expect, it } from 'vitest';
import { calendarMonth, entitlementsOf, monthPeriod, overageOf, periodName, PLAN_IDS, sendingBlocked, upcomingInvoice, type PeriodUsage, type PlanId } from '../src/plans/index.ts';

const PERIOD = { start: new Date('2026-11-01T00:00:00Z'), end: new Date('2026-12-01T00:00:00Z') };
const usage = (completedEnvelopes: number, addOns: Partial<PeriodUsage['addOns']> = {}): PeriodUsage => ({ completedEnvelopes, addOns: { smsOtp: 0, idCheck: 0, qesSignature: 0, ...addOns } });
const totalOf = (plan: PlanId, completed: number, addOns: Partial<PeriodUsage['addOns']> = {}) => upcomingInvoice(plan, usage(completed, addOns), PERIOD)?.total;

describe('the plans, as the spec lists them', () => {
  it('has the five plans with their included envelopes, and overage only with a card or a paid plan', () => {
    expect(PLAN_IDS).toEqual(['free', 'payg', 'team', 'business', 'platform']);
    expect(PLAN_IDS.map((plan) => [plan, entitlementsOf(plan).includedEnvelopes, entitlementsOf(plan).overageAllowed])).toEqual([
      ['free', 100, false],
      ['payg', 100, true],
      ['team', 500, true],
      ['business', 2000, true],
      ['platform', 2000, true],
    ]);
  });

  it('has every row of the feature table', () => {
    const row = (pick: (f: ReturnType<typeof entitlementsOf>['features']) => unknown) => PLAN_IDS.map((plan) => pick(entitlementsOf(plan).features));
    expect(row((f) => f.api && f.webhooks && f.embeddedSigning && f.testMode)).toEqual([true, true, true, true, true]);
    expect(row((f) => f.ssoConnections)).toEqual([0, 0, 1, 3, 3]);
    expect(row((f) => f.enforcedSso)).toEqual([false, false, false, true, true]);
    expect(row((f) => f.scim)).toEqual([false, false, false, true, true]);
    expect(row((f) => f.branding)).toEqual([false, false, true, true, true]);
    expect(row((f) => f.signingLinks)).toEqual([false, false, true, true, true]);
    expect(row((f) => f.viewersPerEnvelope)).toEqual([1, 2, 5, 20, null]);
    expect(row((f) => f.viewerDocumentAccess)).toEqual([false, false, true, true, true]);
    expect(row((f) => f.sms)).toEqual([false, true, true, true, true]);
    expect(row((f) => f.auditLogExport && f.euDataResidency)).toEqual([false, false, false, true, true]);
    expect(row((f) => f.whiteLabel && f.subAccounts)).toEqual([false, false, false, false, true]);
  });

  it('gives each caller its own copy of the features', () => {
    const mine = entitlementsOf('team');
    mine.features.ssoConnections = 99;
    expect(entitlementsOf('team').features.ssoConnections).toBe(1);
  });
});

describe('sending on Free', () => {
  it('pauses once the period has completed the included envelopes, and never with a card on file', () => {
    expect([sendingBlocked('free', 99), sendingBlocked('free', 100), sendingBlocked('free', 101)]).toEqual([false, true, true]);
    expect([sendingBlocked('payg', 100), sendingBlocked('team', 10_000)]).toEqual([false, false]);
    expect([overageOf('free', 103), overageOf('team', 499), overageOf('team', 520)]).toEqual([3, 0, 20]);
  });
});

describe('the upcoming invoice', () => {
  it('is null on Free', () => {
    expect(upcomingInvoice('free', usage(100), PERIOD)).toBeNull();
  });

  it("lists Platform's base, the included envelopes and each tier reached, worked out by hand", () => {
    // 19,900 base; 7,999 × 8 = 63,992.
    expect(totalOf('platform', 9_999)).toBe(19_900 + 63_992);
    // 8,000 × 8 = 64,000; 1 × 5.
    expect(totalOf('platform', 10_001)).toBe(19_900 + 64_000 + 5);
    // 8,000 × 8 = 64,000; 40,000 × 5 = 200,000; 1 × 3.
    expect(totalOf('platform', 50_001)).toBe(19_900 + 64_000 + 200_000 + 3);
    expect(upcomingInvoice('platform', usage(50_001), PERIOD)).toEqual({
      currency: 'usd',
      periodStart: '2026-11-01T00:00:00.000Z',
      periodEnd: '2026-12-01T00:00:00.000Z',
      lines: [
        { description: 'Platform plan, monthly', quantity: 1, unitAmount: 19_900, amount: 19_900 },
        { description: 'Completed envelopes included in the plan (2,000)', quantity: 2_000, unitAmount: 0, amount: 0 },
        { description: 'Completed envelopes 2,001 to 10,000', quantity: 8_000, unitAmount: 8, amount: 64_000 },
        { description: 'Completed envelopes 10,001 to 50,000', quantity: 40_000, unitAmount: 5, amount: 200_000 },
        { description: 'Completed envelopes beyond 50,000', quantity: 1, unitAmount: 3, amount: 3 },
      ],
      subtotal: 283_903,
      total: 283_903,
    });
  });

  it('charges Team, Business and Pay-as-you-go one price beyond their included envelopes', () => {
    expect([totalOf('team', 0), totalOf('team', 500), totalOf('team', 501), totalOf('team', 750)]).toEqual([2_900, 2_900, 2_910, 2_900 + 250 * 10]);
    expect([totalOf('business', 2_000), totalOf('business', 2_100)]).toEqual([14_900, 14_900 + 100 * 8]);
    expect([totalOf('payg', 100), totalOf('payg', 101), totalOf('payg', 130)]).toEqual([0, 20, 30 * 20]);
    expect(upcomingInvoice('payg', usage(130), PERIOD)?.lines).toEqual([
      { description: 'Completed envelopes included in the plan (100)', quantity: 100, unitAmount: 0, amount: 0 },
      { description: 'Completed envelopes beyond 100', quantity: 30, unitAmount: 20, amount: 600 },
    ]);
  });

  it('bills each metered add-on on a line of its own', () => {
    const invoice = upcomingInvoice('team', usage(10, { smsOtp: 7, idCheck: 2, qesSignature: 1 }), PERIOD);
    expect(invoice?.lines.slice(2)).toEqual([
      { description: 'SMS verification codes', quantity: 7, unitAmount: 10, amount: 70 },
      { description: 'ID verifications', quantity: 2, unitAmount: 250, amount: 500 },
      { description: 'EU qualified signatures', quantity: 1, unitAmount: 450, amount: 450 },
    ]);
    expect(invoice?.total).toBe(2_900 + 70 + 500 + 450);
  });
});

describe('billing periods', () => {
  it("is Free's UTC calendar month, across a year's end", () => {
    expect(calendarMonth(new Date('2026-12-31T23:59:59.999Z'))).toEqual({ start: new Date('2026-12-01T00:00:00Z'), end: new Date('2027-01-01T00:00:00Z') });
    expect(calendarMonth(new Date('2027-01-01T00:00:00Z')).start.toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });

  it('reads YYYY-MM and refuses anything else', () => {
    expect(monthPeriod('2026-02')).toEqual({ start: new Date('2026-02-01T00:00:00Z'), end: new Date('2026-03-01T00:00:00Z') });
    for (const bad of ['2026-13', '2026-00', '2026-1', '26-01', '2026-01-01', '']) expect(monthPeriod(bad)).toBeUndefined();
    expect(periodName(monthPeriod('2026-02') as NonNullable<ReturnType<typeof monthPeriod>>)).toBe('2026-02');
  });
});
