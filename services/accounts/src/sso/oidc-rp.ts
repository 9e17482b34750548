import * as client from 'openid-client';
import { AppError } from '@sigil/kit/errors';
import { UrlRefused } from '@sigil/kit/http';
import { SsoFailure } from './failure.ts';
import { urlRefused, type SsoOutbound } from './outbound.ts';

/**
 * The relying party of an OIDC connection (openid-client): discovery and every later request through the public
 * fetch, the client secret sent with HTTP Basic (the method every provider must support), authorization code with
 * PKCE (S256), `state` and `nonce`. Plain http is allowed only for an origin the policy allows (a local provider).
 */
export async function oidcConfiguration(outbound: SsoOutbound, issuer: string, clientId: string, clientSecret: string | undefined): Promise<client.Configuration> {
  const url = new URL(issuer);
  return client.discovery(url, clientId, undefined, clientSecret ? client.ClientSecretBasic(clientSecret) : client.None(), {
    [client.customFetch]: outbound.fetch as client.CustomFetch,
    execute: url.protocol === 'http:' ? [client.allowInsecureRequests] : [],
  });
}

/** Discovery when an admin saves a connection: a provider that cannot be discovered is a 400 beside `issuer`. */
export async function checkOidcIssuer(outbound: SsoOutbound, issuer: string, clientId: string): Promise<void> {
  try {
    await oidcConfiguration(outbound, issuer, clientId, undefined);
  } catch (error) {
    if (error instanceof UrlRefused) throw urlRefused(error, '/body/issuer', 'issuer');
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof UrlRefused) throw urlRefused(cause, '/body/issuer', 'issuer');
    const detail = `discovery failed: ${(error as Error).message}`;
    throw new AppError('validation-failed', `The issuer's ${detail}.`, { errors: [{ pointer: '/body/issuer', detail }] });
  }
}

export interface OidcChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

export async function oidcAuthorizationUrl(config: client.Configuration, redirectUri: string, checks: OidcChecks, loginHint?: string): Promise<string> {
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid email profile',
    state: checks.state,
    nonce: checks.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
    code_challenge_method: 'S256',
    ...(loginHint ? { login_hint: loginHint } : {}),
  });
  return url.href;
}

export const newOidcChecks = (): Omit<OidcChecks, 'state'> => ({ nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier() });

/** Exchanges the code (state, nonce and PKCE checked by openid-client) and answers the ID token's claims. */
export async function oidcClaims(config: client.Configuration, callbackUrl: URL, checks: OidcChecks): Promise<Record<string, unknown>> {
  let tokens;
  try {
    tokens = await client.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: checks.codeVerifier,
      expectedState: checks.state,
      expectedNonce: checks.nonce,
      idTokenExpected: true,
    });
  } catch (error) {
    const e = error as Error & { error?: string; error_description?: string };
    const said = e.error ? `${e.error}${e.error_description ? `: ${e.error_description}` : ''}` : e.message;
    throw new SsoFailure('oidc_error', `The OpenID provider sign-in could not be completed (${said}).`, { cause: error });
  }
  const claims = tokens.claims();
  if (!claims) throw new SsoFailure('oidc_error', 'The OpenID provider answered no ID token.');
  return { ...claims };
}

/**
 * Who the ID token says signed in: its `email`, unless the provider says the address is not verified
 * (`email_verified` false, or "false" as some providers send it). A token without the claim is taken as the
 * provider's word: enterprise providers vouch for their directory's addresses and not all send the claim.
 */
export function oidcIdentity(claims: Record<string, unknown>): { email: string; attributes: Record<string, unknown> } {
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
  if (!email) throw new SsoFailure('no_email', 'The ID token carries no e-mail address (ask for the `email` scope).');
  if (claims.email_verified === false || claims.email_verified === 'false') throw new SsoFailure('email_not_verified', `The provider says ${email} is not verified.`);
  return { email, attributes: claims };
}
