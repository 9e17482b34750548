// Viewers: added at creation or later (plan gates from a fake entitlements source), e-mailed a status link by the mail
// consumer (the real SMTP sink), revoked; and the internal endpoints signing calls (exchange, resolve, the read-only
// view without anyone's address, the first open, the document).
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEntitlementsCache, type OrganizationEntitlements } from '@sigil/kit/entitlements';
import { sha256Hex } from '@sigil/kit/crypto';
import { newId, randomBase62 } from '@sigil/kit/ids';
import { apiKeyPrincipal, silentLogger } from '@sigil/kit/testing';
import type { Principal } from '@sigil/kit/auth';
import type { Mailer } from '@sigil/mail';
import type { DomainEvent } from '@sigil/proto/events';
import { VIEWER_EXCHANGE_PATH, VIEWER_RESOLVE_PATH, viewerDocumentPath, viewerEnvelopePath, viewerOpenedPath } from '@sigil/proto/internal-viewers';
import { renderEnvelope } from '../src/jobs/render.ts';
import { createNotifier } from '../src/mail/notify.ts';
import { sampleVersion, startEnvelopesHarness, type EnvelopesHarness } from './helpers.ts';

const UPGRADE = 'https://app.example.test/app/settings/billing';
const FEATURES = { api: true, webhooks: true, embeddedSigning: true, testMode: true, ssoConnections: 0, enforcedSso: false, scim: false, branding: false, signingLinks: false, sms: false, viewersPerEnvelope: 1, viewerDocumentAccess: false, auditLogExport: false, euDataResidency: false, whiteLabel: false, subAccounts: false };
const free = (organizationId: string): OrganizationEntitlements => ({ organizationId, plan: 'free', planName: 'Free', includedEnvelopes: 100, overageAllowed: false, features: FEATURES, periodStart: '2026-11-01T00:00:00.000Z', periodEnd: '2026-12-01T00:00:00.000Z', upgradeUrl: UPGRADE });
const business = (organizationId: string): OrganizationEntitlements => ({ ...free(organizationId), plan: 'business', planName: 'Business', overageAllowed: true, features: { ...FEATURES, viewersPerEnvelope: null, viewerDocumentAccess: true } });

let h: EnvelopesHarness;
const plans = new Map<string, (organizationId: string) => OrganizationEntitlements>();
const templateId = newId('tpl');
const handled = new Set<string>();
const recipients = [
  { role: 'client', name: 'Ada Lovelace', email: 'ada@example.com' },
  { role: 'counsel', name: 'Charles Babbage', email: 'charles@example.com' },
];

beforeAll(async () => {
  const entitlements = await createEntitlementsCache({ source: async (id) => (plans.get(id) ?? free)(id), ttlMs: 0 });
  h = await startEnvelopesHarness('viewers', { entitlements });
}, 60_000);
afterAll(async () => h?.close());

async function workspace(plan = free): Promise<Principal> {
  const principal = apiKeyPrincipal({ mode: 'live', permissions: ['envelope:read', 'envelope:send', 'envelope:void'] });
  plans.set(principal.organizationId, plan);
  h.templates.publish(principal.organizationId, sampleVersion(templateId, 1));
  return principal;
}
const send = async (principal: Principal, viewers: unknown[]) =>
  request(h.app).post('/v1/envelopes').set(await h.auth.headers(principal)).send({ template: templateId, recipients, variables: { company: 'Acme' }, viewers });
const addViewers = async (principal: Principal, envelopeId: string, viewers: unknown[]) =>
  request(h.app).post(`/v1/envelopes/${envelopeId}/viewers`).set(await h.auth.headers(principal)).send({ viewers });
const revoke = async (principal: Principal, envelopeId: string, viewerId: string) =>
  request(h.app).delete(`/v1/envelopes/${envelopeId}/viewers/${viewerId}`).set(await h.auth.headers(principal));
const signing = (principal: Principal): Principal => ({ kind: 'service', organizationId: principal.organizationId, actorId: 'signing', mode: 'live', permissions: [] });
const events = async (envelopeId: string, type: string) =>
  (await h.db.outboxEvent.findMany({ orderBy: { position: 'asc' } })).map((row) => row.payload as unknown as DomainEvent).filter((e) => e.type === type && (e.data as { envelopeId?: string }).envelopeId === envelopeId);

/** Runs the mail consumer's handler on the envelope's events not handled yet, in order (as JetStream would). */
async function deliverEvents(envelopeId: string): Promise<void> {
  const notify = createNotifier(h.mail);
  for (const row of await h.db.outboxEvent.findMany({ orderBy: { position: 'asc' } })) {
    const event = row.payload as unknown as DomainEvent;
    if (!row.subject.startsWith('sigil.events.') || handled.has(event.id) || (event.data as { envelopeId?: string }).envelopeId !== envelopeId) continue;
    handled.add(event.id);
    await h.db.$transaction((tx) => notify(event, tx));
  }
}

/** The status link e-mailed to an address (the SMTP sink of the test run). */
async function viewerLink(address: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const all = (await (await fetch(`${process.env.SMTP_INBOX_URL}/messages`)).json()) as Array<{ to: string[]; text: string; html: string; subject: string }>;
    const link = all.filter((m) => m.to.includes(address)).map((m) => /(https?:\/\/\S+\/view#token=sglv_[A-Za-z0-9]{40})/.exec(m.text)?.[1]).find(Boolean);
    if (link) return link;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no viewer link for ${address}`);
}

describe('viewers through the API', () => {
  it('records viewers at creation, answers them on the envelope, and announces each (viewer.added)', async () => {
    const principal = await workspace();
    const created = await send(principal, [{ email: 'Board@Example.com', name: 'The board' }]);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.viewers).toEqual([{ id: expect.stringMatching(/^vwr_/), object: 'viewer', email: 'board@example.com', name: 'The board', documentAccess: false, createdAt: expect.any(String), firstOpenedAt: null, revokedAt: null }]);
    const read = await request(h.app).get(`/v1/envelopes/${created.body.id}`).set(await h.auth.headers(principal));
    expect(read.body.viewers).toEqual(created.body.viewers);
    expect((await events(created.body.id, 'viewer.added')).map((e) => e.data)).toEqual([
      { envelopeId: created.body.id, testMode: false, viewerId: created.body.viewers[0].id, email: 'board@example.com', name: 'The board', documentAccess: false, actor: { kind: 'api_key', id: principal.actorId } },
    ]);
  });

  it('refuses more viewers than the plan allows and document access without the feature (403), at creation and on add', async () => {
    const principal = await workspace();
    const two = await send(principal, [{ email: 'a@example.com' }, { email: 'b@example.com' }]);
    expect(two.status).toBe(403);
    expect(two.body).toMatchObject({ type: expect.stringMatching(/plan-upgrade-required$/), detail: 'Your Free plan allows 1 viewer per envelope.', feature: 'viewersPerEnvelope', upgradeUrl: UPGRADE });
    const access = await send(principal, [{ email: 'a@example.com', documentAccess: true }]);
    expect(access.status).toBe(403);
    expect(access.body).toMatchObject({ feature: 'viewerDocumentAccess' });
    // CC recipients are not viewers.
    const created = await request(h.app).post('/v1/envelopes').set(await h.auth.headers(principal)).send({ template: templateId, recipients, variables: { company: 'Acme' }, cc: [{ email: 'cc1@example.com' }, { email: 'cc2@example.com' }], viewers: [{ email: 'a@example.com' }] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const second = await addViewers(principal, created.body.id, [{ email: 'b@example.com' }]);
    expect(second.status).toBe(403);
    expect(second.body).toMatchObject({ feature: 'viewersPerEnvelope' });
    expect((await addViewers(principal, created.body.id, [{ email: 'b@example.com', documentAccess: true }])).status).toBe(403);
    // A revoked viewer leaves its place.
    expect((await revoke(principal, created.body.id, created.body.viewers[0].id)).status).toBe(204);
    const replaced = await addViewers(principal, created.body.id, [{ email: 'b@example.com' }]);
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(201);
    // No envelope was made by the refused creations.
    expect(await h.db.envelope.count({ where: { organizationId: principal.organizationId } })).toBe(1);
  });

  it('adds viewers while in progress (201 list), refuses an address twice (400) and a finished envelope (409); revokes (204, viewer.revoked, once)', async () => {
    const principal = await workspace(business);
    const created = await send(principal, []);
    const added = await addViewers(principal, created.body.id, [{ email: 'x@example.com', documentAccess: true }, { email: 'y@example.com', name: 'Y' }]);
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect(added.body).toMatchObject({ object: 'list', hasMore: false, nextCursor: null, data: [{ email: 'x@example.com', documentAccess: true }, { email: 'y@example.com', name: 'Y', documentAccess: false }] });
    const twice = await addViewers(principal, created.body.id, [{ email: 'X@example.com' }]);
    expect(twice.status).toBe(400);
    expect(twice.body.errors).toEqual([{ pointer: '/body/viewers/0/email', detail: 'is already a viewer of this envelope' }]);
    expect((await revoke(principal, created.body.id, newId('vwr'))).status).toBe(404);
    const viewerId = added.body.data[0].id as string;
    expect((await revoke(principal, created.body.id, viewerId)).status).toBe(204);
    expect((await revoke(principal, created.body.id, viewerId)).status).toBe(204);
    expect((await events(created.body.id, 'viewer.revoked')).map((e) => e.data)).toEqual([{ envelopeId: created.body.id, testMode: false, viewerId, email: 'x@example.com', actor: { kind: 'api_key', id: principal.actorId } }]);
    const read = await request(h.app).get(`/v1/envelopes/${created.body.id}`).set(await h.auth.headers(principal));
    expect(read.body.viewers.find((v: { id: string }) => v.id === viewerId).revokedAt).toEqual(expect.any(String));
    // Another organization's envelope is a 404.
    expect((await addViewers(await workspace(business), created.body.id, [{ email: 'z@example.com' }])).status).toBe(404);
    await request(h.app).post(`/v1/envelopes/${created.body.id}/void`).set(await h.auth.headers(principal)).send({});
    const late = await addViewers(principal, created.body.id, [{ email: 'z@example.com' }]);
    expect(late.status).toBe(409);
    expect(late.body.detail).toContain('voided');
  });
});

describe('the viewer e-mail and the internal endpoints', () => {
  const internal = async (principal: Principal, method: 'get' | 'post', path: string, body?: object) => {
    const req = request(h.app)[method](path).set(await h.auth.headers(signing(principal)));
    return body ? req.send(body) : req;
  };

  it('e-mails a status link once; the link exchanges (repeatedly) until the viewer is revoked; the view names no address', async () => {
    const principal = await workspace(business);
    const address = `viewer-${randomBase62(8).toLowerCase()}@example.com`;
    const created = await send(principal, [{ email: address, name: 'Vera <b>', documentAccess: true }]);
    const envelopeId = created.body.id as string;
    const viewerId = created.body.viewers[0].id as string;
    await deliverEvents(envelopeId);
    await deliverEvents(envelopeId);
    const link = await viewerLink(address);
    expect(link.startsWith(`${h.mail.publicUrl}/view#token=sglv_`)).toBe(true);
    expect(await h.db.emailDelivery.findMany({ where: { envelopeId, kind: 'viewer_link' }, select: { address: true, status: true } })).toEqual([{ address, status: 'delivered' }]);
    const linkHash = sha256Hex(link.split('#token=')[1]!);
    expect((await h.db.envelopeViewer.findUniqueOrThrow({ where: { id: viewerId } })).linkTokenHash).toBe(linkHash);

    const accessHash = sha256Hex(`sglva_${randomBase62(40)}`);
    const exchanged = await internal(principal, 'post', VIEWER_EXCHANGE_PATH, { linkTokenHash: linkHash, accessTokenHash: accessHash });
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
    expect(exchanged.body).toEqual({ organizationId: principal.organizationId, testMode: false, envelopeId, viewerId, documentAccess: true, expiresAt: new Date(h.clock.now.getTime() + 3600_000).toISOString() });
    expect((await internal(principal, 'post', VIEWER_EXCHANGE_PATH, { linkTokenHash: linkHash, accessTokenHash: sha256Hex('another') })).status).toBe(200);
    expect((await internal(principal, 'post', VIEWER_RESOLVE_PATH, { accessTokenHash: accessHash })).body).toMatchObject({ envelopeId, viewerId });

    const view = await internal(principal, 'get', viewerEnvelopePath(envelopeId, viewerId));
    expect(view.status, JSON.stringify(view.body)).toBe(200);
    expect(view.body).toMatchObject({ object: 'viewer_envelope', id: envelopeId, status: 'rendering', title: 'Services agreement', documentAvailable: false, recipients: [{ role: 'client', name: 'Ada Lovelace', status: 'pending', signedAt: null }, { role: 'counsel', name: 'Charles Babbage', status: 'pending', signedAt: null }] });
    expect(JSON.stringify(view.body)).not.toContain('@');
    // Before the render there is no document; after it, the original (the sender let this viewer see it).
    expect((await internal(principal, 'get', viewerDocumentPath(envelopeId, viewerId))).status).toBe(409);
    await renderEnvelope({ db: h.db, store: h.store, templates: h.templates, clock: () => h.clock.now, log: silentLogger() }, envelopeId);
    const pdf = await internal(principal, 'get', viewerDocumentPath(envelopeId, viewerId));
    expect(pdf.status).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');

    for (let i = 0; i < 2; i++) expect((await internal(principal, 'post', viewerOpenedPath(envelopeId, viewerId))).status).toBe(204);
    expect((await events(envelopeId, 'viewer.opened')).map((e) => e.data)).toEqual([{ envelopeId, testMode: false, viewerId, email: address, actor: { kind: 'viewer', id: viewerId } }]);
    expect((await h.db.envelopeViewer.findUniqueOrThrow({ where: { id: viewerId } })).firstOpenedAt).not.toBeNull();

    expect((await revoke(principal, envelopeId, viewerId)).status).toBe(204);
    expect((await internal(principal, 'post', VIEWER_RESOLVE_PATH, { accessTokenHash: accessHash })).status).toBe(401);
    expect((await internal(principal, 'post', VIEWER_EXCHANGE_PATH, { linkTokenHash: linkHash, accessTokenHash: sha256Hex('third') })).status).toBe(401);
    expect((await internal(principal, 'get', viewerEnvelopePath(envelopeId, viewerId))).status).toBe(401);
  });

  it('commits a status link before its e-mail leaves, so it works the moment it is read; a failed send takes it back', async () => {
    const principal = await workspace(business);
    const created = await send(principal, [{ email: `viewer-${randomBase62(8).toLowerCase()}@example.com` }]);
    const [added] = await events(created.body.id, 'viewer.added');
    handled.add(added!.id);
    const viewerId = created.body.viewers[0].id as string;
    const handle = (mailer: Mailer) => h.db.$transaction((tx) => createNotifier({ ...h.mail, mailer })(added!, tx));

    await expect(handle({ ...h.mailer, send: async () => Promise.reject(new Error('SMTP 451 try again later')) })).rejects.toThrow(/451/);
    expect((await h.db.envelopeViewer.findUniqueOrThrow({ where: { id: viewerId } })).linkTokenHash).toBeNull();

    // A reader as fast as the mail server: the link is opened, on another connection, while the e-mail is being sent.
    const openedWhileSending: number[] = [];
    await handle({
      ...h.mailer,
      send: async (input) => {
        const token = /view#token=(sglv_[A-Za-z0-9]{40})/.exec(input.message.text)![1]!;
        openedWhileSending.push((await internal(principal, 'post', VIEWER_EXCHANGE_PATH, { linkTokenHash: sha256Hex(token), accessTokenHash: sha256Hex(`sglva_${randomBase62(40)}`) })).status);
        return h.mailer.send(input);
      },
    });
    expect(openedWhileSending).toEqual([200]);
  });

  it('answers 403 for the document of a viewer without access, and stops viewers 30 days after the envelope ended', async () => {
    const principal = await workspace();
    const created = await send(principal, [{ email: 'nodoc@example.com' }]);
    const envelopeId = created.body.id as string;
    const viewerId = created.body.viewers[0].id as string;
    await renderEnvelope({ db: h.db, store: h.store, templates: h.templates, clock: () => h.clock.now, log: silentLogger() }, envelopeId);
    const refused = await internal(principal, 'get', viewerDocumentPath(envelopeId, viewerId));
    expect(refused.status).toBe(403);
    expect((await internal(principal, 'get', viewerEnvelopePath(envelopeId, viewerId))).body.documentAvailable).toBe(false);
    // Another organization's principal does not find it.
    expect((await internal(await workspace(), 'get', viewerEnvelopePath(envelopeId, viewerId))).status).toBe(404);

    const day = 86_400_000;
    await h.db.envelope.update({ where: { id: envelopeId }, data: { status: 'voided', endedAt: new Date(h.clock.now.getTime() - 29 * day) } });
    expect((await internal(principal, 'get', viewerEnvelopePath(envelopeId, viewerId))).status).toBe(200);
    await h.db.envelope.update({ where: { id: envelopeId }, data: { endedAt: new Date(h.clock.now.getTime() - 31 * day) } });
    expect((await internal(principal, 'get', viewerEnvelopePath(envelopeId, viewerId))).status).toBe(401);
    // Only signing may call.
    const other = await request(h.app).get(viewerEnvelopePath(envelopeId, viewerId)).set(await h.auth.headers({ ...signing(principal), actorId: 'webhooks' }));
    expect(other.status).toBe(401);
  });
});
