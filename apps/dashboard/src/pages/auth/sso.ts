import { unwrap, type RestClient } from '../../api/rest.ts';

/** How an address signs in, from `GET /v1/sso/discover`: through its company's identity provider, or with a password. */
export type SsoRoute = { sso: true; enforced: boolean; startUrl: string } | { sso: false; enforced?: undefined };

/** The discovery's answer for `email`; an answer without a start address counts as no SSO (nothing to go to). */
export async function discoverSso(rest: RestClient, email: string): Promise<SsoRoute> {
  const found = await unwrap(rest.GET('/v1/sso/discover', { params: { query: { email } } }));
  const startUrl = (found as { startUrl?: string | null }).startUrl ?? found.signInUrl;
  if (!found.sso || !startUrl) return { sso: false };
  return { sso: true, enforced: found.enforced === true, startUrl };
}

/**
 * The start address carrying where to land after signing in: `next` is a dashboard route (`/envelopes/env_x`, as the
 * sign-in page's `?next=` holds it), which the API takes as the path under `/app` and checks again.
 */
export function ssoStartHref(startUrl: string, next: string): string {
  if (next === '/' || !next.startsWith('/') || next.startsWith('//')) return startUrl;
  // The API answers an absolute URL; a relative one is taken as the page's own origin's.
  const url = new URL(startUrl, globalThis.location?.href);
  url.searchParams.set('next', `/app${next}`);
  return url.href;
}
