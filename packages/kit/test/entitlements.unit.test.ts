import { describe, expect, it } from 'vitest';
import { createMemoryBus } from '../src/bus/index.ts';
import { createEntitlementsCache, featureNotOnPlan, includedEnvelopesUsed, overAllowance, type OrganizationEntitlements } from '../src/entitlements.ts';
import { entitlementsChangedSubject } from '@sigil/proto/internal-billing';

const FEATURES = { api: true, webhooks: true, embeddedSigning: true, testMode: true, ssoConnections: 0, enforcedSso: false, scim: false, branding: false, signingLinks: false, viewersPerEnvelope: 1, viewerDocumentAccess: false, sms: false, auditLogExport: false, euDataResidency: false, whiteLabel: false, subAccounts: false };
const answer = (organizationId: string, plan: string): OrganizationEntitlements => ({
  organizationId,
  plan,
  planName: plan === 'free' ? 'Free' : 'Team',
  includedEnvelopes: plan === 'free' ? 100 : 500,
  overageAllowed: plan !== 'free',
  features: { ...FEATURES, sms: plan !== 'free' },
  periodStart: '2026-11-01T00:00:00.000Z',
  periodEnd: '2026-12-01T00:00:00.000Z',
  upgradeUrl: 'https://app.example.test/app/settings/billing',
});

function harness(options: { ttlMs?: number } = {}) {
  const plans = new Map<string, string>();
  let calls = 0;
  let failing = false;
  let now = 0;
  const bus = createMemoryBus();
  const source = async (id: string) => {
    calls++;
    if (failing) throw new Error('billing is down');
    return answer(id, plans.get(id) ?? 'free');
  };
  return {
    plans,
    bus,
    calls: () => calls,
    fail: (value: boolean) => void (failing = value),
    advance: (ms: number) => void (now += ms),
    cache: () => createEntitlementsCache({ source, bus, ttlMs: options.ttlMs ?? 5_000, now: () => now }),
  };
}

describe('the entitlements cache', () => {
  it('answers from memory within the TTL, and asks billing again after it', async () => {
    const h = harness();
    const cache = await h.cache();
    expect((await cache.get('org_a')).plan).toBe('free');
    h.plans.set('org_a', 'team');
    h.advance(4_999);
    expect((await cache.get('org_a')).plan).toBe('free');
    expect(h.calls()).toBe(1);
    h.advance(1);
    expect((await cache.get('org_a')).plan).toBe('team');
    expect(h.calls()).toBe(2);
  });

  it('drops an organization\'s answer at once when billing notifies a plan change, and only that one', async () => {
    const h = harness();
    const cache = await h.cache();
    await cache.get('org_a');
    await cache.get('org_b');
    h.plans.set('org_a', 'team');
    h.bus.notify(entitlementsChangedSubject('org_a'), { organizationId: 'org_a' });
    expect((await cache.get('org_a')).plan).toBe('team');
    expect(h.calls()).toBe(3);
    await cache.get('org_b');
    expect(h.calls()).toBe(3);
    cache.stop();
  });

  it('asks once for concurrent reads, and serves the answer it had while billing cannot be reached', async () => {
    const h = harness();
    const cache = await h.cache();
    const answers = await Promise.all([cache.get('org_a'), cache.get('org_a'), cache.get('org_a')]);
    expect(answers.map((a) => a.plan)).toEqual(['free', 'free', 'free']);
    expect(h.calls()).toBe(1);
    h.fail(true);
    h.advance(60_000);
    expect((await cache.get('org_a')).plan).toBe('free');
    // With no answer at all, the failure is the caller's (the send is refused, never waved through).
    await expect(cache.get('org_new')).rejects.toThrow('billing is down');
  });
});

describe('the refusals', () => {
  it('names the feature, the plan and the upgrade link', () => {
    const free = answer('org_a', 'free');
    const sms = featureNotOnPlan(free, 'sms');
    expect(sms).toMatchObject({ code: 'plan-upgrade-required', status: 403, message: 'SMS verification is not on the Free plan. Upgrade to use it.', extensions: { feature: 'sms', upgradeUrl: free.upgradeUrl } });
    expect(overAllowance(free, 'viewersPerEnvelope', { one: 'viewer', many: 'viewers', per: 'per envelope' }).message).toBe('Your Free plan allows 1 viewer per envelope.');
    expect(includedEnvelopesUsed(free)).toMatchObject({ code: 'payment-required', status: 402, extensions: { upgradeUrl: free.upgradeUrl } });
    expect(includedEnvelopesUsed(free).message).toContain('used its 100 included envelopes this period');
  });
});
