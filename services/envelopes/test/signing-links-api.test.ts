// Always-on signing links, the sender's side (`/v1/signing-links`) and what signing asks of them (internal-links).
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@sigil/kit/auth';
import { createEntitlementsCache, type OrganizationEntitlements } from '@sigil/kit/entitlements';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal } from '@sigil/kit/testing';
import { linkForVisitorPath, visitorEnvelopePath } from '@sigil/proto/internal-links';
import { sampleVersion, startEnvelopesHarness, type EnvelopesHarness } from './helpers.ts';

const PERIOD = { periodStart: '2026-01-01T00:00:00.000Z', periodEnd: '2099-01-01T00:00:00.000Z' };
const FEATURES = { api: true, webhooks: true, embeddedSigning: true, testMode: true, ssoConnections: 0, enforcedSso: false, scim: false, branding: false, viewersPerEnvelope: 1, viewerDocumentAccess: false, auditLogExport: false, euDataResidency: false, whiteLabel: false, subAccounts: false, sms: false };
const free = (organizationId: string): OrganizationEntitlements => ({ organizationId, plan: 'free', planName: 'Free', includedEnvelopes: 1, overageAllowed: false, features: { ...FEATURES, signingLinks: false }, ...PERIOD, upgradeUrl: 'https://app.example.test/billing' });
const team = (organizationId: string): OrganizationEntitlements => ({ ...free(organizationId), plan: 'team', planName: 'Team', overageAllowed: true, includedEnvelopes: 50, features: { ...FEATURES, signingLinks: true } });
/** A plan with links and without overage: what Free's 402 rule does to a link's live envelopes. */
const capped = (organizationId: string): OrganizationEntitlements => ({ ...team(organizationId), overageAllowed: false, includedEnvelopes: 1 });

let h: EnvelopesHarness;
const plans = new Map<string, (organizationId: string) => OrganizationEntitlements>();
const templateId = newId('tpl');

beforeAll(async () => {
  const entitlements = await createEntitlementsCache({ source: async (id) => (plans.get(id) ?? free)(id), ttlMs: 0 });
  h = await startEnvelopesHarness('signing_links', { entitlements });
}, 60_000);
afterAll(async () => h?.close());

function workspace(plan = team, mode: 'live' | 'test' = 'live'): Principal {
  const principal = apiKeyPrincipal({ mode, permissions: ['envelope:read', 'envelope:send'] });
  plans.set(principal.organizationId, plan);
  h.templates.publish(principal.organizationId, sampleVersion(templateId, 1));
  return principal;
}
const sameOrg = (principal: Principal, mode: 'live' | 'test') => apiKeyPrincipal({ organizationId: principal.organizationId, mode, permissions: ['envelope:read', 'envelope:send'] });
const linkBody = (extra: Record<string, unknown> = {}) => ({
  template: templateId,
  role: 'client',
  title: 'Client onboarding',
  recipients: [{ role: 'counsel', name: 'Grace Hopper', email: 'grace@example.com' }],
  variables: { company: 'Acme' },
  ...extra,
});
async function createLink(principal: Principal, extra: Record<string, unknown> = {}) {
  return request(h.app).post('/v1/signing-links').set(await h.auth.headers(principal)).send(linkBody(extra));
}
const signing = (organizationId = 'platform'): Principal => ({ kind: 'service', organizationId, actorId: 'signing', mode: 'live', permissions: [] });
const visitor = { name: 'Ada Lovelace', email: 'Ada@Example.com', publicUrl: 'https://sign.example.test' };
async function visit(linkId: string, who = visitor) {
  return request(h.app).post(visitorEnvelopePath(linkId)).set(await h.auth.headers(signing())).send(who);
}

describe('POST /v1/signing-links', () => {
  it('is 403 plan-upgrade-required naming the feature on a plan without links', async () => {
    const res = await createLink(workspace(free));
    expect(res.status).toBe(403);
    expect(res.body.type).toMatch(/plan-upgrade-required$/);
    expect(res.body.feature).toBe('signingLinks');
  });

  it('creates a link in the key\'s mode with the default limits, pins the version and records the template use', async () => {
    const principal = workspace();
    const res = await createLink(principal);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      object: 'signing_link', status: 'active', enabled: true, testMode: false, template: templateId, version: 1, role: 'client', title: 'Client onboarding',
      limits: { perEmailPerDay: 3, perIpPerHour: 20, dailyCap: null }, perEmailPerDay: 3, perIpPerHour: 20, dailyCap: null, usage: { today: 0, total: 0 },
    });
    expect(res.body.id).toMatch(/^lnk_/);
    expect(res.body.url.endsWith(`/l/${res.body.id}`)).toBe(true);
    expect(h.templates.uses).toContainEqual({ organizationId: principal.organizationId, templateId, usedBy: { kind: 'signing_link', id: res.body.id } });
    const events = await h.db.outboxEvent.findMany({ where: { subject: { contains: 'signing_link.created' } } });
    expect(events.some((e) => JSON.stringify(e.payload).includes(res.body.id))).toBe(true);
  });

  it('takes the limits nested or at the top level, and checks them, the role, the other roles and the variables', async () => {
    const principal = workspace();
    expect((await createLink(principal, { limits: { perEmailPerDay: 1, dailyCap: 10 } })).body).toMatchObject({ limits: { perEmailPerDay: 1, perIpPerHour: 20, dailyCap: 10 } });
    expect((await createLink(principal, { perIpPerHour: 5 })).body).toMatchObject({ limits: { perEmailPerDay: 3, perIpPerHour: 5, dailyCap: null } });
    const refusals: Array<[Record<string, unknown>, string]> = [
      [{ limits: { perEmailPerDay: 0 } }, '/body/limits/perEmailPerDay'],
      [{ role: 'witness' }, '/body/role'],
      [{ role: undefined }, '/body/role'],
      [{ recipients: [] }, '/body/recipients'],
      [{ recipients: [{ role: 'client', name: 'X', email: 'x@example.com' }] }, '/body/recipients'],
      [{ variables: {} }, '/body/variables/company'],
      [{ template: newId('tpl') }, '/body/template'],
      [{ version: '7' }, '/body/version'],
    ];
    for (const [extra, pointer] of refusals) {
      const res = await createLink(principal, extra);
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.body.errors.map((e: { pointer: string }) => e.pointer), JSON.stringify(extra)).toContain(pointer);
    }
  });
});

describe('GET, PATCH and DELETE /v1/signing-links', () => {
  it('lists the key\'s mode only, newest first, page by page', async () => {
    const live = workspace();
    const test = sameOrg(live, 'test');
    const ids = [];
    for (let i = 0; i < 3; i++) {
      h.clock.now = new Date(h.clock.now.getTime() + 1000);
      ids.push((await createLink(live, { title: `Link ${i}` })).body.id);
    }
    const testLink = (await createLink(test)).body;
    expect(testLink.testMode).toBe(true);
    const first = await request(h.app).get('/v1/signing-links?limit=2').set(await h.auth.headers(live));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'list', hasMore: true });
    const second = await request(h.app).get(`/v1/signing-links?limit=2&cursor=${first.body.nextCursor}`).set(await h.auth.headers(live));
    expect([...first.body.data, ...second.body.data].map((l: { id: string }) => l.id)).toEqual([...ids].reverse());
    expect(second.body.hasMore).toBe(false);
    const tests = await request(h.app).get('/v1/signing-links').set(await h.auth.headers(test));
    expect(tests.body.data.map((l: { id: string }) => l.id)).toEqual([testLink.id]);
    // Another mode's link is not found.
    expect((await request(h.app).patch(`/v1/signing-links/${testLink.id}`).set(await h.auth.headers(live)).send({ title: 'x' })).status).toBe(404);
  });

  it('changes the title and limits, pauses and resumes; resuming needs the plan', async () => {
    const principal = workspace();
    const link = (await createLink(principal)).body;
    const patch = async (body: Record<string, unknown>) => request(h.app).patch(`/v1/signing-links/${link.id}`).set(await h.auth.headers(principal)).send(body);
    expect((await patch({ title: 'Renamed', limits: { dailyCap: 2 } })).body).toMatchObject({ title: 'Renamed', limits: { perEmailPerDay: 3, perIpPerHour: 20, dailyCap: 2 } });
    expect((await patch({ status: 'paused' })).body).toMatchObject({ status: 'paused', enabled: false, title: 'Renamed' });
    plans.set(principal.organizationId, free);
    const refused = await patch({ enabled: true });
    expect(refused.status).toBe(403);
    expect(refused.body.feature).toBe('signingLinks');
    plans.set(principal.organizationId, team);
    expect((await patch({ enabled: true })).body).toMatchObject({ status: 'active', enabled: true });
    expect((await patch({ limits: { perIpPerHour: 0 } })).status).toBe(400);
  });

  it('deletes a link: it leaves the list and stops answering; its envelopes stay', async () => {
    const principal = workspace();
    const link = (await createLink(principal)).body;
    const created = await visit(link.id);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const headers = await h.auth.headers(principal);
    expect((await request(h.app).delete(`/v1/signing-links/${link.id}`).set(headers)).status).toBe(204);
    expect((await request(h.app).delete(`/v1/signing-links/${link.id}`).set(headers)).status).toBe(404);
    expect((await request(h.app).get('/v1/signing-links').set(headers)).body.data.map((l: { id: string }) => l.id)).not.toContain(link.id);
    expect((await request(h.app).get(linkForVisitorPath(link.id)).set(await h.auth.headers(signing()))).status).toBe(404);
    expect((await visit(link.id)).status).toBe(404);
    expect((await request(h.app).get(`/v1/envelopes/${created.body.envelopeId}`).set(headers)).status).toBe(200);
  });
});

describe('the visitor\'s side (internal-links)', () => {
  it('answers the link as a visitor sees it, and only to the signing service', async () => {
    const principal = workspace(team, 'test');
    const link = (await createLink(principal, { limits: { dailyCap: 5 } })).body;
    const res = await request(h.app).get(linkForVisitorPath(link.id)).set(await h.auth.headers(signing()));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: link.id, organizationId: principal.organizationId, testMode: true, status: 'active', title: 'Client onboarding', organizationName: expect.any(String), logoUrl: null,
      fields: [{ id: 'client_signature', type: 'signature', required: true, label: null }], limits: { perEmailPerDay: 3, perIpPerHour: 20, dailyCap: 5 }, usedToday: 0,
    });
    expect((await request(h.app).get(linkForVisitorPath(link.id)).set(await h.auth.headers(principal))).status).toBe(401);
    expect((await request(h.app).get(linkForVisitorPath(newId('lnk'))).set(await h.auth.headers(signing()))).status).toBe(404);
  });

  it('creates the visitor\'s envelope in the link\'s mode with a signing session, and counts its usage', async () => {
    const principal = workspace(team, 'test');
    const link = (await createLink(principal, { cc: [{ email: 'files@example.com' }] })).body;
    const res = await visit(link.id);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.session).toMatchObject({ object: 'signing_session', envelopeId: res.body.envelopeId, recipientId: res.body.recipientId });
    expect(res.body.session.token).toMatch(/^sgls_/);
    expect(res.body.session.url).toBe(`https://sign.example.test/sign#token=${res.body.session.token}`);
    const envelope = await request(h.app).get(`/v1/envelopes/${res.body.envelopeId}`).set(await h.auth.headers(principal));
    expect(envelope.body).toMatchObject({ testMode: true, metadata: { signingLink: link.id } });
    const recipients = envelope.body.recipients.map((r: { role: string; email: string; delivery: string }) => [r.role, r.email, r.delivery]);
    expect(recipients).toEqual([['client', 'ada@example.com', 'embedded'], ['counsel', 'grace@example.com', 'email']]);
    const listed = await request(h.app).get('/v1/signing-links').set(await h.auth.headers(principal));
    expect(listed.body.data[0]).toMatchObject({ id: link.id, usage: { today: 1, total: 1 } });
    const events = await h.db.outboxEvent.findMany({ where: { subject: { contains: 'signing_link.used' } } });
    expect(events.filter((e) => JSON.stringify(e.payload).includes(res.body.envelopeId))).toHaveLength(1);
  });

  it('holds the daily cap exactly under concurrent visitors, with Retry-After until the next UTC day', async () => {
    const principal = workspace();
    const link = (await createLink(principal, { limits: { dailyCap: 2 } })).body;
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => visit(link.id, { ...visitor, email: `v${i}@example.com` })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 429, 429, 429]);
    const refused = answers.find((a) => a.status === 429)!;
    expect(refused.body.type).toMatch(/rate-limited$/);
    const now = h.clock.now;
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    expect(Number(refused.headers['retry-after'])).toBe(Math.ceil((midnight - now.getTime()) / 1000));
    expect(await h.db.envelope.count({ where: { organizationId: principal.organizationId } })).toBe(2);
  });

  it('is 409 link-paused for a paused link, and 402 when a live link\'s plan has used its envelopes', async () => {
    const principal = workspace(capped);
    const link = (await createLink(principal)).body;
    await request(h.app).patch(`/v1/signing-links/${link.id}`).set(await h.auth.headers(principal)).send({ status: 'paused' });
    const paused = await visit(link.id);
    expect(paused.status).toBe(409);
    expect(paused.body.type).toMatch(/link-paused$/);
    await request(h.app).patch(`/v1/signing-links/${link.id}`).set(await h.auth.headers(principal)).send({ status: 'active' });
    const first = await visit(link.id);
    expect(first.status).toBe(201);
    await h.db.envelope.update({ where: { id: first.body.envelopeId }, data: { status: 'completed', completedAt: new Date() } });
    expect((await visit(link.id)).status).toBe(402);
  });
});
