import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { startLocalIdp, type LocalIdp } from '@sigil/local-idp';
import { freshIp, type Harness } from './helpers.ts';
import { createSsoHarness, freshDomain, ownerOn, PUBLIC_URL, putConnection } from './sso-helpers.ts';

let h: Harness;
let idp: LocalIdp;
let domain: string;

beforeAll(async () => {
  idp = await startLocalIdp();
  h = await createSsoHarness('sso_discover');
  domain = freshDomain('disc');
  const owner = await ownerOn(h, 'business');
  await putConnection(h, owner.headers, 'corp', { protocol: 'saml', metadataXml: idp.saml.metadataXml, domains: [domain], enforced: true }).expect(200);
});
afterAll(async () => {
  await h?.close();
  await idp?.close();
});

const discover = (email: string, ip = freshIp()) => request(h.app).get('/v1/sso/discover').query({ email }).set('x-forwarded-for', ip);

describe('GET /v1/sso/discover', () => {
  it('says SSO or not, in one shape, with the start URL under both names', async () => {
    const known = await discover(`Ada@${domain.toUpperCase()}`);
    expect(known.status).toBe(200);
    const startUrl = `${PUBLIC_URL}/v1/auth/sso/start?email=${encodeURIComponent(`ada@${domain}`)}`;
    expect(known.body).toEqual({ object: 'sso_discovery', sso: true, enforced: true, startUrl, signInUrl: startUrl });

    const unknown = await discover(`ada@${freshDomain('nobody')}`);
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({ object: 'sso_discovery', sso: false, enforced: false, startUrl: null, signInUrl: null });
    // Nothing else tells the two apart: the same headers, no organization, connection or provider named.
    expect(Object.keys(unknown.headers).sort()).toEqual(Object.keys(known.headers).sort());
    expect(JSON.stringify(known.body)).not.toMatch(/org_|corp|saml/);
    expect(known.headers['cache-control']).toBe('no-store');
  });

  it('allows 30 look-ups a minute per address with RateLimit headers; the 31st is 429', async () => {
    const ip = freshIp();
    for (let i = 1; i <= 30; i++) {
      const res = await discover(`user${i}@${domain}`, ip);
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('30');
      expect(res.headers['ratelimit-remaining']).toBe(String(30 - i));
      expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
    }
    const blocked = await discover(`user31@${domain}`, ip);
    expect(blocked.status).toBe(429);
    expect(blocked.body).toMatchObject({ type: 'https://sigil.dev/problems/rate-limited' });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(blocked.headers['ratelimit-remaining']).toBe('0');
    // The start of a sign-in shares the limit.
    expect((await request(h.app).get('/v1/auth/sso/start').query({ email: `a@${domain}` }).set('x-forwarded-for', ip)).status).toBe(429);
    // Another address is not affected.
    expect((await discover(`user31@${domain}`)).status).toBe(200);
  });

  it('refuses an address that is not an e-mail, beside the parameter', async () => {
    const res = await discover('not-an-email');
    expect(res.status).toBe(400);
    expect(res.body.errors[0].pointer).toBe('/query/email');
  });
});

describe('GET /v1/auth/sso/start', () => {
  it('sends an address without SSO back to the sign-in page with sso_error', async () => {
    const res = await request(h.app).get('/v1/auth/sso/start').query({ email: `x@${freshDomain('nobody')}` }).set('x-forwarded-for', freshIp());
    expect(res.status).toBe(302);
    const location = new URL(res.headers.location as string);
    expect(location.pathname).toBe('/app/sign-in');
    expect(location.searchParams.get('sso_error')).toMatch(/not set up for this e-mail address/);
  });

  it('sends an address with SSO to the IdP with a SAML request and our RelayState', async () => {
    const res = await request(h.app).get('/v1/auth/sso/start').query({ email: `x@${domain}` }).set('x-forwarded-for', freshIp());
    expect(res.status).toBe(302);
    const location = new URL(res.headers.location as string);
    expect(location.href.startsWith(idp.saml.ssoUrl)).toBe(true);
    expect(location.searchParams.get('SAMLRequest')).toBeTruthy();
    expect(location.searchParams.get('RelayState')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // A new browser gets its binding cookie (browser-binding.ts).
    expect(String(res.headers['set-cookie'])).toMatch(/^sigil_sso=[A-Za-z0-9_-]{43}; HttpOnly; Secure; SameSite=None; Path=\/; Max-Age=600$/);
  });
});
