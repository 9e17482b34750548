// The plan limits a new envelope meets (billing's entitlements, played here by an in-memory source).
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEntitlementsCache, type OrganizationEntitlements } from '@sigil/kit/entitlements';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal } from '@sigil/kit/testing';
import type { Principal } from '@sigil/kit/auth';
import { sampleVersion, startEnvelopesHarness, type EnvelopesHarness } from './helpers.ts';

const UPGRADE = 'https://app.example.test/app/settings/billing';
const PERIOD = { periodStart: '2026-11-01T00:00:00.000Z', periodEnd: '2026-12-01T00:00:00.000Z' };
const FEATURES = { api: true, webhooks: true, embeddedSigning: true, testMode: true, ssoConnections: 0, enforcedSso: false, scim: false, branding: false, signingLinks: false, viewersPerEnvelope: 1, viewerDocumentAccess: false, auditLogExport: false, euDataResidency: false, whiteLabel: false, subAccounts: false };
const free = (organizationId: string): OrganizationEntitlements => ({ organizationId, plan: 'free', planName: 'Free', includedEnvelopes: 2, overageAllowed: false, features: { ...FEATURES, sms: false }, ...PERIOD, upgradeUrl: UPGRADE });
const payg = (organizationId: string): OrganizationEntitlements => ({ ...free(organizationId), plan: 'payg', planName: 'Pay-as-you-go', overageAllowed: true, features: { ...FEATURES, sms: true, viewersPerEnvelope: 2 } });

let h: EnvelopesHarness;
const plans = new Map<string, (organizationId: string) => OrganizationEntitlements>();
const templateId = newId('tpl');
const live = (permissions = ['envelope:read', 'envelope:send']) => apiKeyPrincipal({ mode: 'live', permissions: permissions as Principal['permissions'] });

beforeAll(async () => {
  // The TTL is 0: each request reads the source, so a test changes a plan by changing the map.
  const entitlements = await createEntitlementsCache({ source: async (id) => (plans.get(id) ?? free)(id), ttlMs: 0 });
  h = await startEnvelopesHarness('plan_limits', { entitlements });
}, 60_000);
afterAll(async () => h?.close());

async function workspace(plan = free) {
  const principal = live();
  plans.set(principal.organizationId, plan);
  h.templates.publish(principal.organizationId, sampleVersion(templateId, 1));
  return principal;
}

const recipients = [
  { role: 'client', name: 'Ada Lovelace', email: 'ada@example.com' },
  { role: 'counsel', name: 'Charles Babbage', email: 'charles@example.com' },
];
async function send(principal: Principal, extra: Record<string, unknown> = {}, query = '') {
  return request(h.app).post(`/v1/envelopes${query}`).set(await h.auth.headers(principal)).send({ template: templateId, recipients, variables: { company: 'Acme' }, ...extra });
}
/** Marks an envelope completed at a moment (what signing's last signature does). */
const complete = (id: string, at: string) => h.db.envelope.update({ where: { id }, data: { status: 'completed', completedAt: new Date(at) } });

describe('sending on a plan without overage (Free)', () => {
  it('sends until the period\'s included envelopes are completed, then answers 402 with the upgrade link; test mode goes on', async () => {
    const principal = await workspace();
    const sent = [await send(principal), await send(principal)];
    for (const res of sent) expect(res.status, JSON.stringify(res.body)).toBe(201);
    // Sent is not completed: only completions use up the included envelopes.
    expect((await send(principal)).status).toBe(201);
    await complete(sent[0]!.body.id, '2026-11-10T10:00:00Z');
    // A completion of the previous period does not count in this one.
    await complete(sent[1]!.body.id, '2026-10-31T23:59:59Z');
    expect((await send(principal)).status).toBe(201);
    await complete(sent[1]!.body.id, '2026-11-11T10:00:00Z');

    const refused = await send(principal);
    expect(refused.status).toBe(402);
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect(refused.body).toMatchObject({
      type: expect.stringContaining('payment-required'),
      status: 402,
      upgradeUrl: UPGRADE,
      detail: expect.stringContaining('used its 2 included envelopes'),
    });
    // A dry run tells the same, and test mode is never counted or blocked.
    expect((await send(principal, {}, '?dry_run=true')).status).toBe(402);
    expect((await send({ ...principal, mode: 'test' })).status).toBe(201);
  });

  it('goes on past the included envelopes once a card is on file (Pay-as-you-go): they are billed as overage', async () => {
    const principal = await workspace();
    for (const res of [await send(principal), await send(principal)]) await complete(res.body.id, '2026-11-12T10:00:00Z');
    expect((await send(principal)).status).toBe(402);
    plans.set(principal.organizationId, payg);
    expect((await send(principal)).status).toBe(201);
  });
});

describe('features not on the plan', () => {
  it('refuses SMS verification on Free with 403 plan-upgrade-required naming the feature, in both modes', async () => {
    const principal = await workspace();
    const withSms = { recipients: [{ ...recipients[0], verification: 'sms', phone: '+14155550100' }, recipients[1]] };
    for (const caller of [principal, { ...principal, mode: 'test' as const }]) {
      const res = await send(caller, withSms);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ type: expect.stringContaining('plan-upgrade-required'), feature: 'sms', upgradeUrl: UPGRADE, detail: expect.stringContaining('SMS verification is not on the Free plan') });
    }
    plans.set(principal.organizationId, payg);
    expect((await send(principal, withSms)).status).toBe(201);
  });
});
