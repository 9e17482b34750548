// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { attributeRows, certificateExpiresSoon, parseDomains, serviceProviderDetails, type SsoConnection } from '../src/pages/settings/sso/connection.ts';
import { previewDocument } from '../src/pages/settings/branding/previewDocument.ts';

const saml: SsoConnection = {
  object: 'sso_connection',
  providerId: 'okta',
  protocol: 'saml',
  entityId: 'http://127.0.0.1:8080/v1/auth/sso/saml/metadata/org_1/okta',
  acsUrl: 'http://127.0.0.1:8080/v1/auth/sso/saml/acs',
  metadataUrl: 'http://127.0.0.1:8080/v1/auth/sso/saml/metadata/org_1/okta',
};

describe('SSO settings words', () => {
  it('reads domains as the API takes them: lower case, each once, whatever separates them', () => {
    expect(parseDomains(' Example.com, example.org;example.com\nsub.example.com ,')).toEqual(['example.com', 'example.org', 'sub.example.com']);
    expect(parseDomains('  ')).toEqual([]);
  });

  it('gives the IdP the entity id, ACS URL and metadata URL of SAML, the redirect URI of OIDC', () => {
    expect(serviceProviderDetails(saml).map((d) => d.label)).toEqual(['Entity ID (audience)', 'ACS URL (reply URL)', 'Metadata URL']);
    const oidc: SsoConnection = { object: 'sso_connection', providerId: 'op', type: 'oidc', redirectUri: 'http://127.0.0.1:8080/v1/auth/sso/oidc/callback' };
    expect(serviceProviderDetails(oidc)).toEqual([{ label: 'Redirect URI', value: 'http://127.0.0.1:8080/v1/auth/sso/oidc/callback' }]);
  });

  it('shows attributes as name and value, lists joined', () => {
    expect(attributeRows({ email: 'e@example.com', groups: ['a', 'b'], n: 1, o: { x: 1 } })).toEqual([
      { name: 'email', value: 'e@example.com' },
      { name: 'groups', value: 'a, b' },
      { name: 'n', value: '1' },
      { name: 'o', value: '{"x":1}' },
    ]);
    expect(attributeRows(undefined)).toEqual([]);
  });

  it('calls out a certificate expiring within 30 days', () => {
    const now = Date.parse('2026-12-01T00:00:00Z');
    expect(certificateExpiresSoon('2026-12-20T00:00:00Z', now)).toBe(true);
    expect(certificateExpiresSoon('2027-06-01T00:00:00Z', now)).toBe(false);
    expect(certificateExpiresSoon(null, now)).toBe(false);
  });
});

describe('the e-mail preview document', () => {
  it('moves inline styles into one sheet with the page nonce, so the inherited CSP lets them apply', () => {
    const doc = previewDocument('<!doctype html><html><body style="color:#111;max-width:560px"><p style="font-size:12px">Hi</p><p>Plain</p></body></html>', 'abc');
    const parsed = new DOMParser().parseFromString(doc, 'text/html');
    expect(parsed.querySelectorAll('[style]')).toHaveLength(0);
    const sheet = parsed.querySelector('style');
    expect(sheet?.getAttribute('nonce')).toBe('abc');
    expect(sheet?.textContent).toContain('color: rgb(17, 17, 17) !important');
    expect(sheet?.textContent).toContain('font-size: 12px !important');
    expect(parsed.querySelector('p')?.getAttribute('data-preview-style')).toBe('1');
    expect(parsed.body.textContent).toBe('HiPlain');
  });

  it('never lets a value close the sheet', () => {
    const doc = previewDocument('<p style="font-family: \'</style><script>x()</script>\'">x</p>', 'n');
    const parsed = new DOMParser().parseFromString(doc, 'text/html');
    expect(parsed.querySelectorAll('script')).toHaveLength(0);
    expect(parsed.querySelectorAll('style')).toHaveLength(1);
  });
});
