import { loadSigilOpenApi } from '@sigil/proto/openapi';
import type { Express } from 'express';
import { createSigilApp, type OperationContext } from '@sigil/kit/api';
import { listLimit } from '@sigil/kit/pagination';
import { clientAddress, mountHealth, type Health, type ReadinessCheck } from '@sigil/kit/http';
import { mountSubgraph } from '@sigil/kit/graphql';
import { type Logger } from '@sigil/kit/log';
import { type PrincipalVerifier } from '@sigil/kit/auth';
import type { EntitlementsCache } from '@sigil/kit/entitlements';
import type { Db } from './db.ts';
import { createApiKeyService } from './api-keys.ts';
import { mountInternalRoutes } from './internal-routes.ts';
import { createMemberService } from './members.ts';
import { createOrganizationService } from './organizations.ts';
import { createPasswordHasher, type PasswordHasher } from './passwords.ts';
import { clearedSessionCookie, createSessionService, sessionCookie, type IssuedSession } from './sessions.ts';
import { createResolvers, typeDefs } from './subgraph.ts';
import { createThrottle, rateLimitsWith, type RateLimitOverrides } from './throttle.ts';
import { listSsoAudit } from './sso/audit.ts';
import { createSsoHandlers, type SsoOptions } from './sso/handlers.ts';
import { createScimRoutes } from './scim/routes.ts';
import { createBrandingRoutes, LOGO_MAX_BYTES } from './branding/routes.ts';
import type { FileStore } from '@strata/stream/file-store';

export interface AccountsAppDeps {
  db: Db;
  log: Logger;
  verifyPrincipal: PrincipalVerifier;
  readiness?: Record<string, ReadinessCheck>;
  /** Attempt limits of sign-in, sign-up and invitation acceptance (defaults in throttle.ts). */
  rateLimits?: RateLimitOverrides;
  /** Default: argon2id with OWASP's parameters. Tests pass cheap ones. */
  passwords?: PasswordHasher;
  /** Default: the system clock. Expiries of sessions, invitations and API keys are computed and checked on it. */
  clock?: () => Date;
  /** The jobs' cell (CONSUMER_PREFIX): invitation e-mails are jobs of this cell. */
  cell?: string;
  /** The organization's plan entitlements (billing's): SSO connections, enforced SSO, SCIM and branding follow them. */
  entitlements: EntitlementsCache;
  /** The gateway's public URL: SSO's SP entity id, ACS and callback, the SCIM endpoint and logo URLs are under it. */
  publicUrl?: string;
  /** SSO's outbound policy (allowed origins), client-secret key and lookup limit (sso/handlers.ts). */
  sso?: SsoOptions;
  /** Where logos are kept (S3); without one, logo uploads answer 503. */
  logoStore?: FileStore;
  /** Tells the services that cache branding that an organization's changed (a core-NATS notification). */
  notifyBrandingChanged?: (organizationId: string) => void;
}

/** Responses that carry a credential must never be cached. */
const NO_STORE = { 'cache-control': 'no-store' };

function withCookie(status: number, issued: IssuedSession) {
  return { status, body: issued.session, headers: { ...NO_STORE, 'set-cookie': sessionCookie(issued.token) } };
}

/** The page a list operation asks for (listMembers, listInvitations and listApiKeys take the same two parameters). */
function page(query: OperationContext<'listMembers'>['query']) {
  return { limit: listLimit(query), cursor: query.cursor };
}

export async function createApp(deps: AccountsAppDeps): Promise<{ app: Express; health: Health }> {
  const throttle = createThrottle(deps.db, rateLimitsWith(deps.rateLimits));
  const passwords = deps.passwords ?? createPasswordHasher();
  const clock = deps.clock ?? (() => new Date());
  const sessions = createSessionService({ db: deps.db, throttle, passwords, clock });
  const members = createMemberService({ db: deps.db, throttle, passwords, clock, cell: deps.cell });
  const apiKeys = createApiKeyService({ db: deps.db, clock });
  const organizations = createOrganizationService({ db: deps.db, passwords });
  const scim = createScimRoutes({ db: deps.db, clock, log: deps.log, entitlements: deps.entitlements, publicUrl: deps.publicUrl ?? 'http://127.0.0.1:8080' });
  const branding = createBrandingRoutes({ db: deps.db, entitlements: deps.entitlements, publicUrl: deps.publicUrl ?? 'http://127.0.0.1:8080', clock, logoStore: deps.logoStore, notifyChanged: deps.notifyBrandingChanged });
  const sso = createSsoHandlers({ db: deps.db, log: deps.log, throttle, entitlements: deps.entitlements, publicUrl: deps.publicUrl ?? 'http://127.0.0.1:8080', clock, options: deps.sso });
  let health: Health | undefined;

  const app = await createSigilApp({
    document: loadSigilOpenApi(),
    service: 'accounts',
    log: deps.log,
    verifyPrincipal: deps.verifyPrincipal,
    db: deps.db,
    // The logo (uploadOrganizationLogo) is the only file accounts takes.
    multipartLimit: LOGO_MAX_BYTES,
    // The SAML ACS takes the IdP's HTML form post (a signed response of a few KB; 1 MB leaves room for certificates).
    formLimit: '1mb',
    mount: async (app) => {
      health = mountHealth(app, { database: async () => void (await deps.db.$queryRawUnsafe('SELECT 1')), ...deps.readiness });
      mountInternalRoutes(app, { verifyPrincipal: deps.verifyPrincipal, apiKeys, sessions });
      scim.mount(app);
      branding.mountInternal(app, deps.verifyPrincipal);
      await mountSubgraph(app, { typeDefs, resolvers: createResolvers({ organizations, apiKeys, members }), verifyPrincipal: deps.verifyPrincipal });
    },
    publicHandlers: {
      signUp: async ({ req, body }) => withCookie(201, await sessions.signUp(body, clientAddress(req))),
      signIn: async ({ req, body }) => withCookie(200, await sessions.signIn(body, clientAddress(req))),
      acceptInvitation: async ({ req, body }) => withCookie(201, await members.acceptInvitation(body, clientAddress(req))),
      getPublicLogo: branding.getPublicLogo,
      discoverSso: sso.public.discoverSso,
      startSsoSignIn: sso.public.startSsoSignIn,
      completeSamlSso: sso.public.completeSamlSso,
      completeOidcSso: sso.public.completeOidcSso,
      getSsoServiceProviderMetadata: sso.public.getSsoServiceProviderMetadata,
    },
    handlers: {
      // ------------------------------------------------------------ dashboard session
      signOut: async ({ principal }) => {
        await sessions.signOut(principal);
        return { status: 204, headers: { 'set-cookie': clearedSessionCookie() } };
      },
      getSession: async ({ principal }) => ({ status: 200, body: await sessions.current(principal), headers: NO_STORE }),

      // ------------------------------------------------------------ members and invitations
      listMembers: async ({ principal, query }) => ({ status: 200, body: await members.listMembers(principal.organizationId, page(query)) }),
      updateMember: async ({ principal, params, body }) => ({
        status: 200,
        body: await members.updateMember(principal, params.id, body.role),
      }),
      removeMember: async ({ principal, params }) => {
        await members.removeMember(principal, params.id);
        return { status: 204 };
      },
      createInvitation: async ({ principal, body }) => ({
        status: 201,
        body: await members.createInvitation(principal, body),
        headers: NO_STORE,
      }),
      listInvitations: async ({ principal, query }) => ({
        status: 200,
        body: await members.listInvitations(principal.organizationId, page(query)),
      }),
      revokeInvitation: async ({ principal, params }) => {
        await members.revokeInvitation(principal.organizationId, params.id);
        return { status: 204 };
      },

      // ------------------------------------------------------------ api keys
      createApiKey: async ({ principal, body }) => ({
        status: 201,
        body: await apiKeys.create(principal, body),
        headers: NO_STORE,
      }),
      listApiKeys: async ({ principal, query }) => ({
        status: 200,
        body: await apiKeys.list(principal.organizationId, { ...page(query), mode: query.mode }),
      }),
      revokeApiKey: async ({ principal, params }) => {
        await apiKeys.revoke(principal.organizationId, params.id);
        return { status: 204 };
      },

      // ------------------------------------------------------------ sso and scim audit trail
      listSsoAuditEvents: async ({ principal, query }) => ({ status: 200, body: await listSsoAudit(deps.db, principal.organizationId, page(query)) }),

      // ------------------------------------------------------------ sso connections and test logins (sso/)
      listSsoConnections: sso.dashboard.listSsoConnections,
      getSsoConnection: sso.dashboard.getSsoConnection,
      updateSsoConnectionSettings: sso.dashboard.updateSsoConnectionSettings,
      createSsoConnectionTest: sso.dashboard.createSsoConnectionTest,
      startSsoConnectionTest: sso.dashboard.startSsoConnectionTest,
      getSsoConnectionTest: sso.dashboard.getSsoConnectionTest,
      fetchSamlMetadata: sso.dashboard.fetchSamlMetadata,

      // ------------------------------------------------------------ scim (the /scim/v2 protocol is mounted above)
      getScim: scim.handlers.getScim,
      createScimToken: scim.handlers.createScimToken,
      revokeScimToken: scim.handlers.revokeScimToken,

      // ------------------------------------------------------------ settings, e-mail branding and logo
      getOrganizationSettings: branding.getOrganizationSettings,
      getEmailBranding: branding.getEmailBranding,
      updateEmailBranding: branding.updateEmailBranding,
      previewEmailBranding: branding.previewEmailBranding,
      uploadOrganizationLogo: branding.uploadOrganizationLogo,
    },
  });
  return { app, health: health as Health };
}
