import { describe, expect, it } from 'vitest';
import { canonicalEmail, emailDomain } from '../src/sso/domains.ts';
import { quoted, SsoFailure } from '../src/sso/failure.ts';
import { oidcIdentity } from '../src/sso/oidc-rp.ts';
import { dashboardReturnPath, landingUrl } from '../src/sso/return-path.ts';

const refusalOf = (run: () => unknown): string | undefined => {
  try {
    run();
  } catch (error) {
    if (error instanceof SsoFailure) return error.code;
    throw error;
  }
  return undefined;
};

describe('the e-mail an identity provider asserts', () => {
  it('is kept in the form accounts use, and only an address is one', () => {
    expect(canonicalEmail(' Pat@Example.COM ')).toBe('pat@example.com');
    expect(canonicalEmail('pat@ｅｘａｍｐｌｅ.com')).toBe('pat@example.com');
    expect(canonicalEmail('pat@bücher.example')).toBe('pat@xn--bcher-kva.example');
    for (const bad of ['pat', '@example.com', 'pat@', 'pat@example.com.', 'p at@example.com', 'a@b@example.com', 'pat@example', 'pat@exa mple.com', `${'x'.repeat(65)}@example.com`]) {
      expect(canonicalEmail(bad), bad).toBeUndefined();
    }
  });

  it('matches a domain exactly: neither a subdomain nor a domain that only starts with it', () => {
    expect(emailDomain(canonicalEmail('pat@evil.example.com')!)).toBe('evil.example.com');
    expect(emailDomain(canonicalEmail('pat@example.com.evil.test')!)).toBe('example.com.evil.test');
    expect(canonicalEmail('"pat@example.com"@evil.test')).toBeUndefined();
  });
});

describe('the OpenID identity', () => {
  it('refuses an address the provider says is not verified, and one without an address', () => {
    expect(refusalOf(() => oidcIdentity({ email: 'pat@example.com', email_verified: false }))).toBe('email_not_verified');
    expect(refusalOf(() => oidcIdentity({ email: 'pat@example.com', email_verified: 'false' }))).toBe('email_not_verified');
    expect(refusalOf(() => oidcIdentity({ sub: '1' }))).toBe('no_email');
    expect(oidcIdentity({ email: 'Pat@Example.com', email_verified: true }).email).toBe('pat@example.com');
    expect(oidcIdentity({ email: 'pat@example.com' }).email).toBe('pat@example.com');
  });
});

describe('the return path of a sign-in (`next`)', () => {
  it('keeps a dashboard path of our origin and nothing else', () => {
    for (const good of ['/app', '/app/', '/app/envelopes/env_x', '/app/envelopes?status=sent#top', '/app/settings/sso']) expect(dashboardReturnPath(good), good).toBe(good);
    for (const bad of [
      '//evil.test',
      'https://evil.test',
      '/\\evil.test',
      '/app/\\evil.test',
      '/app//evil.test',
      '/app/..',
      '/app/../v1/organization/members',
      '/app/%2e%2e/v1/x',
      '/app/%2F%2Fevil.test',
      '/app/%5cevil.test',
      '/app/x\r\nSet-Cookie: a=b',
      '/app/\u0000',
      '/v1/organization/members',
      '/application',
      'javascript:alert(1)',
      `/app/${'x'.repeat(2048)}`,
      '',
      undefined,
      ['/app/x'],
    ]) {
      expect(dashboardReturnPath(bad), String(bad)).toBeUndefined();
    }
    expect(landingUrl('https://sigil.example', '/app/envelopes/env_x')).toBe('https://sigil.example/app/envelopes/env_x');
    expect(landingUrl('https://sigil.example', null)).toBe('https://sigil.example/app/');
    expect(landingUrl('https://sigil.example', '//evil.test')).toBe('https://sigil.example/app/');
  });
});

describe('text from an unauthenticated callback', () => {
  it('is one bounded line', () => {
    expect(quoted('a\r\nb\u2028c')).toBe('a b c');
    expect(quoted('x'.repeat(500))).toHaveLength(200);
  });
});
