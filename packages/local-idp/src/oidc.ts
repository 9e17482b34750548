/**
 * The OpenID provider (oidc-provider) under `<baseUrl>/oidc`: one confidential client, the authorization code flow
 * with PKCE (S256) required, and the sign-in form as its only interaction. It asks who you are on every sign-in (a
 * test that signs in two people in one browser gets two people: for the second, oidc-provider ends the first one's
 * session with a page that submits itself), and the ID token carries the claims of the scopes asked (`email`,
 * `email_verified`, `name`, `given_name`, `family_name`, `groups`).
 */
import { randomBytes } from 'node:crypto';
import express, { Router, type Request, type Response } from 'express';
import Provider, { interactionPolicy, type Account } from 'oidc-provider';
import { memoryAdapter } from './oidc-memory-adapter.ts';
import { errorPage, sendErrorPage, sendSignInPage } from './pages.ts';
import { personFromForm, type LocalIdpUser, type Person } from './person.ts';

export interface OidcClient {
  clientId: string;
  clientSecret: string;
  tokenEndpointAuthMethod: 'client_secret_basic' | 'client_secret_post';
}

export interface OpenIdProvider {
  issuer: string;
  /** Mounted first: the sign-in form at `/oidc/interaction/:uid`. */
  interactions: Router;
  /** Everything else under `/oidc` (mounted there). */
  handler: ReturnType<Provider['callback']>;
  registerRedirectUri(uri: string): void;
}

export function openIdProvider(baseUrl: string, client: OidcClient, redirectUris: string[], signingJwk: Record<string, unknown>, users: LocalIdpUser[]): OpenIdProvider {
  const issuer = `${baseUrl}/oidc`;
  const allowedRedirects = new Set(redirectUris);
  const accounts = new Map<string, Person>();

  const policy = interactionPolicy.base();
  policy.get('login')!.checks.add(
    new interactionPolicy.Check('local_idp_asks_every_time', 'The local identity provider asks who signs in every time', (ctx) =>
      ctx.oidc.result?.login ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT,
    ),
  );

  const provider = new Provider(issuer, {
    adapter: memoryAdapter(),
    clients: [
      {
        client_id: client.clientId,
        client_secret: client.clientSecret,
        // oidc-provider wants one valid redirect URI at start; the callers' own are checked by `redirectUriAllowed`.
        redirect_uris: redirectUris.length ? redirectUris : [`${baseUrl}/oidc/no-redirect-uri-registered`],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: client.tokenEndpointAuthMethod,
      },
    ],
    pkce: { required: () => true },
    scopes: ['openid', 'email', 'profile'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'given_name', 'family_name', 'groups'] },
    // The relying party reads the claims from the ID token (no userinfo call).
    conformIdTokenClaims: false,
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    jwks: { keys: [signingJwk] },
    // Seconds. A sign-in form lasts 10 minutes, a code one, tokens an hour.
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AuthorizationCode: 60, AccessToken: 3600, IdToken: 3600 },
    features: { devInteractions: { enabled: false } },
    interactions: { policy, url: (_ctx, interaction) => `/oidc/interaction/${interaction.uid}` },
    findAccount: async (_ctx, sub) => accountOf(sub, accounts.get(sub)),
    clientBasedCORS: () => false,
    renderError: (ctx, out) => {
      const page = errorPage(out.error_description ?? out.error);
      ctx.set(page.headers);
      ctx.type = 'html';
      ctx.body = page.html;
    },
  });
  // The redirect URIs registered after start count as much as those in the client's metadata (an exact match).
  provider.Client.prototype.redirectUriAllowed = (uri: string) => allowedRedirects.has(uri);

  const interactions = Router();
  interactions.use(express.urlencoded({ extended: false, limit: '64kb' }));
  const page = (uid: string, params: Record<string, unknown>) => ({
    action: `${baseUrl}/oidc/interaction/${uid}`,
    requester: String(params.client_id ?? 'An application'),
    protocol: 'OpenID Connect' as const,
    knownEmails: users.map((user) => user.email),
    email: typeof params.login_hint === 'string' ? params.login_hint : undefined,
  });
  interactions.get('/:uid', async (req: Request, res: Response) => {
    const details = await provider.interactionDetails(req, res).catch(() => undefined);
    if (!details || details.uid !== req.params.uid) return sendErrorPage(res, 400, 'This sign-in expired or was already used. Start again from the application.');
    sendSignInPage(res, page(details.uid, details.params));
  });
  interactions.post('/:uid', async (req: Request, res: Response) => {
    const details = await provider.interactionDetails(req, res).catch(() => undefined);
    if (!details || details.uid !== req.params.uid) return sendErrorPage(res, 400, 'This sign-in expired or was already used. Start again from the application.');
    const person = personFromForm((req.body ?? {}) as Record<string, unknown>, users);
    if ('error' in person) return sendSignInPage(res, { ...page(details.uid, details.params), error: person.error }, 400);
    accounts.set(person.email, person);
    const grant = new provider.Grant({ accountId: person.email, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope ?? 'openid'));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId: person.email }, consent: { grantId } }, { mergeWithLastSubmission: false });
  });

  return {
    issuer,
    interactions,
    handler: provider.callback(),
    registerRedirectUri: (uri) => void allowedRedirects.add(uri),
  };
}

function accountOf(sub: string, person: Person | undefined): Account | undefined {
  if (!person) return undefined;
  return {
    accountId: sub,
    claims: () => ({ sub, email: person.email, email_verified: true, name: person.name, given_name: person.firstName, family_name: person.lastName, groups: person.groups }),
  };
}
