// Organization settings, e-mail branding and its preview through the API: what the plan allows, the 403 naming the
// field beyond it, validation with pointers, the preview of unsaved settings through the real composer, and the
// internal endpoint envelopes and signing read (the branding in effect under today's plan).
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_PERMISSIONS, type Principal } from '@sigil/kit/auth';
import { apiKeyPrincipal } from '@sigil/kit/testing';
import { brandingPath } from '@sigil/proto/internal-branding';
import type { Mailer, Message } from '@sigil/mail';
import { effectiveBranding } from '../src/branding/branding.ts';
import { sendInvitationMail } from '../src/invitation-mail.ts';
import { signUp, uniqueEmail } from './helpers.ts';
import { createBrandingHarness, PUBLIC_URL, type BrandingHarness } from './branding-harness.ts';

let h: BrandingHarness;
beforeAll(async () => {
  h = await createBrandingHarness('branding_api');
});
afterAll(async () => h?.close());

const put = (headers: Record<string, string>, body: object) => request(h.app).put('/v1/organization/email-branding').set(headers).send(body);
const preview = (headers: Record<string, string>, body?: object) => request(h.app).post('/v1/organization/email-branding/preview').set(headers).send(body ?? {});
const service = (organizationId: string, actorId: string): Principal => ({ kind: 'service', organizationId, actorId, mode: 'live', permissions: [] });

describe('organization settings', () => {
  it("answers the plan's features and add-ons", async () => {
    const owner = await signUp(h);
    const free = await request(h.app).get('/v1/organization/settings').set(owner.headers);
    expect(free.status, JSON.stringify(free.body)).toBe(200);
    expect(free.body).toMatchObject({ object: 'organization_settings', plan: 'free', features: { sms: false, branding: false, scim: false, ssoConnections: 0 } });
    h.plans.set(owner.organizationId, 'team');
    const team = await request(h.app).get('/v1/organization/settings').set(owner.headers);
    expect(team.body).toMatchObject({ plan: 'team', features: { sms: true, branding: true, signingLinks: true, whiteLabel: false } });
  });
});

describe('e-mail branding', () => {
  it('starts empty, and says what the plan allows', async () => {
    const owner = await signUp(h);
    const res = await request(h.app).get('/v1/organization/email-branding').set(owner.headers);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'email_branding',
      displayName: null,
      customMessage: null,
      footer: null,
      removePoweredBy: false,
      logoUrl: null,
      allowed: { custom: false, footer: false, removePoweredBy: false },
    });
    h.plans.set(owner.organizationId, 'business');
    expect((await request(h.app).get('/v1/organization/email-branding').set(owner.headers)).body.allowed).toEqual({ custom: true, footer: true, removePoweredBy: false });
    h.whiteLabel.add(owner.organizationId);
    expect((await request(h.app).get('/v1/organization/email-branding').set(owner.headers)).body.allowed).toEqual({ custom: true, footer: true, removePoweredBy: true });
  });

  it('refuses each field beyond the plan with 403 plan-upgrade-required naming it', async () => {
    const owner = await signUp(h);
    const free = await put(owner.headers, { displayName: 'Acme Legal' });
    expect(free.status).toBe(403);
    expect(free.body).toMatchObject({ type: expect.stringContaining('plan-upgrade-required'), detail: 'A custom display name is not on the Free plan. Upgrade to use it.', feature: 'branding', upgradeUrl: expect.any(String) });
    expect(free.body.errors).toEqual([{ pointer: '/body/displayName', detail: 'is not on the Free plan' }]);
    expect((await put(owner.headers, { footer: 'Acme Ltd, 1 Main St' })).body.errors).toEqual([{ pointer: '/body/footer', detail: 'is not on the Free plan' }]);

    h.plans.set(owner.organizationId, 'team');
    const poweredBy = await put(owner.headers, { displayName: 'Acme Legal', removePoweredBy: true });
    expect(poweredBy.status).toBe(403);
    expect(poweredBy.body).toMatchObject({ feature: 'whiteLabel', errors: [{ pointer: '/body/removePoweredBy', detail: 'is not on the Team plan' }] });
    // Nothing of a refused change is saved.
    expect((await request(h.app).get('/v1/organization/email-branding').set(owner.headers)).body.displayName).toBeNull();
    // Clearing is always allowed (a downgraded organization can tidy up).
    expect((await put(owner.headers, { removePoweredBy: false, footer: null })).status).toBe(200);
    expect(h.notified).toContain(owner.organizationId);
  });

  it('saves a partial change (absent fields kept, null clears), trimmed, and checks lengths and plain text with pointers', async () => {
    const owner = await signUp(h);
    h.plans.set(owner.organizationId, 'team');
    const saved = await put(owner.headers, { displayName: '  Acme Legal ', customMessage: 'Please sign by Friday.\r\nThanks!', footer: 'Acme Ltd · 1 Main St' });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body).toMatchObject({ object: 'email_branding', displayName: 'Acme Legal', customMessage: 'Please sign by Friday.\nThanks!', footer: 'Acme Ltd · 1 Main St', removePoweredBy: false, allowed: { custom: true, footer: true, removePoweredBy: false } });
    const partial = await put(owner.headers, { footer: null });
    expect(partial.body).toMatchObject({ displayName: 'Acme Legal', customMessage: 'Please sign by Friday.\nThanks!', footer: null });

    const cases: Array<[object, string, string]> = [
      [{ displayName: 'Acme\nBcc: x@example.com' }, '/body/displayName', 'must be one line of plain text, without control characters'],
      [{ customMessage: 'bell \u0007' }, '/body/customMessage', 'must be plain text, without control characters'],
      [{ footer: 'x'.repeat(2001) }, '/body/footer', 'must NOT have more than 2000 characters'],
      [{ displayName: 42 }, '/body/displayName', 'must be string,null'],
      [{ removePoweredBy: 'yes' }, '/body/removePoweredBy', 'must be boolean'],
      [{ logoUrl: 'https://evil.example/logo.png' }, '/body/logoUrl', 'can only be null (to remove the logo); upload a logo with POST /v1/organization/logo'],
    ];
    for (const [body, pointer, detail] of cases) {
      const res = await put(owner.headers, body);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.errors?.[0]?.pointer, JSON.stringify(res.body)).toBe(pointer);
      expect(res.body.errors[0].detail).toContain(detail.replace(/^must be string,null$/, 'must be'));
    }
  });

  it('needs org:manage: a member cannot read or change it', async () => {
    const owner = await signUp(h);
    const memberKey = await h.auth.headers(apiKeyPrincipal({ organizationId: owner.organizationId, permissions: ROLE_PERMISSIONS.member.slice() }));
    expect((await request(h.app).get('/v1/organization/email-branding').set(memberKey)).status).toBe(403);
    expect((await put(memberKey, { displayName: 'x' })).status).toBe(403);
  });
});

describe('branding preview', () => {
  it('renders a signing request with the saved branding through the e-mails’ composer', async () => {
    const owner = await signUp(h, { organizationName: 'Acme Corp' });
    const plain = await preview(owner.headers);
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    expect(plain.body).toMatchObject({ object: 'email_preview', subject: 'Acme Corp asks you to sign “Sample agreement”' });
    expect(plain.body.text).toContain('Powered by Sigil.');
    expect(plain.body.text).toContain(`Review and sign: ${PUBLIC_URL}/sign#token=sample`);

    h.plans.set(owner.organizationId, 'team');
    await put(owner.headers, { displayName: 'Acme Legal', footer: 'Acme Corp, 1 Main St' });
    const saved = await preview(owner.headers, { template: 'reminder' });
    expect(saved.body.subject).toBe('Reminder: Acme Legal asks you to sign “Sample agreement”');
    expect(saved.body.text).toContain('Acme Corp, 1 Main St');
    expect(saved.body.fromName).toBe('Acme Legal');
  });

  it('renders unsaved settings without saving them, escaped in HTML, with the plan’s limits', async () => {
    const owner = await signUp(h);
    h.plans.set(owner.organizationId, 'business');
    const res = await preview(owner.headers, { branding: { displayName: 'Acme <Legal>', customMessage: 'Sign <b>today</b> & thanks', footer: 'Footer "1"' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.subject).toBe('Acme <Legal> asks you to sign “Sample agreement”');
    expect(res.body.html).toContain('Acme &lt;Legal&gt;');
    expect(res.body.html).toMatch(/<blockquote[^>]*>Sign &lt;b&gt;today&lt;\/b&gt; &amp; thanks<\/blockquote>/);
    expect(res.body.html).not.toContain('<b>');
    expect(res.body.text).toContain('> Sign <b>today</b> & thanks');
    expect(res.body.html).toContain('Footer &quot;1&quot;');
    // Nothing was saved, nor announced.
    expect((await request(h.app).get('/v1/organization/email-branding').set(owner.headers)).body.displayName).toBeNull();
    expect(h.notified).not.toContain(owner.organizationId);

    const refused = await preview(owner.headers, { branding: { removePoweredBy: true } });
    expect(refused.status).toBe(403);
    expect(refused.body.errors).toEqual([{ pointer: '/body/branding/removePoweredBy', detail: 'is not on the Business plan' }]);
    h.whiteLabel.add(owner.organizationId);
    const whiteLabel = await preview(owner.headers, { branding: { removePoweredBy: true }, template: 'completed' });
    expect(whiteLabel.status).toBe(200);
    expect(whiteLabel.body.text).not.toContain('Powered by Sigil');

    const badTemplate = await preview(owner.headers, { template: 'newsletter' });
    expect(badTemplate.status).toBe(400);
    expect(badTemplate.body.errors[0]).toMatchObject({ pointer: '/body/template', detail: expect.stringContaining('signing_request') });
  });
});

describe('the internal branding endpoint', () => {
  it('answers envelopes and signing the branding in effect, limited by today’s plan', async () => {
    const owner = await signUp(h);
    h.plans.set(owner.organizationId, 'team');
    h.whiteLabel.add(owner.organizationId);
    await put(owner.headers, { displayName: 'Acme Legal', customMessage: 'Hello', footer: 'Foot', removePoweredBy: true });
    const path = brandingPath(owner.organizationId);
    const res = await request(h.app).get(path).set(await h.auth.headers(service(owner.organizationId, 'envelopes')));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({ organizationId: owner.organizationId, displayName: 'Acme Legal', customMessage: 'Hello', footer: 'Foot', removePoweredBy: true, logoUrl: null });

    // A downgrade switches branding off without touching what is saved.
    h.whiteLabel.delete(owner.organizationId);
    h.plans.set(owner.organizationId, 'free');
    const downgraded = await request(h.app).get(path).set(await h.auth.headers(service(owner.organizationId, 'signing')));
    expect(downgraded.body).toEqual({ organizationId: owner.organizationId, displayName: null, customMessage: null, footer: null, removePoweredBy: false, logoUrl: null });

    expect((await request(h.app).get(path).set(await h.auth.headers(service(owner.organizationId, 'webhooks')))).status).toBe(401);
    expect((await request(h.app).get(path).set(owner.headers)).status).toBe(401);
    expect((await request(h.app).get(path).set(await h.auth.headers(service('org_someoneelse00', 'envelopes')))).status).toBe(403);
  });
});

describe('invitation e-mails', () => {
  it("carry the organization's branding in effect, and go out unbranded when it cannot be read", async () => {
    const owner = await signUp(h, { organizationName: 'Acme Corp' });
    h.plans.set(owner.organizationId, 'team');
    await put(owner.headers, { displayName: 'Acme Legal', customMessage: 'Welcome aboard.', footer: 'Acme Corp · 1 Main St' });
    const sent: Message[] = [];
    const mailer: Mailer = { send: async ({ message }) => (sent.push(message), { messageId: `<${sent.length}@test>` }), close: () => undefined };
    const deps = { db: h.db, mailer, publicUrl: PUBLIC_URL, clock: () => new Date() };
    const invite = async () => {
      const res = await request(h.app).post('/v1/organization/invitations').set(owner.headers).send({ email: uniqueEmail('invitee'), role: 'member' });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id as string;
    };

    expect(await sendInvitationMail({ ...deps, branding: (id) => effectiveBranding({ db: h.db, entitlements: h.entitlements, publicUrl: PUBLIC_URL }, id) }, await invite())).toBe('sent');
    expect(sent[0]).toMatchObject({ subject: 'Ada Owner invited you to join Acme Legal on Sigil', fromName: 'Acme Legal' });
    expect(sent[0]?.text).toContain('> Welcome aboard.');
    expect(sent[0]?.text).toContain('Acme Corp · 1 Main St');

    expect(await sendInvitationMail({ ...deps, branding: async () => Promise.reject(new Error('down')) }, await invite())).toBe('sent');
    expect(sent[1]?.subject).toBe('Ada Owner invited you to join Acme Corp on Sigil');
    expect(sent[1]?.fromName).toBeUndefined();
  });
});
