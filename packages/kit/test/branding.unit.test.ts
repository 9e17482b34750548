import { describe, expect, it } from 'vitest';
import { createMemoryBus } from '../src/bus/index.ts';
import { brandingOrNone, createBrandingCache, type OrganizationBranding } from '../src/branding.ts';
import { brandingChangedSubject } from '@sigil/proto/internal-branding';
import { entitlementsChangedSubject } from '@sigil/proto/internal-billing';

const answer = (organizationId: string, displayName: string | null): OrganizationBranding => ({ organizationId, displayName, customMessage: null, footer: null, removePoweredBy: false, logoUrl: null });

function harness() {
  const names = new Map<string, string>();
  let calls = 0;
  let failing = false;
  let now = 0;
  const bus = createMemoryBus();
  const source = async (id: string) => {
    calls++;
    if (failing) throw new Error('accounts is down');
    return answer(id, names.get(id) ?? null);
  };
  return {
    names,
    bus,
    calls: () => calls,
    fail: (value: boolean) => void (failing = value),
    advance: (ms: number) => void (now += ms),
    cache: () => createBrandingCache({ source, bus, ttlMs: 60_000, retryAfterMs: 5_000, now: () => now }),
  };
}

describe('the branding cache', () => {
  it('answers from memory within the TTL, and asks accounts again after it', async () => {
    const h = harness();
    const cache = await h.cache();
    expect((await cache.get('org_a')).displayName).toBeNull();
    h.names.set('org_a', 'Acme Legal');
    h.advance(59_999);
    expect((await cache.get('org_a')).displayName).toBeNull();
    h.advance(1);
    expect((await cache.get('org_a')).displayName).toBe('Acme Legal');
    expect(h.calls()).toBe(2);
  });

  it("drops an organization's answer at once on a branding change or a plan change, and only that one", async () => {
    const h = harness();
    const cache = await h.cache();
    await cache.get('org_a');
    await cache.get('org_b');
    h.names.set('org_a', 'Acme Legal');
    h.bus.notify(brandingChangedSubject('org_a'), { organizationId: 'org_a' });
    expect((await cache.get('org_a')).displayName).toBe('Acme Legal');
    expect(h.calls()).toBe(3);
    h.names.set('org_b', 'Bravo');
    h.bus.notify(entitlementsChangedSubject('org_b'), { organizationId: 'org_b' });
    expect((await cache.get('org_b')).displayName).toBe('Bravo');
    await cache.get('org_a');
    expect(h.calls()).toBe(4);
    cache.stop();
  });

  it('serves the answer it had while accounts is down; without one, fails fast for a while instead of asking per e-mail', async () => {
    const h = harness();
    const cache = await h.cache();
    h.names.set('org_a', 'Acme Legal');
    await cache.get('org_a');
    h.fail(true);
    h.advance(120_000);
    expect((await cache.get('org_a')).displayName).toBe('Acme Legal');
    const before = h.calls();
    await expect(cache.get('org_new')).rejects.toThrow('accounts is down');
    await expect(cache.get('org_new')).rejects.toThrow('accounts is down');
    expect(h.calls()).toBe(before + 1);
    h.advance(5_000);
    h.fail(false);
    expect((await cache.get('org_new')).organizationId).toBe('org_new');
  });

  it('brandingOrNone never throws: no cache or no answer is an unbranded e-mail', async () => {
    const h = harness();
    const cache = await h.cache();
    expect(await brandingOrNone(undefined, 'org_a')).toBeUndefined();
    h.fail(true);
    const warnings: unknown[] = [];
    const log = { warn: (...args: unknown[]) => void warnings.push(args) } as unknown as Parameters<typeof brandingOrNone>[2];
    expect(await brandingOrNone(cache, 'org_a', log)).toBeUndefined();
    expect(warnings).toHaveLength(1);
  });
});
