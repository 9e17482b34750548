import { describe, expect, it } from 'vitest';
import { ssoStartHref } from '../src/pages/auth/sso.ts';

const START = 'https://sigil.example/v1/auth/sso/start?email=ada%40acme.example';

describe('the single sign-on link of the sign-in page', () => {
  it("carries the page's `?next=` route as the dashboard path to land on", () => {
    const href = new URL(ssoStartHref(START, '/envelopes/env_x?tab=recipients'));
    expect(href.searchParams.get('email')).toBe('ada@acme.example');
    expect(href.searchParams.get('next')).toBe('/app/envelopes/env_x?tab=recipients');
  });

  it('is the start URL as it was without a route to return to', () => {
    expect(ssoStartHref(START, '/')).toBe(START);
    expect(ssoStartHref(START, '//evil.test')).toBe(START);
  });
});
