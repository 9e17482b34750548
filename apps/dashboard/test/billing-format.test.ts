import { describe, expect, it } from 'vitest';
import { chartDays, chartScale, chartSummary, cardWords, formatCents, formatPrice, lastDayOf, periodWords, planAction, usedShare } from '../src/pages/settings/billing/format.ts';
import { checkoutReturnUrls } from '../src/pages/settings/billing/checkout.ts';
import { checkoutReturnFrom, planReached } from '../src/pages/settings/billing/useCheckoutReturn.ts';

// The billing page's words and numbers: the API gives cents, exclusive period ends and UTC days.
describe('money', () => {
  it('writes cents as dollars, the cents always shown on invoice amounts', () => {
    expect(formatCents(2900)).toBe('$29.00');
    expect(formatCents(10)).toBe('$0.10');
    expect(formatCents(283903)).toBe('$2,839.03');
    expect(formatCents(0)).toBe('$0.00');
  });

  it('writes a plan price in whole dollars when it has no cents', () => {
    expect(formatPrice(14900)).toBe('$149');
    expect(formatPrice(0)).toBe('$0');
    expect(formatPrice(2950)).toBe('$29.50');
  });
});

describe('periods', () => {
  it("ends Free's calendar month on its last day, not on the next month's first midnight", () => {
    expect(lastDayOf('2026-12-01T00:00:00.000Z')).toBe('2026-11-30');
    expect(periodWords('2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z')).toBe('Nov 1 – Nov 30, 2026');
  });

  it("ends a subscription's period on the day its end falls in, and names both years across a new year", () => {
    expect(lastDayOf('2027-01-28T03:51:00.000Z')).toBe('2027-01-28');
    expect(periodWords('2026-12-28T03:51:00.000Z', '2027-01-28T03:51:00.000Z')).toBe('Dec 28, 2026 – Jan 28, 2027');
  });
});

describe('the daily chart', () => {
  const daily = [
    { date: '2026-11-01', completedEnvelopes: 0 },
    { date: '2026-11-02', completedEnvelopes: 3 },
    { date: '2026-11-03', completedEnvelopes: 7 },
  ];
  const days = chartDays(daily, '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z');

  it('spans the whole period, the days still to come empty', () => {
    expect(days).toHaveLength(30);
    expect(days.slice(0, 4)).toEqual([
      { date: '2026-11-01', count: 0 },
      { date: '2026-11-02', count: 3 },
      { date: '2026-11-03', count: 7 },
      { date: '2026-11-04', count: null },
    ]);
    expect(days.at(-1)).toEqual({ date: '2026-11-30', count: null });
  });

  it('counts a day the series skipped before its last day as none', () => {
    const gap = chartDays([daily[0]!, daily[2]!], '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z');
    expect(gap[1]).toEqual({ date: '2026-11-02', count: 0 });
  });

  it('says in words what the bars show', () => {
    expect(chartSummary(days)).toBe('10 completed envelopes from Nov 1 to Nov 3; the busiest day was Nov 3 with 7.');
    const firstDay = (count: number) => chartDays([{ date: '2026-11-01', completedEnvelopes: count }], '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z');
    expect(chartSummary(firstDay(0))).toBe('No envelopes completed on Nov 1.');
    expect(chartSummary(firstDay(1))).toBe('1 completed envelope on Nov 1.');
    expect(chartSummary(chartDays([], '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z'))).toBe('No day of this period has passed yet.');
  });

  it('scales to a round number at or above the busiest day', () => {
    expect(chartScale(days)).toBe(10);
    expect(chartScale([{ date: '2026-11-01', count: 0 }])).toBe(1);
    expect(chartScale([{ date: '2026-11-01', count: 120 }])).toBe(200);
    expect(chartScale([{ date: '2026-11-01', count: 2 }])).toBe(2);
  });
});

describe('the plan buttons', () => {
  const offers = (current: string) =>
    [
      ['free', 'Free'],
      ['payg', 'Pay-as-you-go'],
      ['team', 'Team'],
      ['business', 'Business'],
      ['platform', 'Platform'],
    ].map(([id, name]) => ({ id: id!, name: name!, current: id === current }));

  it('offers a card from Free and upgrades to the paid plans; none on the current plan', () => {
    const list = offers('free');
    expect(list.map((offer) => planAction(list, offer)?.label)).toEqual([undefined, 'Add a card', 'Upgrade to Team', 'Upgrade to Business', 'Upgrade to Platform']);
  });

  it('on a paid plan, names upgrades and downgrades; Free is reached through the portal, not a button', () => {
    const list = offers('business');
    expect(list.map((offer) => planAction(list, offer)?.label)).toEqual([undefined, 'Downgrade to Pay-as-you-go', 'Downgrade to Team', undefined, 'Upgrade to Platform']);
  });
});

describe('coming back from checkout', () => {
  it('asks the processor to come back to the billing page, saying how it went and which plan was chosen', () => {
    expect(checkoutReturnUrls(new URL('http://127.0.0.1:8080/app/settings/billing'), 'team')).toEqual({
      successUrl: 'http://127.0.0.1:8080/app/settings/billing?checkout=success&plan=team',
      cancelUrl: 'http://127.0.0.1:8080/app/settings/billing?checkout=canceled',
    });
  });

  it('reads the return from the address', () => {
    expect(checkoutReturnFrom(new URLSearchParams('checkout=success&plan=team'))).toEqual({ phase: 'waiting', source: 'checkout', plan: 'team' });
    expect(checkoutReturnFrom(new URLSearchParams('checkout=success'))).toEqual({ phase: 'waiting', source: 'checkout' });
    expect(checkoutReturnFrom(new URLSearchParams('checkout=canceled'))).toEqual({ phase: 'canceled' });
    expect(checkoutReturnFrom(new URLSearchParams('checkout=maybe'))).toBeUndefined();
  });

  it('waits for the chosen plan, or for any change when the address did not name one', () => {
    expect(planReached('team', 'free', 'free')).toBe(false);
    expect(planReached('team', 'free', 'team')).toBe(true);
    expect(planReached(undefined, 'free', 'free')).toBe(false);
    expect(planReached(undefined, 'free', 'payg')).toBe(true);
  });
});

describe('cards and usage', () => {
  it('names the card by its brand, last four digits and expiry', () => {
    expect(cardWords({ brand: 'visa', last4: '4242', expMonth: 4, expYear: 2031 })).toBe('Visa ending in 4242, expires 04/2031');
  });

  it('fills the meter to the share of included envelopes used, full past them', () => {
    expect(usedShare(0, 100)).toBe(0);
    expect(usedShare(37, 500)).toBe(7);
    expect(usedShare(140, 100)).toBe(100);
  });
});
