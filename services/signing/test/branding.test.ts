// The organization's branding on the signer's side: the one-time code's e-mail and text carry its display name, logo
// and footer, and the signing page's session answers the display name and the logo; with accounts down, all of it
// falls back to the organization's own name and no logo, and nothing fails.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, randomBase62 } from '@sigil/kit/ids';
import { createBrandingCache, type OrganizationBranding } from '@sigil/kit/branding';
import { startSigningHarness, type SigningHarness } from './helpers.ts';

let h: SigningHarness;
const branded = newId('org');
const down = newId('org');
const LOGO = `https://sigil.example.test/v1/public/logos/${branded}/0123456789abcdef0123456789abcdef.svg`;
const BRANDING: OrganizationBranding = { organizationId: branded, displayName: 'Acme Legal', customMessage: 'Ignored in codes', footer: 'Acme Corp · 1 Main St', removePoweredBy: false, logoUrl: LOGO };

beforeAll(async () => {
  const branding = await createBrandingCache({
    ttlMs: 0,
    source: async (organizationId) => {
      if (organizationId !== branded) throw new Error('connect ECONNREFUSED (accounts is down)');
      return BRANDING;
    },
  });
  h = await startSigningHarness('branding', { branding });
});
afterAll(async () => h?.close());

async function access(organizationId: string): Promise<string> {
  const token = `sgls_${randomBase62(40)}`;
  h.envelopes.addSession(token, { organizationId, testMode: false, envelopeId: newId('env'), recipientId: newId('rcp'), purpose: 'session', envelopeExpiresAt: new Date(h.clock.now.getTime() + 86_400_000).toISOString() });
  const res = await request(h.app).post('/v1/signing/exchange').send({ token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.accessToken as string;
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('branding on the signer side', () => {
  it('brands the code e-mail and the SMS with the display name, logo and footer', async () => {
    h.envelopes.verification = 'email';
    const token = await access(branded);
    expect((await request(h.app).post('/v1/signing/otp').set(bearer(token)).send({})).status).toBe(202);
    const mail = h.outbox.mails.at(-1)!;
    expect(mail.message.fromName).toBe('Acme Legal');
    expect(mail.message.html).toContain(`<img src="${LOGO}" alt="Acme Legal"`);
    expect(mail.message.text).toContain('Sent by Acme Legal.');
    expect(mail.message.text).toContain('Acme Corp · 1 Main St');
    expect(mail.message.text).not.toContain('Ignored in codes');

    h.envelopes.verification = 'sms';
    h.envelopes.phone = '+14155550100';
    const sms = await access(branded);
    expect((await request(h.app).post('/v1/signing/otp').set(bearer(sms)).send({})).status).toBe(202);
    expect(h.outbox.texts.at(-1)?.text).toContain('from Acme Legal.');
  });

  it('answers the signing page the display name and the logo', async () => {
    h.envelopes.verification = 'none';
    const res = await request(h.app).get('/v1/signing/session').set(bearer(await access(branded)));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.logoUrl).toBe(LOGO);
    expect(res.body.envelope.organizationName).toBe('Acme Legal');
  });

  it('falls back to the organization name and no logo when accounts cannot be read', async () => {
    h.envelopes.verification = 'email';
    const token = await access(down);
    expect((await request(h.app).post('/v1/signing/otp').set(bearer(token)).send({})).status).toBe(202);
    const mail = h.outbox.mails.at(-1)!;
    expect(mail.message.fromName).toBeUndefined();
    expect(mail.message.text).toContain('Sent by Acme.');
    expect(mail.message.html).not.toContain('<img');
    h.envelopes.verification = 'none';
    const res = await request(h.app).get('/v1/signing/session').set(bearer(token));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ logoUrl: null, envelope: { organizationName: 'Acme' } });
  });
});
