import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { startLocalIdp, type LocalIdp } from '@sigil/local-idp';
import type { Harness } from './helpers.ts';
import { ACS_URL, createSsoHarness, freshDomain, ownerOn, PUBLIC_URL, putConnection } from './sso-helpers.ts';

let h: Harness;
let idp: LocalIdp;
const resolved: string[] = [];

beforeAll(async () => {
  idp = await startLocalIdp();
  // DNS is stubbed: `evil.example` resolves privately, and every look-up is recorded.
  h = await createSsoHarness('sso_connections', {
    resolve: async (host) => {
      resolved.push(host);
      return host === 'evil.example' ? [{ address: '10.1.2.3', family: 4 }] : [{ address: '203.0.113.10', family: 4 }];
    },
  });
});
afterAll(async () => {
  await h?.close();
  await idp?.close();
});

const samlBody = (domains: string[], extra: Record<string, unknown> = {}) => ({ protocol: 'saml', metadataXml: idp.saml.metadataXml, domains, ...extra });

describe('SAML connections', () => {
  it('are created from pasted metadata with the SP values to give the IdP, and audited', async () => {
    const owner = await ownerOn(h, 'business');
    const domain = freshDomain();
    const res = await putConnection(h, owner.headers, 'okta-main', samlBody([` ${domain.toUpperCase()} `, `@${domain}`], { defaultRole: 'viewer', jitProvisioning: true }));
    expect(res.status).toBe(200);
    const entityId = `${PUBLIC_URL}/v1/auth/sso/saml/metadata/${owner.organizationId}/okta-main`;
    expect(res.body).toMatchObject({
      object: 'sso_connection',
      providerId: 'okta-main',
      type: 'saml',
      protocol: 'saml',
      domains: [domain],
      enforced: false,
      defaultRole: 'viewer',
      jitProvisioning: true,
      status: 'active',
      entityId,
      acsUrl: ACS_URL,
      metadataUrl: entityId,
      idpEntityId: idp.saml.entityId,
      idpSsoUrl: idp.saml.ssoUrl,
      health: { lastSuccessAt: null, lastError: null },
    });
    // The certificate's expiry, read from the IdP's certificate.
    expect(Date.parse(res.body.health.certificateExpiresAt)).toBeGreaterThan(Date.now());

    const listed = await request(h.app).get('/v1/sso/connections').set(owner.headers);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((c: { providerId: string }) => c.providerId)).toEqual(['okta-main']);
    const one = await request(h.app).get('/v1/sso/connections/okta-main').set(owner.headers);
    expect(one.body).toEqual(res.body);

    const updated = await putConnection(h, owner.headers, 'okta-main', { jitProvisioning: false, enforced: true });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ enforced: true, jitProvisioning: false, defaultRole: 'viewer', domains: [domain] });

    const audit = await request(h.app).get('/v1/sso/audit').set(owner.headers);
    expect(audit.body.data.map((e: { action: string }) => e.action)).toEqual(['connection.updated', 'connection.created']);
    expect(audit.body.data[0]).toMatchObject({ providerId: 'okta-main', actor: { type: 'member', id: owner.userId }, details: { enforced: true, jitProvisioning: false } });
    expect(audit.body.data[1].details).toMatchObject({ protocol: 'saml', domains: [domain], defaultRole: 'viewer' });
  });

  it('serve our SP metadata at the entity id: the ACS and signed assertions wanted', async () => {
    const owner = await ownerOn(h, 'business');
    await putConnection(h, owner.headers, 'idp', samlBody([freshDomain()])).expect(200);
    const res = await request(h.app).get(`/v1/auth/sso/saml/metadata/${owner.organizationId}/idp`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/samlmetadata\+xml/);
    expect(res.text).toContain(`entityID="${PUBLIC_URL}/v1/auth/sso/saml/metadata/${owner.organizationId}/idp"`);
    expect(res.text).toContain(`Location="${ACS_URL}"`);
    expect(res.text).toContain('WantAssertionsSigned="true"');
    expect((await request(h.app).get(`/v1/auth/sso/saml/metadata/${owner.organizationId}/nope`)).status).toBe(404);
  });

  it('are created from a metadata URL fetched server-side (an allowed local origin)', async () => {
    const owner = await ownerOn(h, 'business');
    const res = await putConnection(h, owner.headers, 'from-url', { protocol: 'saml', metadataUrl: idp.saml.metadataUrl, domains: [freshDomain()] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ idpEntityId: idp.saml.entityId, idpMetadataUrl: idp.saml.metadataUrl });
  });

  it('refuse metadata that is not an IdP descriptor, beside the field', async () => {
    const owner = await ownerOn(h, 'business');
    const notXml = await putConnection(h, owner.headers, 'bad', { protocol: 'saml', metadataXml: '<nope', domains: [freshDomain()] });
    expect(notXml.status).toBe(400);
    expect(notXml.body.errors).toEqual([{ pointer: '/body/metadataXml', detail: 'is not well-formed XML' }]);
    const noIdp = await putConnection(h, owner.headers, 'bad', { protocol: 'saml', metadataXml: '<EntityDescriptor entityID="x"/>', domains: [freshDomain()] });
    expect(noIdp.status).toBe(400);
    expect(noIdp.body.errors[0].pointer).toBe('/body/metadataXml');
    const privateUrl = await putConnection(h, owner.headers, 'bad', { protocol: 'saml', metadataUrl: 'https://192.168.1.20/metadata', domains: [freshDomain()] });
    expect(privateUrl.status).toBe(400);
    expect(privateUrl.body.errors).toEqual([{ pointer: '/body/metadataUrl', detail: 'points to a private or reserved address (192.168.1.20)' }]);
    const missing = await putConnection(h, owner.headers, 'bad', { protocol: 'saml', domains: [freshDomain()] });
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].pointer).toBe('/body/metadataXml');
  });
});

describe('OIDC connections', () => {
  it('discover the issuer, keep the secret sealed and never return it', async () => {
    const owner = await ownerOn(h, 'business');
    const res = await putConnection(h, owner.headers, 'google', {
      protocol: 'oidc',
      issuer: idp.oidc.issuer,
      clientId: idp.oidc.clientId,
      clientSecret: idp.oidc.clientSecret,
      domains: [freshDomain()],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ protocol: 'oidc', issuer: idp.oidc.issuer, clientId: idp.oidc.clientId, clientSecretSet: true, redirectUri: `${PUBLIC_URL}/v1/auth/sso/oidc/callback` });
    expect(JSON.stringify(res.body)).not.toContain(idp.oidc.clientSecret);
    const stored = await h.db.ssoConnection.findFirstOrThrow({ where: { organizationId: owner.organizationId, providerId: 'google' } });
    expect(stored.oidcClientSecret).toBeTruthy();
    expect(stored.oidcClientSecret).not.toContain(idp.oidc.clientSecret);
    const audit = await request(h.app).get('/v1/sso/audit').set(owner.headers);
    expect(JSON.stringify(audit.body)).not.toContain(idp.oidc.clientSecret);
  });

  it('refuse an issuer that cannot be discovered, beside the field', async () => {
    const owner = await ownerOn(h, 'business');
    const res = await putConnection(h, owner.headers, 'broken', { protocol: 'oidc', issuer: `${idp.url}/nothing-here`, clientId: 'x', clientSecret: 'y', domains: [freshDomain()] });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].pointer).toBe('/body/issuer');
    const privateIssuer = await putConnection(h, owner.headers, 'broken', { protocol: 'oidc', issuer: 'https://10.0.0.8/', clientId: 'x', clientSecret: 'y', domains: [freshDomain()] });
    expect(privateIssuer.status).toBe(400);
    expect(privateIssuer.body.errors).toEqual([{ pointer: '/body/issuer', detail: 'points to a private or reserved address (10.0.0.8)' }]);
  });
});

describe('plan gates', () => {
  it('Free has no connection; Team one; a connection beyond is 403 plan-upgrade-required', async () => {
    const free = await ownerOn(h, 'free');
    const refused = await putConnection(h, free.headers, 'one', samlBody([freshDomain()]));
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ type: 'https://sigil.dev/problems/plan-upgrade-required', feature: 'ssoConnections' });
    expect(refused.body.detail).toMatch(/allows 0 SSO connections/);

    const team = await ownerOn(h, 'team');
    expect((await putConnection(h, team.headers, 'one', samlBody([freshDomain()]))).status).toBe(200);
    const second = await putConnection(h, team.headers, 'two', samlBody([freshDomain()]));
    expect(second.status).toBe(403);
    expect(second.body.detail).toMatch(/allows 1 SSO connection\b/);
    // Changing the one it has is fine.
    expect((await putConnection(h, team.headers, 'one', { jitProvisioning: true })).status).toBe(200);
  });

  it('enforcement needs enforcedSso (Business)', async () => {
    const team = await ownerOn(h, 'team');
    const res = await putConnection(h, team.headers, 'corp', samlBody([freshDomain()], { enforced: true }));
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ type: 'https://sigil.dev/problems/plan-upgrade-required', feature: 'enforcedSso' });
    expect(await h.db.ssoConnection.count({ where: { organizationId: team.organizationId } })).toBe(0);
  });
});

describe('domains and names', () => {
  it('are validated beside the offending item, and a domain belongs to one connection across organizations (409)', async () => {
    const a = await ownerOn(h, 'business');
    const b = await ownerOn(h, 'business');
    const shared = freshDomain();
    const invalid = await putConnection(h, a.headers, 'corp', samlBody(['ok.example', 'not a domain']));
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors).toEqual([{ pointer: '/body/domains/1', detail: 'is not a domain name' }]);
    expect((await putConnection(h, a.headers, 'corp', samlBody([shared]))).status).toBe(200);
    const taken = await putConnection(h, b.headers, 'corp', samlBody([freshDomain(), shared.toUpperCase()]));
    expect(taken.status).toBe(409);
    expect(taken.body.errors).toEqual([{ pointer: '/body/domains/1', detail: 'belongs to another SSO connection' }]);
  });

  it('a new connection needs a lower-case name, a protocol and domains; owner is no default role; protocol never changes', async () => {
    const owner = await ownerOn(h, 'business');
    const badName = await putConnection(h, owner.headers, 'Okta_Main', samlBody([freshDomain()]));
    expect(badName.status).toBe(400);
    expect(badName.body.errors[0].pointer).toBe('/path/providerId');
    const noProtocol = await putConnection(h, owner.headers, 'corp', { domains: [freshDomain()] });
    expect(noProtocol.body.errors[0].pointer).toBe('/body/protocol');
    const noDomains = await putConnection(h, owner.headers, 'corp', { protocol: 'saml', metadataXml: idp.saml.metadataXml });
    expect(noDomains.body.errors[0].pointer).toBe('/body/domains');
    const ownerRole = await putConnection(h, owner.headers, 'corp', samlBody([freshDomain()], { defaultRole: 'owner' }));
    expect(ownerRole.body.errors[0].pointer).toBe('/body/defaultRole');
    expect((await putConnection(h, owner.headers, 'corp', samlBody([freshDomain()]))).status).toBe(200);
    const switched = await putConnection(h, owner.headers, 'corp', { protocol: 'oidc' });
    expect(switched.status).toBe(400);
    expect(switched.body.errors[0].pointer).toBe('/body/protocol');
    const oidcField = await putConnection(h, owner.headers, 'corp', { clientSecret: 'x' });
    expect(oidcField.body.errors[0].pointer).toBe('/body/clientSecret');
  });

  it('an unknown connection is 404', async () => {
    const owner = await ownerOn(h, 'business');
    expect((await request(h.app).get('/v1/sso/connections/nope').set(owner.headers)).status).toBe(404);
  });
});

describe('fetching SAML metadata (POST /v1/sso/saml-metadata)', () => {
  it('answers the XML with the IdP entity id, SSO URL and certificate expiry', async () => {
    const owner = await ownerOn(h, 'business');
    const res = await request(h.app).post('/v1/sso/saml-metadata').set(owner.headers).send({ url: idp.saml.metadataUrl });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'saml_metadata', entityId: idp.saml.entityId, ssoUrl: idp.saml.ssoUrl, xml: idp.saml.metadataXml });
    expect(Date.parse(res.body.certificateExpiresAt)).toBeGreaterThan(Date.now());
  });

  it('refuses private addresses and names resolving to them before connecting, beside /body/url', async () => {
    const owner = await ownerOn(h, 'business');
    const cases: Array<[string, string]> = [
      ['https://10.0.0.1/metadata', 'points to a private or reserved address (10.0.0.1)'],
      ['https://127.0.0.1/metadata', 'points to a private or reserved address (127.0.0.1)'],
      ['https://169.254.169.254/latest/meta-data', 'points to a private or reserved address (169.254.169.254)'],
      ['https://[::ffff:10.0.0.1]/metadata', 'points to a private or reserved address'],
      ['https://evil.example/metadata', 'host evil.example resolves to a private or reserved address (10.1.2.3)'],
      ['http://203.0.113.10/metadata', 'must be a public https:// URL'],
    ];
    for (const [url, detail] of cases) {
      const res = await request(h.app).post('/v1/sso/saml-metadata').set(owner.headers).send({ url });
      expect(res.status, url).toBe(400);
      expect(res.body.errors[0].pointer, url).toBe('/body/url');
      expect(res.body.errors[0].detail, url).toContain(detail);
    }
    expect(resolved).toContain('evil.example');
  });
});
