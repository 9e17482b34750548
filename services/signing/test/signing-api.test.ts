// /v1/signing/*: the exchange, the signer's bearer tokens, and what each operation asks of envelopes (a fake here; the
// e2e suite runs the real one through the gateway).
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newId, randomBase62 } from '@sigil/kit/ids';
import { startSigningHarness, type SigningHarness } from './helpers.ts';

let h: SigningHarness;
const organizationId = newId('org');
const envelopeId = newId('env');
const recipientId = newId('rcp');

function session(expiresInMs = 86_400_000): string {
  const token = `sgls_${randomBase62(40)}`;
  h.envelopes.addSession(token, { organizationId, testMode: true, envelopeId, recipientId, purpose: 'session', envelopeExpiresAt: new Date(h.clock.now.getTime() + expiresInMs).toISOString() });
  return token;
}
const exchange = (token: string) => request(h.app).post('/v1/signing/exchange').send({ token });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  h = await startSigningHarness('api');
});
beforeEach(() => {
  h.envelopes.status = 'sent';
  h.envelopes.verification = 'none';
  h.envelopes.yourTurn = true;
  h.envelopes.calls.length = 0;
});
afterAll(async () => h?.close());

describe('POST /v1/signing/exchange', () => {
  it('trades a session token for an access token once; the second exchange is 401', async () => {
    const token = session();
    const first = await exchange(token);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ object: 'signing_access_token', envelopeId, recipientId });
    expect(first.body.accessToken).toMatch(/^sgla_[A-Za-z0-9]{40}$/);
    const lifetime = new Date(first.body.expiresAt).getTime() - h.clock.now.getTime();
    expect(lifetime).toBe(1800 * 1000);
    const second = await exchange(token);
    expect(second.status).toBe(401);
    expect(second.headers['content-type']).toMatch(/problem\+json/);
  });

  it('never grants beyond the envelope expiry, and refuses a malformed token with a 400', async () => {
    const short = await exchange(session(60_000));
    expect(new Date(short.body.expiresAt).getTime() - h.clock.now.getTime()).toBe(60_000);
    expect((await exchange('not-a-token')).status).toBe(400);
  });
});

describe('the signer operations', () => {
  it('load the signer view (recording the first view), the document, and submit', async () => {
    const access = (await exchange(session())).body.accessToken as string;
    const view = await request(h.app).get('/v1/signing/session').set(bearer(access)).set('user-agent', 'Firefox/140');
    expect(view.status, JSON.stringify(view.body)).toBe(200);
    expect(view.body).toMatchObject({ object: 'signer_view', envelopeId, recipientId, testMode: true, yourTurn: true, recipient: { status: 'viewed' }, verification: { required: false, verified: false } });
    expect(h.envelopes.calls.filter((c) => c.call === 'viewed')).toEqual([expect.objectContaining({ body: expect.objectContaining({ userAgent: 'Firefox/140' }) })]);
    await request(h.app).get('/v1/signing/session').set(bearer(access));
    expect(h.envelopes.calls.filter((c) => c.call === 'viewed')).toHaveLength(1);

    const doc = await request(h.app).get('/v1/signing/document').set(bearer(access));
    expect(doc.status).toBe(200);
    expect(doc.headers['content-type']).toBe('application/pdf');

    const submitted = await request(h.app).post('/v1/signing/submit').set(bearer(access)).send({ fields: { sig: { kind: 'typed', text: 'Ada' } }, consent: true });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    expect(submitted.body).toEqual({ object: 'signing_result', envelopeId, recipientId, status: 'completed', envelopeStatus: 'completed', redirectUrl: null });
    expect(h.envelopes.calls.find((c) => c.call === 'submit')!.body).toMatchObject({ fields: { sig: { kind: 'typed', text: 'Ada' } }, consent: true });
    const again = await request(h.app).post('/v1/signing/submit').set(bearer(access)).send({ fields: {}, consent: true });
    expect(again.status).toBe(409);
  });

  it('refuses submit without consent (400 /body/consent) and before verification (403 verification-required)', async () => {
    h.envelopes.phone = null;
    const access = (await exchange(session())).body.accessToken as string;
    const noConsent = await request(h.app).post('/v1/signing/submit').set(bearer(access)).send({ fields: {} });
    expect(noConsent.status).toBe(400);
    expect(noConsent.body.errors.map((e: { pointer: string }) => e.pointer)).toContain('/body/consent');
    h.envelopes.verification = 'email';
    const unverified = await request(h.app).post('/v1/signing/submit').set(bearer(access)).send({ fields: {}, consent: true });
    expect(unverified.status).toBe(403);
    expect(unverified.body.type).toMatch(/verification-required$/);
  });

  it('declines with a reason', async () => {
    const access = (await exchange(session())).body.accessToken as string;
    const res = await request(h.app).post('/v1/signing/decline').set(bearer(access)).send({ reason: '  Wrong name ' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'declined', envelopeStatus: 'declined' });
    expect(h.envelopes.calls.find((c) => c.call === 'decline')!.body).toMatchObject({ reason: 'Wrong name' });
  });

  it('a session token works once as a bearer; a spent, unknown or expired token, an API key or none is 401', async () => {
    const token = session();
    expect((await request(h.app).get('/v1/signing/session').set(bearer(token))).status).toBe(200);
    expect((await request(h.app).get('/v1/signing/session').set(bearer(token))).status).toBe(401);
    expect((await exchange(token)).status).toBe(401);
    expect((await request(h.app).get('/v1/signing/session').set(bearer(`sgla_${randomBase62(40)}`))).status).toBe(401);
    expect((await request(h.app).get('/v1/signing/session').set(bearer(`sgl_test_${randomBase62(32)}`))).status).toBe(401);
    const none = await request(h.app).get('/v1/signing/session');
    expect(none.status).toBe(401);
    expect(none.body.detail).toMatch(/signing token/);
    const access = (await exchange(session())).body.accessToken as string;
    h.clock.now = new Date(h.clock.now.getTime() + 1801 * 1000);
    expect((await request(h.app).get('/v1/signing/session').set(bearer(access))).status).toBe(401);
  });
});

describe('POST /v1/signing/attachments', () => {
  const pdfBytes = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\n%%EOF\n');
  const upload = (access: string, field: string, bytes: Buffer, name = 'passport.pdf', type = 'application/pdf') =>
    request(h.app).post('/v1/signing/attachments').set(bearer(access)).field('field', field).attach('file', bytes, { filename: name, contentType: type });

  it('stores a PDF for an attachment field of the signer, and submit takes its id', async () => {
    const access = (await exchange(session())).body.accessToken as string;
    const res = await upload(access, 'id_scan', pdfBytes);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ object: 'signing_attachment', field: 'id_scan', fileName: 'passport.pdf', contentType: 'application/pdf', size: pdfBytes.length });
    expect(res.body.id).toMatch(/^att_/);
    const row = await h.db.attachment.findUniqueOrThrow({ where: { id: res.body.id } });
    const uploaded = (await h.db.outboxEvent.findMany({ where: { subject: 'sigil.events.attachment.uploaded' } })).map((e) => e.payload as { type: string; data: Record<string, unknown> }).find((e) => e.data.attachmentId === res.body.id);
    expect(uploaded).toMatchObject({ type: 'attachment.uploaded', data: { field: 'id_scan', sha256: row.sha256, size: pdfBytes.length } });
    expect((await h.store.get(row.storageKey)).equals(pdfBytes)).toBe(true);
    const submitted = await request(h.app).post('/v1/signing/submit').set(bearer(access)).send({ fields: { sig: { kind: 'typed', text: 'Ada' }, id_scan: res.body.id }, consent: true });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  });

  it('refuses another recipient\'s upload in submit, with a pointer', async () => {
    const first = (await exchange(session())).body.accessToken as string;
    const uploaded = (await upload(first, 'id_scan', pdfBytes)).body.id as string;
    const otherRecipient = `sgls_${randomBase62(40)}`;
    h.envelopes.addSession(otherRecipient, { organizationId, testMode: true, envelopeId, recipientId: newId('rcp'), purpose: 'session', envelopeExpiresAt: new Date(h.clock.now.getTime() + 86_400_000).toISOString() });
    const other = (await exchange(otherRecipient)).body.accessToken as string;
    const res = await request(h.app).post('/v1/signing/submit').set(bearer(other)).send({ fields: { id_scan: uploaded }, consent: true });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ pointer: '/body/fields/id_scan' })]);
  });

  it('answers each bad upload with its own problem', async () => {
    const access = (await exchange(session())).body.accessToken as string;
    const notAttachment = await upload(access, 'sig', pdfBytes);
    expect(notAttachment.status).toBe(400);
    expect(notAttachment.body.errors).toEqual([expect.objectContaining({ pointer: '/body/field' })]);
    expect((await upload(access, 'counsel_scan', pdfBytes)).status).toBe(400);
    const exe = await upload(access, 'id_scan', Buffer.from('MZ\x90\x00 not a document'), 'run.exe', 'application/pdf');
    expect(exe.status).toBe(415);
    const big = await upload(access, 'id_scan', Buffer.concat([pdfBytes, Buffer.alloc(70 * 1024)]));
    expect(big.status).toBe(413);
    expect(big.body.detail).toMatch(/65536 bytes/);
    const json = await request(h.app).post('/v1/signing/attachments').set(bearer(access)).send({ field: 'id_scan', file: 'x' });
    expect(json.status).toBe(415);
    h.envelopes.yourTurn = false;
    const late = await upload(access, 'id_scan', pdfBytes);
    expect(late.status).toBe(409);
  });
});

describe('one-time codes', () => {
  const otp = (access: string, body: object = {}) => request(h.app).post('/v1/signing/otp').set(bearer(access)).send(body);
  const verify = (access: string, code: string) => request(h.app).post('/v1/signing/otp/verify').set(bearer(access)).send({ code });

  it('sends a 6-digit code by e-mail, verifies it, and then lets the recipient sign', async () => {
    h.envelopes.verification = 'email';
    const access = (await exchange(session())).body.accessToken as string;
    const sent = await otp(access);
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    expect(sent.body).toMatchObject({ object: 'otp_challenge', channel: 'email' });
    const mail = h.outbox.mails.at(-1)!;
    expect(mail.to).toBe('ada@example.com');
    expect(mail.message.subject).toMatch(/^\[TEST\] Your code to sign “NDA”: \d{6}$/);
    const code = h.outbox.lastCode()!;
    const stored = await h.db.otpChallenge.findFirstOrThrow({ orderBy: { createdAt: 'desc' } });
    expect(stored.codeHash).not.toContain(code);
    expect((await request(h.app).post('/v1/signing/submit').set(bearer(access)).send({ fields: {}, consent: true })).status).toBe(403);
    const wrong = await verify(access, code === '000000' ? '111111' : '000000');
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors).toEqual([expect.objectContaining({ pointer: '/body/code' })]);
    expect(wrong.body.detail).toMatch(/4 tries left/);
    const ok = await verify(access, code);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ object: 'otp_verification', verified: true });
    expect((await request(h.app).get('/v1/signing/session').set(bearer(access))).body.verification).toEqual({ required: true, channel: 'email', verified: true });
    const types = (await h.db.outboxEvent.findMany({ where: { subject: { startsWith: 'sigil.events.otp.' } }, orderBy: { position: 'asc' } })).map((e) => e.payload as { type: string; data: { recipientId: string } }).filter((e) => e.data.recipientId === recipientId).map((e) => e.type);
    expect(types.slice(-3)).toEqual(['otp.sent', 'otp.failed', 'otp.verified']);
    expect((await request(h.app).post('/v1/signing/submit').set(bearer(access)).send({ fields: {}, consent: true })).status).toBe(200);
  });

  it('sends by SMS to the recipient\'s phone when they verify by SMS, and refuses the other channel', async () => {
    h.envelopes.verification = 'sms';
    h.envelopes.phone = '+447700900123';
    const access = (await exchange(session())).body.accessToken as string;
    const wrongChannel = await otp(access, { channel: 'email' });
    expect(wrongChannel.status).toBe(400);
    expect(wrongChannel.body.errors).toEqual([expect.objectContaining({ pointer: '/body/channel' })]);
    expect((await otp(access)).status).toBe(202);
    expect(h.outbox.texts.at(-1)).toMatchObject({ to: '+447700900123', text: expect.stringMatching(/^\d{6} is your code to sign "NDA" from Acme/) });
    expect((await verify(access, h.outbox.lastCode()!)).status).toBe(200);
  });

  it('allows 5 codes per 15 minutes per session and 5 attempts per code, then 429 with Retry-After', async () => {
    h.envelopes.verification = 'email';
    const access = (await exchange(session())).body.accessToken as string;
    for (let i = 0; i < 5; i++) expect((await otp(access)).status).toBe(202);
    const sixth = await otp(access);
    expect(sixth.status).toBe(429);
    expect(Number(sixth.headers['retry-after'])).toBeGreaterThan(800);
    const code = h.outbox.lastCode()!;
    const bad = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 4; i++) expect((await verify(access, bad)).status).toBe(400);
    const fifth = await verify(access, bad);
    expect(fifth.status).toBe(429);
    expect(fifth.headers['retry-after']).toBeDefined();
    expect((await verify(access, code)).status).toBe(429);
    h.clock.now = new Date(h.clock.now.getTime() + 15 * 60_000 + 1000);
    expect((await otp(access)).status).toBe(202);
  });

  it('in test mode, e-mails no code to an address outside the organization: recorded as suppressed', async () => {
    h.envelopes.verification = 'email';
    h.envelopes.member = false;
    const access = (await exchange(session())).body.accessToken as string;
    const before = h.outbox.mails.length;
    const res = await otp(access);
    h.envelopes.member = true;
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ channel: 'email', delivered: false });
    expect(h.outbox.mails.length).toBe(before);
    const suppressed = await h.db.outboxEvent.findMany({ where: { subject: 'sigil.events.email.suppressed' } });
    expect(suppressed.map((e) => (e.payload as { data: { kind: string } }).data.kind)).toContain('otp_code');
  });

  it('says so for a recipient who needs no code, and for a code that expired', async () => {
    h.envelopes.verification = 'none';
    const access = (await exchange(session())).body.accessToken as string;
    expect((await otp(access)).status).toBe(409);
    h.envelopes.verification = 'email';
    expect((await otp(access)).status).toBe(202);
    const code = h.outbox.lastCode()!;
    h.clock.now = new Date(h.clock.now.getTime() + 11 * 60_000);
    const late = await verify(access, code);
    expect(late.status).toBe(400);
    expect(late.body.detail).toMatch(/expired/);
  });
});
