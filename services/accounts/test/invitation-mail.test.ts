// Invitation e-mails end to end in one process: the invitation's outbox row reaches the bus through the relay, the
// job's consumer e-mails the real SMTP sink of the test setup, and the link in the e-mail accepts the invitation. The
// memory transport stands in for JetStream (same Bus interface).
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryBus, startOutboxRelay, type RunningConsumer } from '@sigil/kit/bus';
import { silentLogger } from '@sigil/kit/testing';
import { createMailer, type Mailer } from '@sigil/mail';
import { sendInvitationMail, startInvitationMailConsumer, type InvitationMailDeps } from '../src/invitation-mail.ts';
import { PASSWORD, createHarness, freshIp, sha256, signUp, uniqueEmail, type Harness, type SignedUp } from './helpers.ts';

interface InboxMessage {
  to: string[];
  subject: string;
  text: string;
  html: string | null;
}

const PUBLIC_URL = 'https://sigil.example.test';
const LINK = /https:\/\/sigil\.example\.test\/app\/accept-invitation\?token=([A-Za-z0-9%_-]+)/;

let h: Harness;
let consumer: RunningConsumer;
let smtp: Mailer;
/** Sends refused by the "server" before the real one is reached (a failing SMTP server). */
let refusals = 0;
let refused = 0;
const bus = createMemoryBus();

beforeAll(async () => {
  h = await createHarness('invitation_mail');
  smtp = createMailer({ url: process.env.SMTP_URL as string, from: 'Sigil <no-reply@sigil.local>' });
  const mailer: Mailer = {
    async send(input) {
      if (refusals > 0) {
        refusals -= 1;
        refused += 1;
        throw new Error('421 Service not available, closing transmission channel');
      }
      return smtp.send(input);
    },
    close: () => smtp.close(),
  };
  consumer = await startInvitationMailConsumer(bus, { ...deps(mailer), log: silentLogger() }, { retryDelaysMs: [20] });
});
afterAll(async () => {
  await consumer?.stop();
  smtp?.close();
  await h?.close();
});

function deps(mailer: Mailer): InvitationMailDeps {
  return { db: h.db, mailer, publicUrl: PUBLIC_URL, clock: () => new Date() };
}

async function invite(owner: SignedUp, email: string, role = 'admin') {
  const res = await request(h.app).post('/v1/organization/invitations').set(owner.headers).send({ email, role });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; token: string };
}

/**
 * Runs what the process runs after a commit: the relay publishes the jobs, the consumer handles them (retries too).
 * The relay runs only here, so a test decides what has happened to an invitation before its job runs.
 */
async function runJobs(): Promise<void> {
  const relay = await startOutboxRelay({ databaseUrl: h.databaseUrl, bus, log: silentLogger() });
  try {
    await relay.drain();
  } finally {
    await relay.stop();
  }
  await consumer.idle(30_000);
}

/** What the SMTP sink received for an address (it stores a message before it answers the send). */
async function inbox(address: string): Promise<InboxMessage[]> {
  return (await (await fetch(`${process.env.SMTP_INBOX_URL}/messages?to=${encodeURIComponent(address)}`)).json()) as InboxMessage[];
}

const accept = (token: string) =>
  request(h.app).post('/v1/auth/accept-invitation').set('x-forwarded-for', freshIp()).send({ token, name: 'Grace Invitee', password: PASSWORD });

describe('invitation e-mails', () => {
  it('e-mails the invitee a link to the dashboard naming the organization and the inviter; its token accepts the invitation', async () => {
    const owner = await signUp(h, { organizationName: 'Acme <Legal>', name: 'Ada Owner' });
    const email = uniqueEmail('invitee');
    const invitation = await invite(owner, email);
    await runJobs();

    const [message, ...more] = await inbox(email);
    expect(more).toEqual([]);
    expect(message?.subject).toBe('Ada Owner invited you to join Acme <Legal> on Sigil');
    expect(message?.text).toContain('Ada Owner invited you to join Acme <Legal> on Sigil as an admin.');
    expect(message?.html).toContain('Acme &lt;Legal&gt;');
    const token = decodeURIComponent(LINK.exec(message?.text ?? '')?.[1] ?? '');
    expect(token, message?.text).not.toBe('');
    expect(token).not.toBe(invitation.token);
    const row = await h.db.invitation.findUniqueOrThrow({ where: { id: invitation.id } });
    expect(row.emailTokenHash).toBe(sha256(token));

    const accepted = await accept(token);
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    expect(accepted.body).toMatchObject({ user: { email }, organization: { id: owner.organizationId }, role: 'admin' });
    const members = await request(h.app).get('/v1/organization/members').set(owner.headers);
    expect(members.body.data.map((m: { user: { email: string } }) => m.user.email)).toContain(email);
    expect((await accept(token)).status).toBe(409);
  });

  it('keeps the invitation through a refusing SMTP server: the e-mail is retried until it goes out, once', async () => {
    const owner = await signUp(h);
    const email = uniqueEmail('retried');
    refused = 0;
    refusals = 2;
    const invitation = await invite(owner, email, 'member');
    await runJobs();

    expect(refused).toBe(2);
    const messages = await inbox(email);
    expect(messages.map((m) => m.subject)).toEqual([`Ada Owner invited you to join Acme on Sigil`]);
    // The token the API returned works as well as the e-mailed one.
    const accepted = await accept(invitation.token);
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    expect(accepted.body.role).toBe('member');
  });

  it('commits the link before its e-mail leaves, so it accepts the moment it is read; a failed send takes it back', async () => {
    const owner = await signUp(h);
    const invitation = await invite(owner, uniqueEmail('eager'), 'member');
    const failing: Mailer = { send: async () => Promise.reject(new Error('421 Service not available')), close: () => undefined };
    await expect(sendInvitationMail(deps(failing), invitation.id)).rejects.toThrow(/421/);
    expect(await h.db.invitation.findUniqueOrThrow({ where: { id: invitation.id } })).toMatchObject({ emailTokenHash: null, emailedAt: null });

    // An invitee as fast as the mail server: the link is used, on another connection, while the e-mail is being sent.
    const acceptedWhileSending: number[] = [];
    const eager: Mailer = {
      async send(input) {
        acceptedWhileSending.push((await accept(decodeURIComponent(LINK.exec(input.message.text)![1]!))).status);
        return smtp.send(input);
      },
      close: () => undefined,
    };
    expect(await sendInvitationMail(deps(eager), invitation.id)).toBe('sent');
    expect(acceptedWhileSending).toEqual([201]);
  });

  it('sends nothing for a revoked invitation, nor again for one already e-mailed', async () => {
    const owner = await signUp(h);
    const revokedEmail = uniqueEmail('revoked');
    const revoked = await invite(owner, revokedEmail);
    expect((await request(h.app).delete(`/v1/organization/invitations/${revoked.id}`).set(owner.headers)).status).toBe(204);
    const emailed = uniqueEmail('emailed');
    const pending = await invite(owner, emailed);
    await runJobs();

    expect(await inbox(revokedEmail)).toEqual([]);
    expect(await inbox(emailed)).toHaveLength(1);
    // A job delivered again (its acknowledgement lost) finds the e-mail sent and sends no other link.
    expect(await sendInvitationMail(deps(smtp), pending.id)).toBe('skipped');
    expect(await inbox(emailed)).toHaveLength(1);
  });
});
