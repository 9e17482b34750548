import type { Request } from 'express';
import type { OperationHandlers, PublicOperationHandlers } from '@sigil/kit/api';
import { clientAddress, type Resolver } from '@sigil/kit/http';
import type { EntitlementsCache } from '@sigil/kit/entitlements';
import type { Logger } from '@sigil/kit/log';
import type { Db } from '../db.ts';
import type { Throttle, ThrottleRule } from '../throttle.ts';
import { requireEmail } from '../views.ts';
import { bindingFor, sameBrowser } from './browser-binding.ts';
import { createConnectionService } from './connections.ts';
import { parseIdpMetadata } from './idp-metadata.ts';
import { createLogins } from './logins.ts';
import { fetchMetadataXml, createSsoOutbound } from './outbound.ts';
import { ephemeralSecretsKey } from './secrets.ts';
import { createTestLogins } from './test-logins.ts';

export interface SsoOptions {
  /** Origins fetched whatever they resolve to, plain http allowed (`SSO_ALLOWED_ORIGINS`: a local IdP). */
  allowedOrigins?: string[];
  /** Seals OIDC client secrets (secrets.ts); default a key of this process only (tests). */
  secretsKey?: Buffer;
  /** DNS for the public fetch (tests stub it). */
  resolve?: Resolver;
  /** Discovery and sign-in starts per address (default 30 a minute). */
  lookupLimit?: ThrottleRule;
}

export interface SsoDeps {
  db: Db;
  log: Logger;
  throttle: Throttle;
  entitlements: EntitlementsCache;
  publicUrl: string;
  clock: () => Date;
  options?: SsoOptions;
}

const NO_STORE = { 'cache-control': 'no-store' };

const callbackOf = (req: Request) => ({ ip: clientAddress(req), sameBrowser: (browserHash: string) => sameBrowser(req, browserHash) });

/** SSO's operations: connections, tests and metadata (dashboard), and the public sign-in flow. */
export function createSsoHandlers(deps: SsoDeps) {
  const outbound = createSsoOutbound({ allowedOrigins: deps.options?.allowedOrigins, resolve: deps.options?.resolve });
  const secretsKey = deps.options?.secretsKey ?? ephemeralSecretsKey();
  const common = { db: deps.db, publicUrl: deps.publicUrl, clock: deps.clock };
  const connections = createConnectionService({ ...common, entitlements: deps.entitlements, outbound, secretsKey });
  const logins = createLogins({ ...common, throttle: deps.throttle, outbound, secretsKey, log: deps.log, lookupLimit: deps.options?.lookupLimit });
  const tests = createTestLogins({ ...common, connections, logins });

  return {
    dashboard: {
      listSsoConnections: async ({ principal }) => ({ status: 200, body: await connections.list(principal.organizationId) }),
      getSsoConnection: async ({ principal, params }) => ({ status: 200, body: await connections.get(principal.organizationId, params.providerId) }),
      updateSsoConnectionSettings: async ({ principal, params, body, req }) => ({
        status: 200,
        body: await connections.save(principal, params.providerId, body, clientAddress(req)),
      }),
      createSsoConnectionTest: async ({ principal, params }) => ({ status: 201, body: await tests.create(principal, params.providerId), headers: NO_STORE }),
      getSsoConnectionTest: async ({ principal, params }) => ({
        status: 200,
        body: await tests.get(principal.organizationId, params.providerId, params.testId),
        headers: NO_STORE,
      }),
      startSsoConnectionTest: async ({ principal, params, req }) => tests.start(principal.organizationId, params.providerId, params.testId, bindingFor(req)),
      fetchSamlMetadata: async ({ body }) => {
        const xml = await fetchMetadataXml(outbound, body.url, '/body/url');
        const metadata = await parseIdpMetadata(xml, '/body/url');
        return {
          status: 200,
          body: { object: 'saml_metadata' as const, xml, entityId: metadata.entityId, ssoUrl: metadata.ssoUrl, certificateExpiresAt: metadata.certificateExpiresAt?.toISOString() ?? null },
        };
      },
    } satisfies OperationHandlers,
    public: {
      discoverSso: async ({ req, query }) => {
        const { headers, body } = await logins.discover(requireEmail(query.email, '/query/email'), clientAddress(req));
        return { status: 200, body, headers: { ...headers, ...NO_STORE } };
      },
      startSsoSignIn: async ({ req, query }) => logins.startSignIn(requireEmail(query.email, '/query/email'), clientAddress(req), bindingFor(req), query.next),
      completeSamlSso: async ({ req, body }) => logins.completeSaml(body as unknown as { SAMLResponse: string; RelayState?: string }, callbackOf(req)),
      completeOidcSso: async ({ req, query }) => logins.completeOidc(query as Record<string, string | undefined>, callbackOf(req)),
      getSsoServiceProviderMetadata: async ({ params }) => logins.serviceProviderMetadata(params.organizationId, params.providerId),
    } satisfies PublicOperationHandlers,
  };
}
