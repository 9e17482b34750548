import type { Reply } from '@sigil/kit/api';
import { notFound } from '@sigil/kit/errors';
import type { Logger } from '@sigil/kit/log';
import type { Db } from '../db.ts';
import type { Throttle, ThrottleRule } from '../throttle.ts';
import { rateLimited } from '../throttle.ts';
import { normalizeEmail } from '../views.ts';
import type { Binding } from './browser-binding.ts';
import type { SsoConnectionRow } from './connections.ts';
import { emailDomain } from './domains.ts';
import { quoted, SsoFailure } from './failure.ts';
import { createLoginOutcomes, type LoginResult, type VerifiedIdentity } from './login-outcome.ts';
import { consumeLoginState, createLoginState, firstUseOfAssertion, PostgresSamlCache, type LoginPurpose, type LoginState } from './login-state.ts';
import { newOidcChecks, oidcAuthorizationUrl, oidcClaims, oidcConfiguration, oidcIdentity } from './oidc-rp.ts';
import type { SsoOutbound } from './outbound.ts';
import { redirect } from './pages.ts';
import { dashboardReturnPath } from './return-path.ts';
import { newSamlRequestId, samlAuthorizeUrl, samlServiceProviderMetadata, validateSamlResponse, type SamlIdp } from './saml-sp.ts';
import { openClientSecret } from './secrets.ts';
import { oidcRedirectUri, samlServiceProvider, signInErrorUrl, ssoStartUrl } from './urls.ts';

/** Discovery and the start of a sign-in share one limit: 30 a minute per address. */
export const SSO_LOOKUP_LIMIT: ThrottleRule = { name: 'sso-lookup:ip', limit: 30, windowSeconds: 60 };

type Connection = SsoConnectionRow & { domains: { domain: string }[] };
/** Where a callback came from: the client's address and whether its binding cookie matches a login's. */
type Callback = { ip: string; sameBrowser: (browserHash: string) => boolean };

export interface LoginDeps {
  db: Db;
  throttle: Throttle;
  outbound: SsoOutbound;
  secretsKey: Buffer;
  publicUrl: string;
  clock: () => Date;
  log: Logger;
  /** Default SSO_LOOKUP_LIMIT. */
  lookupLimit?: ThrottleRule;
}

const idpOf = (c: Connection): SamlIdp => ({ entityId: c.idpEntityId ?? '', ssoUrl: c.idpSsoUrl ?? '', certificates: c.idpCertificates });

/** SP-initiated logins: where they start, how the IdP's answer is checked, and discovery by e-mail domain. */
export function createLogins(deps: LoginDeps) {
  const { db, publicUrl, clock } = deps;
  const cache = new PostgresSamlCache(db);
  const outcomes = createLoginOutcomes(deps);
  const lookupLimit = deps.lookupLimit ?? SSO_LOOKUP_LIMIT;
  const sp = (c: Connection) => samlServiceProvider(publicUrl, c.organizationId, c.providerId);
  const oidcConfig = (c: Connection) =>
    oidcConfiguration(deps.outbound, c.oidcIssuer ?? '', c.oidcClientId ?? '', c.oidcClientSecret ? openClientSecret(deps.secretsKey, c.id, c.oidcClientSecret) : undefined);

  /** Counts one look-up from `ip`; the RateLimit-* headers of the answer, or the 429. */
  async function countLookup(ip: string): Promise<Record<string, string>> {
    const result = await deps.throttle.hit(lookupLimit, ip);
    if (!result.allowed) throw rateLimited(result);
    return { 'ratelimit-limit': String(result.limit), 'ratelimit-remaining': String(result.remaining), 'ratelimit-reset': String(result.resetSeconds) };
  }

  /** The connection answering for an address's domain (one query whatever the answer, so timing says little). */
  async function connectionFor(email: string): Promise<Connection | null> {
    const domain = emailDomain(normalizeEmail(email)) ?? '';
    const row = await db.ssoDomain.findUnique({ where: { domain }, include: { connection: { include: { domains: true } } } });
    return row?.connection ?? null;
  }

  /** The redirect (with the browser binding's cookie) that begins a login of `purpose` on `connection`. */
  async function beginAt(connection: Connection, purpose: LoginPurpose, binding: Binding, options: { testId?: string; loginHint?: string; returnTo?: string } = {}): Promise<Reply> {
    const now = clock();
    const login = { connectionId: connection.id, purpose, testId: options.testId, browserHash: binding.hash, returnTo: options.returnTo };
    let url: string;
    if (connection.protocol === 'saml') {
      const samlRequestId = newSamlRequestId();
      const state = await createLoginState(db, { ...login, samlRequestId }, now);
      url = await samlAuthorizeUrl(sp(connection), idpOf(connection), cache, samlRequestId, state);
    } else {
      const checks = newOidcChecks();
      const config = await oidcConfig(connection);
      const state = await createLoginState(db, { ...login, ...checks }, now);
      url = await oidcAuthorizationUrl(config, oidcRedirectUri(publicUrl), { state, ...checks }, options.loginHint);
    }
    return redirect(302, url, { 'set-cookie': binding.setCookie });
  }

  /** The stored login of a callback's state, or the answer for one that cannot go on. */
  async function claim(state: string | undefined): Promise<{ login: LoginState; connection: Connection } | { reply: Reply } | { refused: SsoFailure; login: LoginState; connection: Connection }> {
    const consumed = await consumeLoginState(db, state, clock());
    const connection = consumed.login && (await db.ssoConnection.findUnique({ where: { id: consumed.login.connectionId }, include: { domains: true } }));
    if (!consumed.login || !connection) return { reply: outcomes.unknownLogin() };
    if (!consumed.ok) {
      const failure =
        consumed.why === 'used'
          ? new SsoFailure('replayed', 'This sign-in response was already used (a replay); start again.')
          : new SsoFailure('unknown_state', 'The sign-in took too long and expired; start again.');
      return { refused: failure, login: consumed.login, connection };
    }
    return { login: consumed.login, connection };
  }

  /**
   * A callback: claims its state, checks that this browser started the login (`sameBrowser` of the login's binding)
   * and the IdP's answer with `verify`, and ends the login either way.
   */
  async function complete(
    callback: Callback & { state: string | undefined },
    protocol: 'saml' | 'oidc',
    verify: (login: LoginState, connection: Connection) => Promise<VerifiedIdentity>,
  ): Promise<Reply> {
    const { state, ip } = callback;
    const claimed = await claim(state);
    if ('reply' in claimed) return claimed.reply;
    const { login, connection } = claimed;
    if ('refused' in claimed) return outcomes.finish(connection, login, { ok: false, failure: claimed.refused }, ip);
    let result: LoginResult;
    try {
      if (!callback.sameBrowser(login.browserHash)) throw new SsoFailure('other_browser', 'This sign-in was started in another browser (or its cookie was blocked); start again here.');
      if (connection.protocol !== protocol) throw new SsoFailure('invalid_response', `This login expected a ${connection.protocol === 'saml' ? 'SAML response' : 'OpenID Connect answer'}.`);
      result = { ok: true, identity: await verify(login, connection) };
    } catch (error) {
      if (!(error instanceof SsoFailure)) throw error;
      result = { ok: false, failure: error };
    }
    return outcomes.finish(connection, login, result, ip);
  }

  return {
    outcomes,
    beginAt,

    async discover(email: string, ip: string) {
      const headers = await countLookup(ip);
      const connection = await connectionFor(email);
      const startUrl = connection ? ssoStartUrl(publicUrl, normalizeEmail(email)) : null;
      // One shape for both answers: only `sso` (and `enforced`) differ.
      return { headers, body: { object: 'sso_discovery' as const, sso: connection !== null, enforced: connection?.enforced ?? false, startUrl, signInUrl: startUrl } };
    },

    /**
     * `GET /v1/auth/sso/start?email=&next=`: 302 to the IdP, or back to the sign-in page saying why not. `next`, a
     * dashboard path (return-path.ts; anything else is ignored), is where the sign-in lands.
     */
    async startSignIn(email: string, ip: string, binding: Binding, next?: string): Promise<Reply> {
      const headers = await countLookup(ip);
      const connection = await connectionFor(email);
      if (!connection) return redirect(302, signInErrorUrl(publicUrl, 'Single sign-on is not set up for this e-mail address; sign in with your password.'), headers);
      try {
        const reply = await beginAt(connection, 'sign_in', binding, { loginHint: normalizeEmail(email), returnTo: dashboardReturnPath(next) });
        return { ...reply, headers: { ...headers, ...reply.headers } };
      } catch (error) {
        deps.log.warn({ err: error, providerId: connection.providerId }, 'sso sign-in could not start');
        const refused = await outcomes.startFailed(connection, normalizeEmail(email), ip);
        return { ...refused, status: 302, headers: { ...headers, ...refused.headers } };
      }
    },

    completeSaml(body: { SAMLResponse: string; RelayState?: string }, callback: Callback): Promise<Reply> {
      return complete({ ...callback, state: body.RelayState }, 'saml', async (login, connection) => {
        const saml = await validateSamlResponse(sp(connection), idpOf(connection), cache, body.SAMLResponse, login.samlRequestId);
        if (!(await firstUseOfAssertion(db, saml.issuer, saml.assertionId, saml.expiresAt))) {
          throw new SsoFailure('replayed', 'This assertion was already used (a replay); start again.');
        }
        return { email: saml.email, attributes: saml.attributes };
      });
    },

    completeOidc(query: Record<string, string | undefined>, callback: Callback): Promise<Reply> {
      return complete({ ...callback, state: query.state }, 'oidc', async (login, connection) => {
        if (query.error) {
          const description = query.error_description ? ` (${quoted(query.error_description)})` : '';
          throw new SsoFailure('idp_error', `The OpenID provider refused the sign-in: ${quoted(query.error, 60)}${description}.`);
        }
        const currentUrl = new URL(oidcRedirectUri(publicUrl));
        for (const [name, value] of Object.entries(query)) if (value !== undefined) currentUrl.searchParams.set(name, value);
        let claims: Record<string, unknown>;
        try {
          claims = await oidcClaims(await oidcConfig(connection), currentUrl, { state: query.state ?? '', nonce: login.nonce ?? '', codeVerifier: login.codeVerifier ?? '' });
        } catch (error) {
          if (error instanceof SsoFailure) throw error;
          deps.log.warn({ err: error, providerId: connection.providerId }, 'oidc provider unreachable');
          throw new SsoFailure('connection_unavailable', 'The OpenID provider could not be reached; try again later.', { cause: error });
        }
        return oidcIdentity(claims);
      });
    },

    async serviceProviderMetadata(organizationId: string, providerId: string): Promise<Reply> {
      const connection = await db.ssoConnection.findUnique({ where: { organizationId_providerId: { organizationId, providerId } }, include: { domains: true } });
      if (!connection || connection.protocol !== 'saml') throw notFound(`SAML connection ${providerId}`);
      return { status: 200, body: samlServiceProviderMetadata(sp(connection)), headers: { 'content-type': 'application/samlmetadata+xml; charset=utf-8' } };
    },
  };
}

export type Logins = ReturnType<typeof createLogins>;
