// Always-on signing links, the visitor's side (`/v1/links/*`), on two app instances over one database: two replicas
// that must share every cap. Envelopes is played by an in-memory LinksClient.
import pg from 'pg';
import request from 'supertest';
import type { Express } from 'express';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '@sigil/kit/errors';
import { newId, randomBase62 } from '@sigil/kit/ids';
import { createTestAuth, freshTestDatabase, silentLogger } from '@sigil/kit/testing';
import type { LinkForVisitor, VisitorEnvelope, VisitorEnvelopeRequest } from '@sigil/proto/internal-links';
import { createS3FileStore } from '@strata/stream/file-store';
import { testFileStoreOptions } from '@strata/stream/testing';
import { createApp } from '../src/app.ts';
import { createDb, type Db } from '../src/db.ts';
import type { LinkCodeSender } from '../src/link-code-mail.ts';
import type { LinksClient } from '../src/links-client.ts';
import { FakeEnvelopes, migrationsDir, Outbox } from './helpers.ts';

/** Envelopes' links in memory: each link, the envelopes created through it, and a refusal to answer instead. */
class FakeLinks implements LinksClient {
  readonly links = new Map<string, LinkForVisitor>();
  readonly created: Array<{ linkId: string; visitor: VisitorEnvelopeRequest }> = [];
  refusal: AppError | undefined;

  add(overrides: Partial<LinkForVisitor> = {}): LinkForVisitor {
    const link: LinkForVisitor = {
      id: newId('lnk'), organizationId: 'org_links', testMode: false, status: 'active', title: 'Client onboarding', organizationName: 'Acme Corp', logoUrl: null,
      fields: [{ id: 'client_signature', type: 'signature', required: true, label: null }], limits: { perEmailPerDay: 3, perIpPerHour: 20, dailyCap: null }, usedToday: 0, ...overrides,
    };
    this.links.set(link.id, link);
    return link;
  }

  async link(linkId: string) {
    return this.links.get(linkId);
  }

  async createEnvelope(linkId: string, visitor: VisitorEnvelopeRequest): Promise<VisitorEnvelope> {
    if (this.refusal) throw this.refusal;
    this.created.push({ linkId, visitor });
    const token = `sgls_${randomBase62(40)}`;
    const envelopeId = newId('env');
    const recipientId = newId('rcp');
    return { envelopeId, recipientId, session: { object: 'signing_session', token, url: `${visitor.publicUrl}/sign#token=${token}`, envelopeId, recipientId, expiresAt: new Date(Date.now() + 300_000).toISOString() } };
  }
}

interface Replica {
  app: Express;
  db: Db;
  pool: pg.Pool;
  codes: LinkCodeSender;
}

let replicas: Replica[];
const links = new FakeLinks();
const outbox = new Outbox();
const clock = { now: new Date() };

beforeAll(async () => {
  const databaseUrl = await freshTestDatabase('sigil_signing_test_links', migrationsDir);
  const auth = await createTestAuth();
  const store = await createS3FileStore(testFileStoreOptions('sigil-attachments-test'));
  replicas = await Promise.all([0, 1].map(async () => {
    const db = createDb(databaseUrl);
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
    const { app, linkCodes } = await createApp({ db, log: silentLogger(), verifyPrincipal: auth.verify, envelopes: new FakeEnvelopes(), clock: () => clock.now, store, mailer: outbox, sms: outbox, links: { client: links, pool } });
    if (!linkCodes) throw new Error('the links are configured: a code sender is expected');
    return { app, db, pool, codes: linkCodes };
  }));
}, 60_000);
afterAll(async () => {
  for (const r of replicas ?? []) {
    await r.pool.end();
    await r.db.$disconnect();
  }
});
beforeEach(() => {
  links.refusal = undefined;
  clock.now = new Date();
});

/** Requests alternate between the two replicas, from a client address behind the gateway. */
let turn = 0;
const replica = () => replicas[turn++ % 2]!.app;
const start = (linkId: string, email: string, address = '203.0.113.7') =>
  request(replica()).post(`/v1/links/${linkId}/start`).set('x-forwarded-for', address).send({ name: 'Ada Lovelace', email });
const verify = (linkId: string, body: Record<string, unknown>) =>
  request(replica()).post(`/v1/links/${linkId}/verify`).set({ 'x-forwarded-proto': 'https', 'x-forwarded-host': 'sign.example.test' }).send(body);
/** The code last mailed to `email`, once the replicas' senders (woken by the start) have sent what is due. */
async function codeSentTo(email: string): Promise<string | undefined> {
  await Promise.all(replicas.map((r) => r.codes.idle()));
  await replicas[0]!.codes.sendDue();
  return /\b(\d{6})\b/.exec(outbox.mails.filter((m) => m.to === email).at(-1)?.message.text ?? '')?.[1];
}
const uniqueEmail = () => `visitor-${randomBase62(8).toLowerCase()}@example.com`;

describe('GET /v1/links/{id}', () => {
  it('shows the title, the sender and the fields to fill; 404 for an unknown link, 409 link-paused for a paused one', async () => {
    const link = links.add();
    const res = await request(replica()).get(`/v1/links/${link.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: link.id, object: 'public_signing_link', name: 'Client onboarding', title: 'Client onboarding', organizationName: 'Acme Corp', logoUrl: null, enabled: true, fields: link.fields });
    expect((await request(replica()).get(`/v1/links/${newId('lnk')}`)).status).toBe(404);
    const paused = await request(replica()).get(`/v1/links/${links.add({ status: 'paused' }).id}`);
    expect(paused.status).toBe(409);
    expect(paused.body.type).toMatch(/link-paused$/);
  });
});

describe('POST /v1/links/{id}/start and /verify', () => {
  it('e-mails a 6-digit code, and the code creates the envelope and answers the signing session', async () => {
    const link = links.add();
    const email = uniqueEmail();
    const started = await start(link.id, email.toUpperCase());
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    expect(started.body).toMatchObject({ object: 'signing_link_challenge', verification: expect.stringMatching(/^lvf_/) });
    expect(Date.parse(started.body.expiresAt) - clock.now.getTime()).toBe(10 * 60_000);
    expect(started.headers['ratelimit-limit']).toBeDefined();
    const code = await codeSentTo(email);
    expect(code).toMatch(/^\d{6}$/);
    const stored = await replicas[0]!.db.linkVerification.findUniqueOrThrow({ where: { id: started.body.verification } });
    expect(stored.codeHash).not.toContain(code);

    const verified = await verify(link.id, { verification: started.body.verification, email, code });
    expect(verified.status, JSON.stringify(verified.body)).toBe(201);
    expect(verified.body).toMatchObject({ object: 'signing_session', envelope: expect.stringMatching(/^env_/), session: { token: expect.stringMatching(/^sgls_/) } });
    expect(verified.body.session.url).toBe(`https://sign.example.test/sign#token=${verified.body.session.token}`);
    expect(links.created.at(-1)).toEqual({ linkId: link.id, visitor: { name: 'Ada Lovelace', email, publicUrl: 'https://sign.example.test' } });

    const again = await verify(link.id, { verification: started.body.verification, email, code });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/already used/);
  });

  it('says how many tries are left after a wrong code, and ends the verification at the fifth', async () => {
    const link = links.add();
    const email = uniqueEmail();
    const { verification } = (await start(link.id, email)).body;
    const right = (await codeSentTo(email))!;
    const wrong = right === '000000' ? '111111' : '000000';
    for (const left of [4, 3, 2, 1]) {
      const res = await verify(link.id, { verification, email, code: wrong });
      expect(res.status).toBe(400);
      expect(res.body.detail).toContain(`${left} ${left === 1 ? 'try' : 'tries'} left`);
      expect(res.body.attemptsLeft).toBe(left);
    }
    const fifth = await verify(link.id, { verification, email, code: wrong });
    expect(fifth.status).toBe(429);
    expect((await verify(link.id, { verification, email, code: right })).status).toBe(429);
    expect(links.created.some((c) => c.visitor.email === email)).toBe(false);
  });

  it('answers an expired code, an unknown verification and a paused link each in its own words', async () => {
    const link = links.add();
    const email = uniqueEmail();
    const { verification } = (await start(link.id, email)).body;
    const code = (await codeSentTo(email))!;
    expect((await verify(link.id, { verification: newId('lvf'), email, code })).status).toBe(404);
    clock.now = new Date(clock.now.getTime() + 10 * 60_000 + 1);
    const expired = await verify(link.id, { verification, email, code });
    expect(expired.status).toBe(400);
    expect(expired.body.detail).toMatch(/expired/);
    const paused = links.add({ status: 'paused' });
    const refused = await start(paused.id, email);
    expect(refused.status).toBe(409);
    expect(refused.body.type).toMatch(/link-paused$/);
  });

  it('keeps the verification usable when envelopes refuses (the link was paused meanwhile)', async () => {
    const link = links.add();
    const email = uniqueEmail();
    const { verification } = (await start(link.id, email)).body;
    const code = (await codeSentTo(email))!;
    links.refusal = new AppError('link-paused', 'This signing link is paused by its owner.');
    const refused = await verify(link.id, { verification, email, code });
    expect(refused.status).toBe(409);
    expect(refused.body.type).toMatch(/link-paused$/);
    links.refusal = undefined;
    expect((await verify(link.id, { verification, email, code })).status).toBe(201);
  });

  it('answers a new and a known address alike', async () => {
    const link = links.add();
    const known = uniqueEmail();
    await start(link.id, known);
    const [again, fresh] = [await start(link.id, known), await start(link.id, uniqueEmail())];
    expect([again.status, fresh.status]).toEqual([202, 202]);
    expect(Object.keys(again.body).sort()).toEqual(Object.keys(fresh.body).sort());
  });
});

describe('the caps, shared by two replicas', () => {
  it('lets one address start a link 3 times a day: the 4th is 429 until the next UTC day', async () => {
    const link = links.add();
    const email = uniqueEmail();
    for (let i = 1; i <= 3; i++) {
      const res = await start(link.id, i === 2 ? email.toUpperCase() : email, `198.51.100.${i}`);
      expect(res.status, `start ${i}`).toBe(202);
      expect(res.headers['ratelimit-remaining']).toBe(String(3 - i));
    }
    const fourth = await start(link.id, email, '198.51.100.4');
    expect(fourth.status).toBe(429);
    expect(fourth.body.type).toMatch(/rate-limited$/);
    const midnight = Date.UTC(clock.now.getUTCFullYear(), clock.now.getUTCMonth(), clock.now.getUTCDate() + 1);
    expect(Number(fourth.headers['retry-after'])).toBe(Math.ceil((midnight - clock.now.getTime()) / 1000));
    expect(fourth.headers['ratelimit-remaining']).toBe('0');
    // Another link, or the next UTC day, counts afresh.
    expect((await start(links.add().id, email, '198.51.100.5')).status).toBe(202);
    clock.now = new Date(midnight + 1000);
    expect((await start(link.id, email, '198.51.100.6')).status).toBe(202);
  });

  it('lets one client address start a link 20 times an hour: the 21st is 429 with Retry-After', async () => {
    const link = links.add();
    for (let i = 1; i <= 20; i++) expect((await start(link.id, uniqueEmail(), '192.0.2.50')).status, `start ${i}`).toBe(202);
    const refused = await start(link.id, uniqueEmail(), '192.0.2.50');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3500);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(3600);
    expect((await start(link.id, uniqueEmail(), '192.0.2.51')).status).toBe(202);
  });

  it('refuses starts once the daily cap of envelopes is reached, and passes on envelopes\' own 429 at verify', async () => {
    const full = links.add({ limits: { perEmailPerDay: 3, perIpPerHour: 20, dailyCap: 2 }, usedToday: 2 });
    const refused = await start(full.id, uniqueEmail(), '192.0.2.60');
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/at most 2 signers a day/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);

    const link = links.add({ limits: { perEmailPerDay: 3, perIpPerHour: 20, dailyCap: 2 }, usedToday: 1 });
    const email = uniqueEmail();
    const { verification } = (await start(link.id, email, '192.0.2.61')).body;
    links.refusal = new AppError('rate-limited', 'This link takes at most 2 signers a day; try again tomorrow (UTC).', { headers: { 'retry-after': '3600' } });
    const capped = await verify(link.id, { verification, email, code: await codeSentTo(email) });
    expect(capped.status).toBe(429);
    expect(capped.headers['retry-after']).toBe('3600');
  });
});
