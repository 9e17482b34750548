// Signing sessions and what the signing service asks of envelopes: exchange, the signer's view and document, first
// view, submit and decline, routing to the next turn and completion. Real Postgres and S3.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { crc32, deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '@sigil/kit/crypto';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal, silentLogger } from '@sigil/kit/testing';
import type { Principal } from '@sigil/kit/auth';
import { EXCHANGE_TOKEN_PATH, certificateDocumentPath, completedDocumentPath, sealedDocumentPath, signerDeclinePath, signerDocumentPath, signerSubmitPath, signerViewPath, signerViewedPath } from '@sigil/proto/internal-envelopes';
import { renderEnvelope } from '../src/jobs/render.ts';
import { sampleVersion, startEnvelopesHarness, type EnvelopesHarness } from './helpers.ts';

let h: EnvelopesHarness;
const org = apiKeyPrincipal({ permissions: ['envelope:read', 'envelope:send', 'envelope:void'] });
const signing: Principal = { kind: 'service', organizationId: org.organizationId, actorId: 'signing', mode: 'test', permissions: [] };
const templateId = newId('tpl');
const work = mkdtempSync(path.join(tmpdir(), 'envelopes-signer-'));

/** A 40 x 16 greyscale PNG with a line across it, as a signature pad would draw (built with node:zlib). */
function drawnPng(): string {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(40, 0);
  header.writeUInt32BE(16, 4);
  header.set([8, 0, 0, 0, 0], 8);
  const rows = Array.from({ length: 16 }, (_, y) => Buffer.concat([Buffer.from([0]), Buffer.alloc(40, y === 8 ? 0 : 255)]));
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.concat(rows))), chunk('IEND', Buffer.alloc(0))]);
  return `data:image/png;base64,${png.toString('base64')}`;
}

async function sentEnvelope(): Promise<{ id: string; client: string; counsel: string }> {
  const res = await request(h.app).post('/v1/envelopes').set(await h.auth.headers(org)).send({
    template: templateId,
    recipients: [{ role: 'client', name: 'Ada Lovelace', email: 'ada@example.com' }, { role: 'counsel', name: 'Grace Hopper', email: 'grace@example.com' }],
    variables: { company: 'Acme' },
  });
  await renderEnvelope({ db: h.db, store: h.store, templates: h.templates, clock: () => new Date(), log: silentLogger() }, res.body.id);
  return { id: res.body.id, client: res.body.recipients[0].id, counsel: res.body.recipients[1].id };
}

const session = async (envelopeId: string, recipient: string) =>
  request(h.app).post(`/v1/envelopes/${envelopeId}/sessions`).set(await h.auth.headers(org)).set('x-forwarded-proto', 'https').set('x-forwarded-host', 'sign.example.com').send({ recipient });
const internal = async (method: 'get' | 'post', url: string, body?: object, principal: Principal = signing) =>
  request(h.app)[method](url).set(await h.auth.headers(principal)).send(body);
const events = async (envelopeId: string) =>
  (await h.db.outboxEvent.findMany({ orderBy: { position: 'asc' } })).filter((e) => JSON.stringify(e.payload).includes(envelopeId)).map((e) => e.payload as { type: string; data: Record<string, unknown> });
const textOf = (pdf: Buffer) => {
  const file = path.join(work, `${newId('pdf')}.pdf`);
  writeFileSync(file, pdf);
  return execFileSync('pdftotext', [file, '-']).toString('utf8');
};
const binary = (res: request.Response, done: (err: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => done(null, Buffer.concat(chunks)));
};

beforeAll(async () => {
  h = await startEnvelopesHarness('signer');
  h.templates.publish(org.organizationId, sampleVersion(templateId, 1, {
    fields: [
      ...sampleVersion(templateId).fields,
      { id: 'client_date', role: 'client', type: 'date', required: false, page: 2, x: 72, y: 660, width: 120, height: 20 },
      { id: 'client_ok', role: 'client', type: 'checkbox', required: true, page: 2, x: 72, y: 700, width: 14, height: 14 },
    ],
  }));
}, 60_000);
afterAll(async () => h?.close());

describe('signing sessions', () => {
  it('mints a single-use sgls_ token with the hosted page url for a recipient whose turn it is', async () => {
    const env = await sentEnvelope();
    const res = await session(env.id, env.client);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ object: 'signing_session', envelopeId: env.id, recipientId: env.client });
    expect(res.body.token).toMatch(/^sgls_[A-Za-z0-9]{40}$/);
    expect(res.body.url).toBe(`https://sign.example.com/sign#token=${res.body.token}`);
    const ttl = new Date(res.body.expiresAt).getTime() - Date.now();
    expect(ttl).toBeGreaterThan(280_000);
    expect(ttl).toBeLessThanOrEqual(300_000);
    expect(await h.db.signingToken.count({ where: { tokenHash: sha256Hex(res.body.token) } })).toBe(1);
  });

  it('is 409 not-recipients-turn before the turn, and 400 for a recipient of another envelope', async () => {
    const env = await sentEnvelope();
    const early = await session(env.id, env.counsel);
    expect(early.status).toBe(409);
    expect(early.body.type).toMatch(/not-recipients-turn$/);
    const other = await sentEnvelope();
    const wrong = await session(env.id, other.client);
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors).toEqual([expect.objectContaining({ pointer: '/body/recipient' })]);
  });

  it('exchanges a token once: of 20 concurrent exchanges exactly one succeeds; a second is 401', async () => {
    const env = await sentEnvelope();
    const token = (await session(env.id, env.client)).body.token as string;
    const answers = await Promise.all(Array.from({ length: 20 }, () => internal('post', EXCHANGE_TOKEN_PATH, { tokenHash: sha256Hex(token) })));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 401)).toHaveLength(19);
    expect(answers.find((r) => r.status === 200)!.body).toMatchObject({ organizationId: org.organizationId, testMode: true, envelopeId: env.id, recipientId: env.client, purpose: 'session' });
    expect((await internal('post', EXCHANGE_TOKEN_PATH, { tokenHash: sha256Hex(token) })).status).toBe(401);
  });

  it('answers the internal endpoints to the signing service only', async () => {
    const env = await sentEnvelope();
    const gateway: Principal = { ...signing, actorId: 'gateway' };
    expect((await internal('get', signerViewPath(env.id, env.client), undefined, gateway)).status).toBe(401);
    expect((await internal('get', signerViewPath(env.id, env.client), undefined, org)).status).toBe(401);
    const otherOrg: Principal = { ...signing, organizationId: newId('org') };
    expect((await internal('get', signerViewPath(env.id, env.client), undefined, otherOrg)).status).toBe(404);
  });
});

describe('signing an envelope', () => {
  it('shows the signer their fields first, records the first view once, and routes to the next recipient on submit', async () => {
    const env = await sentEnvelope();
    const view = (await internal('get', signerViewPath(env.id, env.client))).body;
    expect(view).toMatchObject({ yourTurn: true, recipient: { id: env.client, role: 'client', status: 'sent' }, envelope: { id: env.id, title: 'Services agreement', pageCount: 2 } });
    expect(view.fields.filter((f: { readOnly: boolean }) => !f.readOnly).map((f: { id: string }) => f.id)).toEqual(['client_signature', 'client_date', 'client_ok']);
    expect(view.fields.find((f: { id: string }) => f.id === 'company')).toMatchObject({ readOnly: true, value: 'Acme' });

    expect((await internal('post', signerViewedPath(env.id, env.client), { from: '203.0.113.7', userAgent: 'Firefox' })).status).toBe(204);
    expect((await internal('post', signerViewedPath(env.id, env.client), {})).status).toBe(204);
    expect((await events(env.id)).filter((e) => e.type === 'recipient.viewed')).toHaveLength(1);

    const missing = await internal('post', signerSubmitPath(env.id, env.client), { fields: { client_ok: false, client_date: '2026-02-30', stranger: 'x' } });
    expect(missing.status).toBe(400);
    expect(missing.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/body/consent', '/body/fields/client_date', '/body/fields/client_ok', '/body/fields/client_signature', '/body/fields/stranger']);
    const badDrawn = await internal('post', signerSubmitPath(env.id, env.client), { fields: { client_signature: { kind: 'drawn', image: 'data:image/png;base64,AAAA' }, client_ok: true }, consent: true });
    expect(badDrawn.body.errors).toEqual([expect.objectContaining({ pointer: '/body/fields/client_signature' })]);

    const early = await internal('post', signerSubmitPath(env.id, env.counsel), { fields: {}, consent: true });
    expect(early.status).toBe(409);
    expect(early.body.type).toMatch(/not-recipients-turn$/);

    const signed = await internal('post', signerSubmitPath(env.id, env.client), { fields: { client_signature: { kind: 'typed', text: 'Ada Lovelace' }, client_date: '2026-11-24', client_ok: true }, consent: true, from: '203.0.113.7', userAgent: 'Firefox' });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    expect(signed.body).toEqual({ recipientStatus: 'completed', envelopeStatus: 'sent' });
    const again = await internal('post', signerSubmitPath(env.id, env.client), { fields: {}, consent: true });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/already signed/);

    const envelope = (await request(h.app).get(`/v1/envelopes/${env.id}`).set(await h.auth.headers(org))).body;
    expect(envelope.recipients.map((r: { status: string }) => r.status)).toEqual(['completed', 'sent']);
    expect((await events(env.id)).map((e) => e.type).slice(-2)).toEqual(['recipient.signed', 'recipient.sent']);

    const doc = await request(h.app).get(signerDocumentPath(env.id, env.counsel)).set(await h.auth.headers(signing)).buffer(true).parse(binary);
    expect(textOf(doc.body as Buffer)).toContain('Ada Lovelace');
  });

  it('completes the envelope on the last signature, with the values (a drawn image as its hash) in envelope.completed', async () => {
    const env = await sentEnvelope();
    await internal('post', signerSubmitPath(env.id, env.client), { fields: { client_signature: { kind: 'typed', text: 'Ada' }, client_ok: true }, consent: true });
    const image = drawnPng();
    const done = await internal('post', signerSubmitPath(env.id, env.counsel), { fields: { counsel_signature: { kind: 'drawn', image } }, consent: true });
    expect(done.body).toEqual({ recipientStatus: 'completed', envelopeStatus: 'completed' });
    const envelope = (await request(h.app).get(`/v1/envelopes/${env.id}`).set(await h.auth.headers(org))).body;
    expect(envelope).toMatchObject({ status: 'completed', seal: 'pending', completedAt: expect.any(String) });
    const completed = (await events(env.id)).find((e) => e.type === 'envelope.completed')!;
    const hash = createHash('sha256').update(Buffer.from(image.split(',')[1]!, 'base64')).digest('hex');
    expect(completed.data.values).toEqual({
      variables: { company: 'Acme' },
      recipients: { client: { client_signature: { kind: 'typed', text: 'Ada' }, client_ok: true }, counsel: { counsel_signature: { kind: 'drawn', sha256: hash } } },
    });
    const doc = await request(h.app).get(signerDocumentPath(env.id, env.counsel)).set(await h.auth.headers(signing)).buffer(true).parse(binary);
    expect(doc.status).toBe(200);
  });

  it('a decline ends the envelope and every link of it', async () => {
    const env = await sentEnvelope();
    const token = (await session(env.id, env.client)).body.token as string;
    const declined = await internal('post', signerDeclinePath(env.id, env.client), { reason: 'The price is wrong', from: '203.0.113.7', userAgent: 'Firefox' });
    expect(declined.status).toBe(200);
    expect(declined.body).toEqual({ recipientStatus: 'declined', envelopeStatus: 'declined' });
    expect((await internal('post', EXCHANGE_TOKEN_PATH, { tokenHash: sha256Hex(token) })).status).toBe(401);
    expect((await internal('post', signerDeclinePath(env.id, env.client), {})).status).toBe(409);
    expect((await events(env.id)).map((e) => e.type).slice(-2)).toEqual(['recipient.declined', 'envelope.declined']);
    expect((await events(env.id)).at(-1)!.data).toMatchObject({ recipientId: env.client, reason: 'The price is wrong' });
    expect((await session(env.id, env.counsel)).status).toBe(409);
  });
});

describe('sealing (the evidence service\'s side)', () => {
  const evidence: Principal = { kind: 'service', organizationId: org.organizationId, actorId: 'evidence', mode: 'test', permissions: [] };

  it('hands out the completed document, keeps the sealed one and serves it as version=sealed', async () => {
    const env = await sentEnvelope();
    const early = await request(h.app).get(completedDocumentPath(env.id)).set(await h.auth.headers(evidence));
    expect(early.status).toBe(409);
    await internal('post', signerSubmitPath(env.id, env.client), { fields: { client_signature: { kind: 'typed', text: 'Ada Lovelace' }, client_ok: true }, consent: true });
    await internal('post', signerSubmitPath(env.id, env.counsel), { fields: { counsel_signature: { kind: 'typed', text: 'Grace Hopper' } }, consent: true });
    const completed = await request(h.app).get(completedDocumentPath(env.id)).set(await h.auth.headers(evidence)).buffer(true).parse(binary);
    expect(completed.status).toBe(200);
    const text = textOf(completed.body as Buffer);
    expect(text).toContain('Ada Lovelace');
    expect(text).toContain('Grace Hopper');
    const sealedPdf = Buffer.concat([completed.body as Buffer, Buffer.from('\n% sealed\n')]);
    const certificatePdf = Buffer.concat([completed.body as Buffer, Buffer.from('\n% certificate\n')]);
    expect((await request(h.app).put(certificateDocumentPath(env.id)).set(await h.auth.headers(evidence)).set('content-type', 'application/pdf').send(certificatePdf)).status).toBe(204);
    expect((await request(h.app).get(`/v1/envelopes/${env.id}/document?version=certificate`).set(await h.auth.headers(org))).status).toBe(409);
    const kept = await request(h.app).put(sealedDocumentPath(env.id)).set(await h.auth.headers(evidence)).set('content-type', 'application/pdf').send(sealedPdf);
    expect(kept.status).toBe(204);
    expect((await request(h.app).get(`/v1/envelopes/${env.id}`).set(await h.auth.headers(org))).body.seal).toBe('sealed');
    const served = await request(h.app).get(`/v1/envelopes/${env.id}/document?version=sealed`).set(await h.auth.headers(org)).buffer(true).parse(binary);
    expect(served.status).toBe(200);
    expect((served.body as Buffer).equals(sealedPdf)).toBe(true);
    const certificate = await request(h.app).get(`/v1/envelopes/${env.id}/document?version=certificate`).set(await h.auth.headers(org)).buffer(true).parse(binary);
    expect((certificate.body as Buffer).equals(certificatePdf)).toBe(true);
    expect((await events(env.id)).at(-1)).toMatchObject({ type: 'envelope.sealed', data: { sha256: createHash('sha256').update(sealedPdf).digest('hex') } });
    expect((await request(h.app).put(sealedDocumentPath(env.id)).set(await h.auth.headers(signing)).set('content-type', 'application/pdf').send(Buffer.from('not a pdf'))).status).toBe(400);
  });
});
