import { readFileSync } from 'node:fs';
import type { JWK } from 'jose';
import { connectBus } from '@sigil/kit/bus';
import { createLogger } from '@sigil/kit/log';
import { createPrincipalSigner, createStrataPrincipalSigner } from '@sigil/kit/auth';
import { loadConfig } from '@sigil/kit/config';
import { runServer } from '@sigil/kit/http';
import { createGatewayApp } from './app.ts';
import { createAuthenticator } from './authenticator.ts';
import { gatewayConfigSchema, serviceUrlsOf, strataAuthOptionsOf, type GatewayConfig } from './config.ts';
import { balancedFetch, primaryOf } from './replicas.ts';
import { createDevIssuer } from './dev-issuer.ts';
import { createStrataAuthenticator } from './strata-auth.ts';
import { attachStrataTunnel } from './strata-tunnel.ts';

let config: GatewayConfig;
try {
  config = loadConfig(gatewayConfigSchema) as GatewayConfig;
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
const log = createLogger('gateway', config.LOG_LEVEL);

const signPrincipal = await createPrincipalSigner(config.INTERNAL_JWT_PRIVATE_KEY as JWK);
const serviceUrls = serviceUrlsOf(config);

// Strata: the access proxy's JWT is verified here; the dev issuer exists on the local stack only.
const devIssuer = config.STRATA_DEV_ISSUER
  ? await createDevIssuer({
      audience: config.STRATA_ACCESS_AUDIENCE[0] as string,
      privateJwk: config.STRATA_DEV_ISSUER_KEY as JWK | undefined,
      nodeEnv: config.NODE_ENV,
      cookieName: config.STRATA_ACCESS_COOKIE,
      trustedProxies: config.TRUSTED_PROXIES ?? (config.TRUST_PROXY ? 1 : 0),
    })
  : undefined;
if (devIssuer) log.warn({ issuer: devIssuer.issuer }, 'the Strata dev issuer is enabled: anyone can mint access tokens (local stack only)');
const strataAuthOptions = strataAuthOptionsOf(config, devIssuer?.trusted);
const strataAuthenticator = strataAuthOptions ? createStrataAuthenticator(strataAuthOptions) : undefined;
if (!strataAuthenticator) log.info('Strata authentication is not configured: /api/v1 answers 401');
const signStrataPrincipal = await createStrataPrincipalSigner(config.INTERNAL_JWT_PRIVATE_KEY as JWK);

const bus = await connectBus(config.NATS_URL, 'gateway');
// Credentials are checked at any replica of accounts (round robin); a tunnel holds one connection to one sandbox replica.
const accounts = serviceUrls.accounts;
const authenticator = createAuthenticator({ accountsUrl: accounts && primaryOf(accounts), fetch: accounts ? balancedFetch(accounts) : undefined, signPrincipal, log });
const revocations = await authenticator.subscribeRevocations(bus);
const gateway = await createGatewayApp({
  serviceUrls,
  signPrincipal,
  log,
  authenticator,
  supergraphSdl: readFileSync(new URL('../supergraph.graphql', import.meta.url), 'utf8'),
  trustedProxies: config.TRUSTED_PROXIES ?? (config.TRUST_PROXY ? 1 : 0),
  graphLimits: { maxDepth: config.GRAPHQL_MAX_DEPTH, maxCost: config.GRAPHQL_MAX_COST, maxAliases: config.GRAPHQL_MAX_ALIASES },
  strata: { authenticator: strataAuthenticator, signPrincipal: signStrataPrincipal, devIssuer },
  liveFeed: bus,
  dashboardDistDir: config.DASHBOARD_DIST_DIR,
  consoleDistDir: config.CONSOLE_DIST_DIR,
});
const running = await runServer({
  app: gateway.app,
  host: config.HOST,
  port: config.PORT,
  log,
  health: gateway.health,
  resources: [() => gateway.close(), async () => revocations.unsubscribe(), () => bus.close()],
});
attachStrataTunnel(running.server, { authenticator: strataAuthenticator, principalToken: signStrataPrincipal, sandboxUrl: serviceUrls.sandbox && primaryOf(serviceUrls.sandbox), log });
