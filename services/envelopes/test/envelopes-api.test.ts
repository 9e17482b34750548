// The envelopes API on the service: real Postgres and S3, the templates service played by FakeTemplates.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal, sessionPrincipal, silentLogger } from '@sigil/kit/testing';
import type { Principal } from '@sigil/kit/auth';
import { expireDue } from '../src/jobs/expiry.ts';
import { renderEnvelope } from '../src/jobs/render.ts';
import { sampleVersion, startEnvelopesHarness, type EnvelopesHarness } from './helpers.ts';

let h: EnvelopesHarness;
const org = apiKeyPrincipal({ permissions: ['envelope:read', 'envelope:send', 'envelope:void'] });
const templateId = newId('tpl');
const work = mkdtempSync(path.join(tmpdir(), 'envelopes-api-'));

const recipients = [
  { role: 'client', name: 'Ada Lovelace', email: 'Ada@Example.com' },
  { role: 'counsel', name: 'Charles Babbage', email: 'charles@example.com' },
];
const body = (extra: Record<string, unknown> = {}) => ({ template: templateId, recipients, variables: { company: 'Acme & Co' }, ...extra });

async function post(payload: unknown, principal: Principal = org, query = '', headers: Record<string, string> = {}) {
  return request(h.app).post(`/v1/envelopes${query}`).set(await h.auth.headers(principal)).set(headers).send(payload as object);
}
const get = async (url: string, principal: Principal = org) => request(h.app).get(url).set(await h.auth.headers(principal));
const deps = () => ({ db: h.db, store: h.store, templates: h.templates, clock: () => h.clock.now, log: silentLogger() });
const outbox = async (envelopeId: string) =>
  (await h.db.outboxEvent.findMany({ orderBy: { position: 'asc' } })).filter((e) => JSON.stringify(e.payload).includes(envelopeId)).map((e) => e.subject);
const pdfText = (pdf: Buffer) => {
  const file = path.join(work, `${newId('pdf')}.pdf`);
  writeFileSync(file, pdf);
  return execFileSync('pdftotext', [file, '-']).toString('utf8');
};

beforeAll(async () => {
  h = await startEnvelopesHarness('api');
  h.templates.publish(org.organizationId, sampleVersion(templateId, 1));
  h.templates.publish(org.organizationId, sampleVersion(templateId, 2));
}, 60_000);
afterAll(async () => h?.close());

describe('POST /v1/envelopes', () => {
  it('creates a rendering envelope from the latest version, records the use, and queues the event and the render job', async () => {
    const res = await post(body({ externalId: 'order-1', metadata: { crm: '42' } }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      object: 'envelope', status: 'rendering', seal: 'not_started', testMode: true, template: templateId, templateVersion: 2,
      externalId: 'order-1', metadata: { crm: '42' }, pageCount: 2, renderError: null,
    });
    expect(res.body.id).toMatch(/^env_[A-Za-z0-9]{24}$/);
    expect(res.body.recipients).toEqual([
      expect.objectContaining({ id: expect.stringMatching(/^rcp_/), role: 'client', name: 'Ada Lovelace', email: 'ada@example.com', order: 1, delivery: 'email', verification: 'none', status: 'pending' }),
      expect.objectContaining({ role: 'counsel', order: 2, status: 'pending' }),
    ]);
    const lifetime = new Date(res.body.expiresAt).getTime() - new Date(res.body.createdAt).getTime();
    expect(Math.round(lifetime / 86_400_000)).toBe(30);
    expect(h.templates.uses).toContainEqual({ organizationId: org.organizationId, templateId, usedBy: { kind: 'envelope', id: res.body.id } });
    expect(await outbox(res.body.id)).toEqual(['sigil.events.envelope.created', 'sigil.jobs.envelopes.render']);
  });

  it('takes a named version and a recipient order that overrides the role', async () => {
    const res = await post(body({ version: 1, recipients: [{ ...recipients[0], order: 2 }, { ...recipients[1], order: 2, delivery: 'embedded', verification: 'email' }] }));
    expect(res.status).toBe(201);
    expect(res.body.templateVersion).toBe(1);
    expect(res.body.recipients.map((r: { order: number; delivery: string }) => [r.order, r.delivery])).toEqual([[2, 'email'], [2, 'embedded']]);
  });

  it('answers a dry run with what would be sent, and creates nothing', async () => {
    const before = await h.db.envelope.count();
    const res = await post(body(), org, '?dry_run=true');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      object: 'envelope_dry_run', valid: true, testMode: true, pageCount: 2, templateVersion: 2,
      wouldSend: [{ role: 'client', email: 'ada@example.com', via: 'email' }],
    });
    expect(res.body.recipients.map((r: { firstTurn: boolean }) => r.firstTurn)).toEqual([true, false]);
    expect(await h.db.envelope.count()).toBe(before);
  });

  it.each([
    ['a template that does not exist', { template: newId('tpl') }, '/body/template'],
    ['a version that does not exist', { version: 9 }, '/body/version'],
    ['the draft', { version: 'draft' }, '/body/version'],
    ['a role the version lacks', { recipients: [{ ...recipients[0], role: 'witness' }, recipients[1]] }, '/body/recipients/0/role'],
    ['two recipients for one role', { recipients: [recipients[0], { ...recipients[1], role: 'client' }] }, '/body/recipients/1/role'],
    ['a role with no recipient', { recipients: [recipients[0]] }, '/body/recipients'],
    ['a variable the version does not declare', { variables: { company: 'Acme', colour: 'red' } }, '/body/variables/colour'],
    ['a required variable missing', { variables: { note: 'hi' } }, '/body/variables/company'],
    ['an expiry under an hour', { expiresAt: new Date(Date.now() + 60_000).toISOString() }, '/body/expiresAt'],
    ['an expiry past 365 days', { expiresAt: new Date(Date.now() + 400 * 86_400_000).toISOString() }, '/body/expiresAt'],
    ['sms verification without a phone', { recipients: [{ ...recipients[0], verification: 'sms' }, recipients[1]] }, '/body/recipients/0/phone'],
    ['an unknown delivery', { recipients: [{ ...recipients[0], delivery: 'fax' }, recipients[1]] }, '/body/recipients/0/delivery'],
    ['a malformed e-mail', { recipients: [{ ...recipients[0], email: 'not-an-email' }, recipients[1]] }, '/body/recipients/0/email'],
  ])('refuses %s with a 400 pointing at it', async (_what, extra, pointer) => {
    const res = await post(body(extra));
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
  });

  it('a template of another organization is a 400 on /body/template', async () => {
    const other = apiKeyPrincipal({ permissions: ['envelope:send'] });
    const res = await post(body(), other);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ pointer: '/body/template' })]);
  });

  it("takes the key's mode, and test_mode only from a dashboard session", async () => {
    const live = apiKeyPrincipal({ organizationId: org.organizationId, mode: 'live', permissions: ['envelope:send'] });
    expect((await post(body(), live, '?test_mode=1')).body.testMode).toBe(false);
    const session = sessionPrincipal({ organizationId: org.organizationId });
    expect((await post(body(), session, '?test_mode=true')).body.testMode).toBe(true);
    expect((await post(body(), session)).body.testMode).toBe(false);
  });

  it('deduplicates on externalId under 50 concurrent requests with different idempotency keys and API keys', async () => {
    const keys = Array.from({ length: 50 }, () => apiKeyPrincipal({ organizationId: org.organizationId, permissions: ['envelope:send'] }));
    const answers = await Promise.all(keys.map((key, i) => post(body({ externalId: 'order-dedupe', dedupeOn: 'external_id' }), key, '', { 'idempotency-key': `dedupe-${i}` })));
    const created = answers.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    const duplicates = answers.filter((r) => r.status === 200);
    expect(duplicates).toHaveLength(49);
    for (const r of duplicates) {
      expect(r.headers['x-deduplicated']).toBe('true');
      expect(r.body.id).toBe(created[0]!.body.id);
    }
    expect(await h.db.envelope.count({ where: { externalId: 'order-dedupe' } })).toBe(1);
    // Another mode is another namespace of externalIds.
    const live = apiKeyPrincipal({ organizationId: org.organizationId, mode: 'live', permissions: ['envelope:send'] });
    expect((await post(body({ externalId: 'order-dedupe', dedupeOn: 'external_id' }), live)).status).toBe(201);
  });
});

describe('rendering and sending', () => {
  it('renders the original (variables filled, TEST across pages), then sends the first turn', async () => {
    const created = (await post(body())).body;
    expect((await get(`/v1/envelopes/${created.id}/document`)).status).toBe(409);
    await renderEnvelope(deps(), created.id);
    const sent = (await get(`/v1/envelopes/${created.id}`)).body;
    expect(sent.status).toBe('sent');
    expect(sent.recipients.map((r: { role: string; status: string }) => [r.role, r.status])).toEqual([['client', 'sent'], ['counsel', 'pending']]);
    expect(await outbox(created.id)).toEqual(['sigil.events.envelope.created', 'sigil.jobs.envelopes.render', 'sigil.events.envelope.ready', 'sigil.events.recipient.sent']);
    const doc = await request(h.app).get(`/v1/envelopes/${created.id}/document?version=original`).set(await h.auth.headers(org)).buffer(true).parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
    expect(doc.status).toBe(200);
    expect(doc.headers['content-type']).toBe('application/pdf');
    const text = pdfText(doc.body as Buffer);
    expect(text).toContain('Acme & Co');
    expect(text).toContain('Agreement page 2');
    // The diagonal stamp comes out a letter or two per line: one TEST per page.
    expect(text.replace(/\s+/g, '').split('TEST').length - 1).toBe(2);
    const sealed = await get(`/v1/envelopes/${created.id}/document?version=sealed`);
    expect(sealed.status).toBe(409);
    expect(sealed.body.type).toMatch(/document-not-ready$/);
  });

  it('recipients with tied orders get their turn together', async () => {
    const created = (await post(body({ recipients: recipients.map((r) => ({ ...r, order: 1 })) }))).body;
    await renderEnvelope(deps(), created.id);
    const sent = (await get(`/v1/envelopes/${created.id}`)).body;
    expect(sent.recipients.map((r: { status: string }) => r.status)).toEqual(['sent', 'sent']);
    expect((await outbox(created.id)).filter((s) => s.endsWith('recipient.sent'))).toHaveLength(2);
  });

  it('a failed render leaves a visible error and the envelope rendering; the retry sends it', async () => {
    const created = (await post(body())).body;
    h.templates.failDocuments = 1;
    await expect(renderEnvelope(deps(), created.id)).rejects.toThrow(/unavailable/);
    const failed = (await get(`/v1/envelopes/${created.id}`)).body;
    expect(failed).toMatchObject({ status: 'rendering', renderError: 'templates service unavailable' });
    expect(failed.recipients.every((r: { status: string }) => r.status === 'pending')).toBe(true);
    await renderEnvelope(deps(), created.id);
    expect((await get(`/v1/envelopes/${created.id}`)).body).toMatchObject({ status: 'sent', renderError: null });
  });
});

describe('reading, voiding and expiry', () => {
  it('another mode and another organization see a 404; lists hold only the caller\'s mode, filtered', async () => {
    const created = (await post(body({ externalId: 'findable-77' }))).body;
    const live = apiKeyPrincipal({ organizationId: org.organizationId, mode: 'live', permissions: ['envelope:read'] });
    expect((await get(`/v1/envelopes/${created.id}`, live)).status).toBe(404);
    expect((await get(`/v1/envelopes/${created.id}`, apiKeyPrincipal({ permissions: ['envelope:read'] }))).status).toBe(404);
    expect((await get('/v1/envelopes?limit=100', live)).body.data.every((e: { testMode: boolean }) => !e.testMode)).toBe(true);
    expect((await get('/v1/envelopes?q=findable')).body.data.map((e: { id: string }) => e.id)).toEqual([created.id]);
    expect((await get('/v1/envelopes?q=BABBAGE&limit=100')).body.data.map((e: { id: string }) => e.id)).toContain(created.id);
    expect((await get(`/v1/envelopes?status=voided`)).body.data).toEqual([]);
    expect((await get(`/v1/envelopes?template=${newId('tpl')}`)).body.data).toEqual([]);
    const session = sessionPrincipal({ organizationId: org.organizationId });
    expect((await get(`/v1/envelopes/${created.id}`, session)).status).toBe(200);
    expect((await get('/v1/envelopes?testMode=true&q=findable', session)).body.data).toHaveLength(1);
  });

  it('pages newest first with a cursor', async () => {
    const page1 = (await get('/v1/envelopes?limit=2')).body;
    expect(page1.hasMore).toBe(true);
    const page2 = (await get(`/v1/envelopes?limit=2&cursor=${page1.nextCursor}`)).body;
    const ids = [...page1.data, ...page2.data].map((e: { id: string }) => e.id);
    expect(new Set(ids).size).toBe(4);
    expect(page1.data[0].createdAt >= page2.data[0].createdAt).toBe(true);
  });

  it('voids an envelope in progress once; voiding it again is a 409', async () => {
    const created = (await post(body())).body;
    const voided = await request(h.app).post(`/v1/envelopes/${created.id}/void`).set(await h.auth.headers(org)).send({ reason: 'Wrong price' });
    expect(voided.status).toBe(200);
    expect(voided.body).toMatchObject({ status: 'voided', voidReason: 'Wrong price' });
    expect((await outbox(created.id)).at(-1)).toBe('sigil.events.envelope.voided');
    const again = await request(h.app).post(`/v1/envelopes/${created.id}/void`).set(await h.auth.headers(org)).send({});
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/not in progress \(it is voided\)/);
    // A render that finishes after the void sends nothing.
    await renderEnvelope(deps(), created.id);
    expect((await get(`/v1/envelopes/${created.id}`)).body.status).toBe('voided');
  });

  it('expires envelopes whose expiresAt passed, from the stored due time', async () => {
    const created = (await post(body({ expiresAt: new Date(h.clock.now.getTime() + 2 * 3_600_000).toISOString() }))).body;
    expect(await expireDue(h.db, new Date(h.clock.now.getTime() + 3_600_000))).not.toContain(created.id);
    expect(await expireDue(h.db, new Date(h.clock.now.getTime() + 3 * 3_600_000))).toContain(created.id);
    expect((await get(`/v1/envelopes/${created.id}`)).body.status).toBe('expired');
    expect((await outbox(created.id)).at(-1)).toBe('sigil.events.envelope.expired');
    const voiding = await request(h.app).post(`/v1/envelopes/${created.id}/void`).set(await h.auth.headers(org)).send({});
    expect(voiding.status).toBe(409);
  });

  it('refuses callers without the permission', async () => {
    const reader = apiKeyPrincipal({ organizationId: org.organizationId, permissions: ['envelope:read'] });
    const res = await post(body(), reader);
    expect(res.status).toBe(403);
    expect(res.body.detail).toBe('Missing permission: envelope:send.');
  });
});
