import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { crossOriginRefusal } from '@sigil/kit/http';
import { apiKeyOf, sessionTokenOf } from './credentials.ts';
import type { StrataAuthenticator } from './strata-auth.ts';

/**
 * CSRF: a browser adds cookies to requests other sites make, so a write whose only credential is a cookie must come
 * from a page of this origin. Credentials a page has to add itself (an API key, a signer's or viewer's bearer token,
 * an access token header) cannot be forged that way and are not checked.
 */

/**
 * Whether a Sigil operation of this `x-auth` kind would act as the dashboard session in the cookie: D always, K when
 * no API key is presented. P operations never act for the session (SAML's ACS is a cross-site POST by design); S and
 * V take bearer tokens.
 */
export function sigilCookieCarries(rule: string, headers: IncomingHttpHeaders): boolean {
  if (rule !== 'D' && rule !== 'K') return false;
  if (sessionTokenOf(headers) === undefined) return false;
  return rule === 'D' || !apiKeyOf(headers).present;
}

/** Whether Strata's credential is the access cookie (neither access header is there to take precedence). */
export function strataCookieCarries(authenticator: StrataAuthenticator | undefined, headers: IncomingHttpHeaders): boolean {
  if (!authenticator || headers.cookie === undefined || authenticator.tokenOf(headers) === undefined) return false;
  return authenticator.tokenOf({ ...headers, cookie: undefined }) === undefined;
}

/** The refusal's message when a cookie-carried request comes from another origin; undefined when it may go on. */
export function crossOriginCookieRefusal(req: Pick<IncomingMessage, 'headers' | 'method'>, carried: boolean, options: { always?: boolean } = {}): string | undefined {
  if (!carried) return undefined;
  const reason = crossOriginRefusal(req, options);
  return reason && `A request from another origin may not use this site's cookies (${reason}).`;
}
