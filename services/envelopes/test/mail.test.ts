// The e-mails of an envelope, from its own events, to the real SMTP sink of the test setup: a turn's link (test mode:
// members only, the rest recorded as suppressed), resend (once a minute, the old link revoked), reminders from stored
// due times, voided and completed.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '@sigil/kit/crypto';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal, silentLogger } from '@sigil/kit/testing';
import type { Principal } from '@sigil/kit/auth';
import type { Mailer } from '@sigil/mail';
import type { DomainEvent } from '@sigil/proto/events';
import { EXCHANGE_TOKEN_PATH, certificateDocumentPath, sealFailurePath, sealedDocumentPath, signerSubmitPath } from '@sigil/proto/internal-envelopes';
import { renderEnvelope } from '../src/jobs/render.ts';
import { recordDirectoryEvent } from '../src/mail/directory.ts';
import { createNotifier } from '../src/mail/notify.ts';
import { remindDue } from '../src/mail/reminders.ts';
import { sampleVersion, startEnvelopesHarness, type EnvelopesHarness } from './helpers.ts';

let h: EnvelopesHarness;
const templateId = newId('tpl');
const handled = new Set<string>();
const unique = () => newId('m').slice(2, 12).toLowerCase();

interface InboxMessage {
  to: string[];
  subject: string;
  text: string;
  attachments: Array<{ filename: string | null; contentType: string; size: number }>;
}

async function inbox(address: string, count = 1): Promise<InboxMessage[]> {
  for (let i = 0; i < 200; i++) {
    const all = (await (await fetch(`${process.env.SMTP_INBOX_URL}/messages`)).json()) as InboxMessage[];
    const mine = all.filter((m) => m.to.includes(address));
    if (mine.length >= count) return mine;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return [];
}

/** Runs the mail consumer's handler on every event of the envelope not handled yet, in order (as JetStream would). */
async function deliverEvents(envelopeId: string): Promise<void> {
  const notify = createNotifier(h.mail);
  const rows = await h.db.outboxEvent.findMany({ orderBy: { position: 'asc' } });
  for (const row of rows) {
    const event = row.payload as unknown as DomainEvent;
    if (!row.subject.startsWith('sigil.events.') || handled.has(event.id) || !JSON.stringify(event.data).includes(envelopeId)) continue;
    handled.add(event.id);
    await h.db.$transaction((tx) => notify(event, tx));
  }
}

async function organization(mode: 'test' | 'live', members: string[]): Promise<Principal> {
  const principal = apiKeyPrincipal({ mode, permissions: ['envelope:read', 'envelope:send', 'envelope:void'] });
  h.templates.publish(principal.organizationId, sampleVersion(templateId));
  const at = new Date().toISOString();
  await h.db.$transaction((tx) => recordDirectoryEvent({ id: newId('evt'), type: 'organization.created', occurredAt: at, organizationId: principal.organizationId, data: { name: 'Acme <Legal>', ownerUserId: newId('usr'), ownerEmail: members[0] ?? 'o@example.com' } } as DomainEvent, tx));
  for (const email of members) {
    await h.db.$transaction((tx) => recordDirectoryEvent({ id: newId('evt'), type: 'member.added', occurredAt: at, organizationId: principal.organizationId, data: { memberId: newId('mem'), userId: newId('usr'), email, role: 'member' } } as DomainEvent, tx));
  }
  return principal;
}

async function sent(principal: Principal, client: string, counsel: string, extra: Record<string, unknown> = {}) {
  const res = await request(h.app).post('/v1/envelopes').set(await h.auth.headers(principal)).send({
    template: templateId,
    recipients: [{ role: 'client', name: 'Ada Lovelace', email: client }, { role: 'counsel', name: 'Grace Hopper', email: counsel }],
    variables: { company: 'Acme' },
    cc: [{ name: 'Legal', email: `legal-${unique()}@example.com` }],
    ...extra,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await renderEnvelope({ db: h.db, store: h.store, templates: h.templates, clock: () => h.clock.now, log: silentLogger() }, res.body.id);
  await deliverEvents(res.body.id);
  return { id: res.body.id as string, client: res.body.recipients[0].id as string, counsel: res.body.recipients[1].id as string, cc: res.body.cc[0].email as string };
}

const linkOf = (message: InboxMessage) => /https:\/\/sign\.example\.test\/sign#token=(sgls_[A-Za-z0-9]+)/.exec(message.text)?.[1];
const exchange = async (token: string, organizationId: string) =>
  request(h.app).post(EXCHANGE_TOKEN_PATH).set(await h.auth.headers({ kind: 'service', organizationId, actorId: 'signing', mode: 'test', permissions: [] })).send({ tokenHash: sha256Hex(token) });

beforeAll(async () => {
  h = await startEnvelopesHarness('mail');
}, 60_000);
afterAll(async () => h?.close());

describe('e-mail', () => {
  it("e-mails the first recipient their link on their turn, in the organization's name; the link signs once", async () => {
    const live = await organization('live', []);
    const client = `ada-${unique()}@example.com`;
    const env = await sent(live, client, `grace-${unique()}@example.com`);
    const [message] = await inbox(client);
    expect(message!.subject).toBe('Acme <Legal> asks you to sign “Services agreement”');
    const token = linkOf(message!);
    expect(token).toMatch(/^sgls_/);
    expect((await exchange(token!, live.organizationId)).status).toBe(200);
    expect((await exchange(token!, live.organizationId)).status).toBe(401);
    const rows = await h.db.emailDelivery.findMany({ where: { envelopeId: env.id } });
    expect(rows.map((r) => [r.address, r.kind, r.status])).toEqual([[client, 'your_turn', 'delivered']]);
  });

  it('in test mode e-mails members only; other addresses are recorded as suppressed', async () => {
    const member = `member-${unique()}@example.com`;
    const test = await organization('test', [member]);
    const stranger = `stranger-${unique()}@example.com`;
    const env = await sent(test, stranger, member, { recipients: [{ role: 'client', name: 'Ada', email: stranger, order: 1 }, { role: 'counsel', name: 'Grace', email: member, order: 1 }] });
    const [toMember] = await inbox(member);
    expect(toMember!.subject).toMatch(/^\[TEST\] /);
    expect(await inbox(stranger, 0)).toEqual([]);
    const rows = await h.db.emailDelivery.findMany({ where: { envelopeId: env.id }, orderBy: { address: 'asc' } });
    expect(rows.map((r) => [r.address, r.status])).toEqual([[member, 'delivered'], [stranger, 'suppressed']]);
    const audit = (await h.db.outboxEvent.findMany({ where: { subject: { startsWith: 'sigil.events.email.' } } })).map((e) => e.payload as { type: string; data: { envelopeId: string; address?: string } }).filter((e) => e.data.envelopeId === env.id);
    expect(audit.map((e) => [e.type, e.data.address]).sort()).toEqual([['email.delivered', member], ['email.suppressed', stranger]]);
  });

  it('resends a fresh link at most once a minute; the old link stops working', async () => {
    const live = await organization('live', []);
    const client = `ada-${unique()}@example.com`;
    const env = await sent(live, client, `grace-${unique()}@example.com`);
    const first = linkOf((await inbox(client))[0]!)!;
    const resend = async () => request(h.app).post(`/v1/envelopes/${env.id}/recipients/${env.client}/resend`).set(await h.auth.headers(live)).send();
    const early = await resend();
    expect(early.status).toBe(429);
    expect(early.headers['retry-after']).toBe('60');
    h.clock.now = new Date(h.clock.now.getTime() + 61_000);
    expect((await resend()).status).toBe(204);
    const resent = await h.db.outboxEvent.findMany({ where: { subject: 'sigil.events.recipient.resent' } });
    expect(resent.some((e) => (e.payload as { data: { recipientId: string } }).data.recipientId === env.client)).toBe(true);
    const links = (await inbox(client, 2)).map(linkOf);
    expect(links).toHaveLength(2);
    const second = links.find((link) => link !== first);
    expect(second).toMatch(/^sgls_/);
    expect((await exchange(first!, live.organizationId)).status).toBe(401);
    expect((await exchange(second!, live.organizationId)).status).toBe(200);
    const counsel = await request(h.app).post(`/v1/envelopes/${env.id}/recipients/${env.counsel}/resend`).set(await h.auth.headers(live)).send();
    expect(counsel.status).toBe(409);
    expect(counsel.body.type).toMatch(/not-recipients-turn$/);
  });

  it('reminds from the stored due times while it is the recipient\'s turn, then stops', async () => {
    const live = await organization('live', []);
    const client = `ada-${unique()}@example.com`;
    const env = await sent(live, client, `grace-${unique()}@example.com`, { reminders: { firstAfterHours: 1, everyHours: 2 } });
    const start = h.clock.now.getTime();
    const row = await h.db.recipient.findUniqueOrThrow({ where: { id: env.client } });
    expect(row.nextReminderAt!.getTime()).toBe(start + 3_600_000);
    expect(await remindDue(h.mail, new Date(start + 3_000_000))).not.toContain(env.client);
    expect(await remindDue(h.mail, new Date(start + 3_600_000))).toContain(env.client);
    const reminders = (await inbox(client, 2)).filter((m) => m.subject.startsWith('Reminder: '));
    expect(reminders).toHaveLength(1);
    expect((await h.db.recipient.findUniqueOrThrow({ where: { id: env.client } })).nextReminderAt!.getTime()).toBe(h.clock.now.getTime() + 2 * 3_600_000);
    const signing: Principal = { kind: 'service', organizationId: live.organizationId, actorId: 'signing', mode: 'live', permissions: [] };
    await request(h.app).post(signerSubmitPath(env.id, env.client)).set(await h.auth.headers(signing)).send({ fields: { client_signature: { kind: 'typed', text: 'Ada' } }, consent: true });
    expect(await remindDue(h.mail, new Date(start + 10 * 3_600_000))).not.toContain(env.client);
  });

  it('commits a link before its e-mail leaves, so it works the moment it is read; a failed send leaves the earlier link working', async () => {
    const live = await organization('live', []);
    const client = `ada-${unique()}@example.com`;
    const env = await sent(live, client, `grace-${unique()}@example.com`, { reminders: { firstAfterHours: 1 } });
    const due = new Date(h.clock.now.getTime() + 3_600_000);
    const first = linkOf((await inbox(client))[0]!)!;
    const linkTokens = () => h.db.signingToken.count({ where: { recipientId: env.client, purpose: 'link' } });

    const failing: Mailer = { ...h.mailer, send: async () => Promise.reject(new Error('SMTP 451 try again later')) };
    await expect(remindDue({ ...h.mail, mailer: failing }, due)).rejects.toThrow(/451/);
    expect(await linkTokens()).toBe(1);
    expect((await h.db.recipient.findUniqueOrThrow({ where: { id: env.client } })).nextReminderAt).toEqual(due);

    // A reader as fast as the mail server: the link is opened, on another connection, while the e-mail is being sent.
    const openedWhileSending: number[] = [];
    const eager: Mailer = {
      ...h.mailer,
      send: async (input) => {
        openedWhileSending.push((await exchange(/token=(sgls_[A-Za-z0-9]+)/.exec(input.message.text)![1]!, live.organizationId)).status);
        return h.mailer.send(input);
      },
    };
    expect(await remindDue({ ...h.mail, mailer: eager }, due)).toContain(env.client);
    expect(openedWhileSending).toEqual([200]);
    expect((await exchange(first, live.organizationId)).status).toBe(401);
  });

  it('tells the recipients reached of a void, and sends everyone and the CC the sealed document and its certificate once sealed', async () => {
    const live = await organization('live', []);
    const client = `ada-${unique()}@example.com`;
    const counsel = `grace-${unique()}@example.com`;
    const voided = await sent(live, client, counsel);
    await request(h.app).post(`/v1/envelopes/${voided.id}/void`).set(await h.auth.headers(live)).send({ reason: 'Wrong <price>' });
    await deliverEvents(voided.id);
    const [cancel] = (await inbox(client, 2)).filter((m) => m.subject.includes('cancelled'));
    expect(cancel!.text).toContain('Reason: Wrong <price>');
    expect(await inbox(counsel, 0)).toEqual([]);

    const done = await sent(live, `ada-${unique()}@example.com`, `grace-${unique()}@example.com`);
    const signing: Principal = { kind: 'service', organizationId: live.organizationId, actorId: 'signing', mode: 'live', permissions: [] };
    await request(h.app).post(signerSubmitPath(done.id, done.client)).set(await h.auth.headers(signing)).send({ fields: { client_signature: { kind: 'typed', text: 'Ada' } }, consent: true });
    await request(h.app).post(signerSubmitPath(done.id, done.counsel)).set(await h.auth.headers(signing)).send({ fields: { counsel_signature: { kind: 'typed', text: 'Grace' } }, consent: true });
    await deliverEvents(done.id);
    // Nothing yet: the completion e-mail waits for the seal.
    expect(await h.db.emailDelivery.count({ where: { envelopeId: done.id, kind: 'completed' } })).toBe(0);
    const evidence: Principal = { ...signing, actorId: 'evidence' };
    const pdf = (text: string) => Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from(text.repeat(200))]);
    await request(h.app).put(certificateDocumentPath(done.id)).set(await h.auth.headers(evidence)).set('content-type', 'application/pdf').send(pdf('certificate'));
    await request(h.app).put(sealedDocumentPath(done.id)).set(await h.auth.headers(evidence)).set('content-type', 'application/pdf').send(pdf('sealed'));
    await deliverEvents(done.id);
    const completed = await h.db.emailDelivery.findMany({ where: { envelopeId: done.id, kind: 'completed' } });
    expect(completed.map((r) => r.address).sort()).toEqual([...(await h.db.recipient.findMany({ where: { envelopeId: done.id } })).map((r) => r.email), done.cc].sort());
    expect(new Set(completed.map((r) => r.attachments))).toEqual(new Set(['sealed']));
    const [toCc] = await inbox(done.cc);
    expect(toCc!.subject).toBe('“Services agreement” is complete');
    expect(toCc!.attachments).toEqual([
      { filename: 'Services agreement (sealed).pdf', contentType: 'application/pdf', size: 9 + 6 * 200 },
      { filename: 'Services agreement (certificate of completion).pdf', contentType: 'application/pdf', size: 9 + 11 * 200 },
    ]);
  });

  it('sends the completed document when sealing fails, then the sealed copies once a later seal succeeds', async () => {
    const live = await organization('live', []);
    const done = await sent(live, `ada-${unique()}@example.com`, `grace-${unique()}@example.com`);
    const signing: Principal = { kind: 'service', organizationId: live.organizationId, actorId: 'signing', mode: 'live', permissions: [] };
    await request(h.app).post(signerSubmitPath(done.id, done.client)).set(await h.auth.headers(signing)).send({ fields: { client_signature: { kind: 'typed', text: 'Ada' } }, consent: true });
    await request(h.app).post(signerSubmitPath(done.id, done.counsel)).set(await h.auth.headers(signing)).send({ fields: { counsel_signature: { kind: 'typed', text: 'Grace' } }, consent: true });
    const evidence: Principal = { ...signing, actorId: 'evidence' };
    const failed = await request(h.app).put(sealFailurePath(done.id)).set(await h.auth.headers(evidence)).send({ reason: 'the signing key is unreadable' });
    expect(failed.status).toBe(204);
    expect((await request(h.app).get(`/v1/envelopes/${done.id}`).set(await h.auth.headers(live))).body).toMatchObject({ seal: 'failed', sealError: 'the signing key is unreadable' });
    await deliverEvents(done.id);
    const [first] = await inbox(done.cc);
    expect(first!.attachments).toEqual([{ filename: 'Services agreement.pdf', contentType: 'application/pdf', size: expect.any(Number) }]);

    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from('x'.repeat(100))]);
    await request(h.app).put(certificateDocumentPath(done.id)).set(await h.auth.headers(evidence)).set('content-type', 'application/pdf').send(pdf);
    await request(h.app).put(sealedDocumentPath(done.id)).set(await h.auth.headers(evidence)).set('content-type', 'application/pdf').send(pdf);
    expect((await request(h.app).get(`/v1/envelopes/${done.id}`).set(await h.auth.headers(live))).body).toMatchObject({ seal: 'sealed', sealError: null });
    await deliverEvents(done.id);
    const messages = await inbox(done.cc, 2);
    expect(messages.map((m) => m.attachments.length).sort()).toEqual([1, 2]);
  });
});
