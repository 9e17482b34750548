// The organization's e-mail branding reaches its recipients: the e-mail of a turn, sent through the mail consumer's
// handler to the real SMTP sink, carries the display name (subject, copy, sender), the logo, the custom message and
// the footer, read through kit's branding cache from a fake accounts; with accounts down it goes out unbranded.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal, silentLogger } from '@sigil/kit/testing';
import { createBrandingCache, type OrganizationBranding } from '@sigil/kit/branding';
import type { Principal } from '@sigil/kit/auth';
import type { DomainEvent } from '@sigil/proto/events';
import { linkForVisitorPath } from '@sigil/proto/internal-links';
import { renderEnvelope } from '../src/jobs/render.ts';
import { recordDirectoryEvent } from '../src/mail/directory.ts';
import { createNotifier } from '../src/mail/notify.ts';
import { sampleVersion, startEnvelopesHarness, type EnvelopesHarness } from './helpers.ts';

let h: EnvelopesHarness;
const templateId = newId('tpl');
const unique = () => newId('m').slice(2, 12).toLowerCase();
/** The organizations whose branding was read from the fake accounts. */
const reads: string[] = [];
/** What the fake accounts answers (none: it is down). */
let brand: ((organizationId: string) => OrganizationBranding) | undefined;
const LOGO = 'https://sigil.example.test/v1/public/logos/org_x/0123456789abcdef0123456789abcdef.png';
const acmeLegal = (organizationId: string): OrganizationBranding => ({ organizationId, displayName: 'Acme Legal', customMessage: 'Please sign before <Friday>.', footer: 'Acme Corp · 1 Main St', removePoweredBy: true, logoUrl: LOGO });

interface InboxMessage {
  id: string;
  to: string[];
  subject: string;
  text: string;
  html: string | null;
}

async function inbox(address: string): Promise<InboxMessage> {
  for (let i = 0; i < 200; i++) {
    const mine = ((await (await fetch(`${process.env.SMTP_INBOX_URL}/messages?to=${encodeURIComponent(address)}`)).json()) as InboxMessage[])[0];
    if (mine) return mine;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no e-mail reached ${address}`);
}

beforeAll(async () => {
  const branding = await createBrandingCache({
    ttlMs: 0,
    source: async (organizationId) => {
      reads.push(organizationId);
      if (!brand) throw new Error('connect ECONNREFUSED (accounts is down)');
      return brand(organizationId);
    },
  });
  h = await startEnvelopesHarness('mail_branding', { branding });
}, 60_000);
afterAll(async () => h?.close());

/** Sends an envelope and runs the mail handler on its events. */
async function sendEnvelope(client: string): Promise<Principal> {
  const principal = apiKeyPrincipal({ mode: 'live', permissions: ['envelope:read', 'envelope:send'] });
  h.templates.publish(principal.organizationId, sampleVersion(templateId));
  await h.db.$transaction((tx) => recordDirectoryEvent({ id: newId('evt'), type: 'organization.created', occurredAt: new Date().toISOString(), organizationId: principal.organizationId, data: { name: 'Acme Corp', ownerUserId: newId('usr'), ownerEmail: 'o@example.com' } } as DomainEvent, tx));
  const res = await request(h.app).post('/v1/envelopes').set(await h.auth.headers(principal)).send({
    template: templateId,
    recipients: [{ role: 'client', name: 'Ada Lovelace', email: client }, { role: 'counsel', name: 'Grace Hopper', email: `grace-${unique()}@example.com` }],
    variables: { company: 'Acme' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await renderEnvelope({ db: h.db, store: h.store, templates: h.templates, clock: () => h.clock.now, log: silentLogger() }, res.body.id);
  const notify = createNotifier({ ...h.mail, log: silentLogger() });
  for (const row of await h.db.outboxEvent.findMany({ orderBy: { position: 'asc' } })) {
    const event = row.payload as unknown as DomainEvent;
    if (row.subject.startsWith('sigil.events.') && JSON.stringify(event.data).includes(res.body.id)) await h.db.$transaction((tx) => notify(event, tx));
  }
  return principal;
}

describe('branded envelope e-mails', () => {
  it("carry the organization's display name, logo, custom message and footer, and no Powered-by when removed", async () => {
    const client = `ada-${unique()}@example.com`;
    brand = acmeLegal;
    const sender = await sendEnvelope(client);
    expect(reads).toContain(sender.organizationId);
    const message = await inbox(client);
    expect(message.subject).toBe('Acme Legal asks you to sign “Services agreement”');
    expect(message.text).toContain('Acme Legal sent you “Services agreement” to sign.');
    expect(message.text).toContain('> Please sign before <Friday>.');
    expect(message.text).toContain('Acme Corp · 1 Main St');
    expect(message.text).not.toContain('Powered by Sigil');
    expect(message.html).toContain(`<img src="${LOGO}" alt="Acme Legal"`);
    expect(message.html).toContain('Please sign before &lt;Friday&gt;.');
    const raw = await (await fetch(`${process.env.SMTP_INBOX_URL}/messages/${message.id}/raw`)).text();
    expect(raw).toMatch(/^From: "?Acme Legal"? <no-reply@sigil\.local>\r?$/m);
  });

  it('go out unbranded when accounts cannot be read: the send is never blocked', async () => {
    brand = undefined;
    const client = `ada-${unique()}@example.com`;
    const sender = await sendEnvelope(client);
    expect(reads).toContain(sender.organizationId);
    const message = await inbox(client);
    expect(message.subject).toBe('Acme Corp asks you to sign “Services agreement”');
    expect(message.text).toContain('Powered by Sigil.');
    expect(message.html).not.toContain('<img');
    const rows = await h.db.emailDelivery.findMany({ where: { address: client } });
    expect(rows.map((r) => r.status)).toEqual(['delivered']);
  });

  it("show the link page the organization's display name and logo", async () => {
    brand = acmeLegal;
    const principal = apiKeyPrincipal({ mode: 'live', permissions: ['envelope:read', 'envelope:send'] });
    h.templates.publish(principal.organizationId, sampleVersion(templateId));
    const link = await request(h.app).post('/v1/signing-links').set(await h.auth.headers(principal)).send({ template: templateId, role: 'client', title: 'Onboarding', recipients: [{ role: 'counsel', name: 'Grace Hopper', email: 'grace@example.com' }], variables: { company: 'Acme' } });
    expect(link.status, JSON.stringify(link.body)).toBe(201);
    const signing = await h.auth.headers({ kind: 'service', organizationId: 'platform', actorId: 'signing', mode: 'live', permissions: [] });
    const res = await request(h.app).get(linkForVisitorPath(link.body.id)).set(signing);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ organizationName: 'Acme Legal', logoUrl: LOGO });
    // Accounts down: the answer read before still serves (the cache keeps it for an hour), so the page stays branded.
    brand = undefined;
    expect((await request(h.app).get(linkForVisitorPath(link.body.id)).set(signing)).body).toMatchObject({ organizationName: 'Acme Legal', logoUrl: LOGO });
  });
});
