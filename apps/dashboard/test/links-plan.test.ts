import { describe, expect, it } from 'vitest';
import { ApiError } from '@sigil/web-ui';
import { planRefusal, upgradeHref } from '../src/api/plan.ts';
import { capReached, capShare, DEFAULT_LIMITS, envelopes, limitWords, todayWords } from '../src/pages/links/usage.ts';

const ORIGIN = 'http://127.0.0.1:8080';

const problem = (extra: Record<string, unknown>) =>
  new ApiError({ type: 'https://sigil.dev/problems/plan-upgrade-required', title: 'Plan upgrade required', status: 403, detail: 'Your Free plan allows 1 viewer per envelope.', ...extra } as ConstructorParameters<typeof ApiError>[0]);

// A plan's refusal becomes a notice with the way to the billing page, never a bare error.
describe('plan refusals', () => {
  it('reads the detail, the feature and the upgrade link of a 403 plan-upgrade-required', () => {
    const refusal = planRefusal(problem({ feature: 'viewersPerEnvelope', upgradeUrl: `${ORIGIN}/app/settings/billing` }), ORIGIN);
    expect(refusal).toEqual({ detail: 'Your Free plan allows 1 viewer per envelope.', feature: 'viewersPerEnvelope', href: '/settings/billing' });
  });

  it('is undefined for a missing permission, a validation problem or anything else', () => {
    expect(planRefusal(new ApiError({ title: 'Forbidden', status: 403, detail: 'Needs envelope:send.' }), ORIGIN)).toBeUndefined();
    expect(planRefusal(new ApiError({ title: 'Validation failed', status: 400, detail: 'x', errors: [{ pointer: '/body/viewers/0/email', detail: 'bad' }] }), ORIGIN)).toBeUndefined();
    expect(planRefusal(new Error('network'), ORIGIN)).toBeUndefined();
    expect(planRefusal(undefined, ORIGIN)).toBeUndefined();
  });

  it('links to the app page on this origin, to another origin as it is, and to the billing page without a URL', () => {
    expect(upgradeHref(`${ORIGIN}/app/settings/billing?from=links`, ORIGIN)).toBe('/settings/billing?from=links');
    expect(upgradeHref('https://app.sigil.dev/settings/billing', ORIGIN)).toBe('https://app.sigil.dev/settings/billing');
    expect(upgradeHref(undefined, ORIGIN)).toBe('/settings/billing');
    expect(upgradeHref('http://[bad', ORIGIN)).toBe('/settings/billing');
  });
});

// The signing-links table words a link's use today against its caps.
describe('link usage', () => {
  const capped = { perEmailPerDay: 3, perIpPerHour: 20, dailyCap: 50 };

  it('counts today against the daily cap, or alone without one', () => {
    expect(todayWords({ today: 3, total: 9 }, capped)).toBe('3 of 50 today');
    expect(todayWords({ today: 3, total: 9 }, DEFAULT_LIMITS)).toBe('3 today');
  });

  it('fills the meter up to the cap and says when the cap is reached', () => {
    expect(capShare({ today: 25, total: 25 }, capped)).toBe(0.5);
    expect(capShare({ today: 60, total: 60 }, capped)).toBe(1);
    expect(capShare({ today: 1, total: 1 }, DEFAULT_LIMITS)).toBeUndefined();
    expect(capReached({ today: 49, total: 49 }, capped)).toBe(false);
    expect(capReached({ today: 50, total: 50 }, capped)).toBe(true);
    expect(capReached({ today: 500, total: 500 }, DEFAULT_LIMITS)).toBe(false);
  });

  it('words the per-visitor limits and the totals', () => {
    expect(limitWords(DEFAULT_LIMITS)).toBe('3 times per e-mail a day · 20 times per IP address an hour');
    expect(limitWords({ perEmailPerDay: 1, perIpPerHour: 1 })).toBe('once per e-mail a day · once per IP address an hour');
    expect(envelopes(1)).toBe('1 envelope');
    expect(envelopes(0)).toBe('0 envelopes');
  });
});
