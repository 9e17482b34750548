import { describe, expect, it } from 'vitest';
import { accountState, periodContaining, type AccountRow } from '../src/account/state.ts';

const row = (overrides: Partial<AccountRow> = {}): AccountRow => ({
  organizationId: 'org_a',
  plan: 'team',
  status: 'active',
  customerId: 'cus_1',
  subscriptionId: 'sub_1',
  currentPeriodStart: new Date('2026-11-15T10:00:00Z'),
  currentPeriodEnd: new Date('2026-12-15T10:00:00Z'),
  cancelAtPeriodEnd: false,
  paymentMethod: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2034 },
  ...overrides,
});

describe('the plan in force and its period', () => {
  it('is Free in the UTC calendar month for an organization billing never saw', () => {
    expect(accountState('org_a', null, new Date('2026-11-30T23:59:59Z'))).toMatchObject({
      plan: 'free', status: 'active', subscriptionId: null, paymentMethod: null,
      period: { start: new Date('2026-11-01T00:00:00Z'), end: new Date('2026-12-01T00:00:00Z') },
    });
    // One millisecond later, the next month.
    expect(accountState('org_a', null, new Date('2026-12-01T00:00:00Z')).period.start).toEqual(new Date('2026-12-01T00:00:00Z'));
  });

  it("counts a paid plan in its subscription's period, and the next month from the same anchor until the renewal arrives", () => {
    expect(accountState('org_a', row(), new Date('2026-12-01T00:00:00Z'))).toMatchObject({ plan: 'team', period: { start: new Date('2026-11-15T10:00:00Z'), end: new Date('2026-12-15T10:00:00Z') } });
    expect(accountState('org_a', row(), new Date('2026-12-20T00:00:00Z')).period).toEqual({ start: new Date('2026-12-15T10:00:00Z'), end: new Date('2027-01-15T10:00:00Z') });
    // An anchor on the 31st falls on the last day of a shorter month, as the processor's does.
    expect(periodContaining({ start: new Date('2027-01-31T00:00:00Z'), end: new Date('2027-02-28T00:00:00Z') }, new Date('2027-03-01T00:00:00Z'))).toEqual({
      start: new Date('2027-02-28T00:00:00Z'),
      end: new Date('2027-03-31T00:00:00Z'),
    });
  });

  it("keeps Pay-as-you-go in Free's calendar months, whatever its subscription's period", () => {
    expect(accountState('org_a', row({ plan: 'payg' }), new Date('2026-11-28T12:00:00Z'))).toMatchObject({ plan: 'payg', period: { start: new Date('2026-11-01T00:00:00Z'), end: new Date('2026-12-01T00:00:00Z') } });
  });

  it('applies a plan while the processor still collects (past_due), and falls back to Free, active, when it does not', () => {
    expect(accountState('org_a', row({ status: 'past_due' }), new Date('2026-11-20T00:00:00Z'))).toMatchObject({ plan: 'team', status: 'past_due' });
    for (const status of ['incomplete', 'canceled', 'unpaid', 'incomplete_expired']) {
      expect(accountState('org_a', row({ status }), new Date('2026-11-20T00:00:00Z'))).toMatchObject({ plan: 'free', status: 'active', subscriptionId: null, customerId: 'cus_1', paymentMethod: { last4: '4242' } });
    }
  });
});
