import express, { type Express, type Request, type Response } from 'express';
import type { Principal, PrincipalSigner } from '@sigil/kit/auth';
import { PRINCIPAL_HEADER } from '@sigil/kit/auth';
import { AppError } from '@sigil/kit/errors';
import { REQUEST_ID_HEADER, mountHealth, problemErrorHandler, requestIdMiddleware, transportSecurity, type Health } from '@sigil/kit/http';
import type { Logger } from '@sigil/kit/log';
import { STRATA, type StrataPrincipal } from '@sigil/proto/strata';
import type { Authenticator } from './authenticator.ts';
import type { FederatedGraph, GraphLimits } from './graphql.ts';
import { reuseSignedTokens } from './principal-tokens.ts';
import { consoleRouter } from './console.ts';
import { crossOriginCookieRefusal, sigilCookieCarries, strataCookieCarries } from './cookie-writes.ts';
import { dashboardRouter, type LiveFeed } from './dashboard.ts';
import { createUpstream } from './proxy.ts';
import { replicasOf, type ServiceTarget, type ServiceUrls } from './replicas.ts';
import { createSigilEdge } from './sigil-edge.ts';
import { createScimEdge } from './scim-edge.ts';
import { signingPageRouter } from './signing-page.ts';
import { verifyPageRouter } from './verify-page.ts';
import { linkPageRouter, viewerPageRouter } from './hosted-pages.ts';
import { createStrataEdge, type StrataGatewayDeps } from './strata-edge.ts';
import { strataRefusal, type StrataAuthenticator } from './strata-auth.ts';

export type { StrataGatewayDeps };

export interface GatewayDeps {
  /** Base URL of each service (`http://127.0.0.1:4101`), or of each of its replicas. A service left out answers 503. */
  serviceUrls: ServiceUrls;
  /** Signs the resolved caller into the short-lived internal principal token. */
  signPrincipal: PrincipalSigner;
  log: Logger;
  /** Resolves API keys and sessions (cached, with revocation). */
  authenticator: Authenticator;
  /** The composed supergraph (`gateway/supergraph.graphql`). */
  supergraphSdl: string;
  /**
   * How many proxies in front of the gateway add X-Forwarded-For hops we believe (default 0: the caller's own
   * X-Forwarded-For is ignored). `trustProxy: true` means 1.
   */
  trustedProxies?: number;
  trustProxy?: boolean;
  /** Depth, cost and alias limits of GraphQL queries. */
  graphLimits?: Partial<GraphLimits>;
  /** Strata's console API. Absent: every `/api/v1` request is 401 (not configured). */
  strata?: StrataGatewayDeps;
  /** The domain events the dashboard's live stream (`/app/live`) relays. Absent: that stream answers 503. */
  liveFeed?: LiveFeed;
  /** The dashboard's built files; default apps/dashboard/dist. */
  dashboardDistDir?: string;
  /** The console's built files; default apps/console/dist. */
  consoleDistDir?: string;
  /** Which operations (Sigil's and Strata's) no service implements yet (501 when their service has no address); default the contracts' list. */
  isNotImplemented?: (operationId: string) => boolean;
}

export interface GatewayApp {
  app: Express;
  health: Health;
  close(): Promise<void>;
}

/**
 * The single public entry. Every request: request id, spoofed principals dropped, access log; then Strata's paths,
 * GraphQL, and Sigil's contract.
 */
export async function createGatewayApp(deps: GatewayDeps): Promise<GatewayApp> {
  const { serviceUrls, log } = deps;
  const upstream = createUpstream();
  const trustedProxies = deps.trustedProxies ?? (deps.trustProxy ? 1 : 0);
  const sigilToken = reuseSignedTokens<Principal>(deps.signPrincipal);
  const sigil = createSigilEdge({ serviceUrls, authenticator: deps.authenticator, principalToken: sigilToken, upstream, trustedProxies, log, isNotImplemented: deps.isNotImplemented });
  const strataSigner = deps.strata?.signPrincipal;
  const strataToken = strataSigner ? reuseSignedTokens<StrataPrincipal>(strataSigner) : async () => Promise.reject(new Error('no Strata signer'));
  const strataAuthenticator = deps.strata?.authenticator;
  const strata = createStrataEdge({
    strata: deps.strata,
    serviceUrls,
    principalToken: strataToken,
    upstream,
    trustedProxies,
    log,
    isNotImplemented: deps.isNotImplemented,
  });

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(requestIdMiddleware);
  app.use((req, res, next) => {
    // Anti-spoofing: only the gateway mints principals.
    delete req.headers[PRINCIPAL_HEADER];
    delete req.headers[STRATA.principalHeader];
    accessLog(log, req, res);
    next();
  });
  app.use(transportSecurity(trustedProxies));
  const health = mountHealth(
    app,
    Object.fromEntries(
      Object.entries(serviceUrls).filter(([name, url]) => name !== 'gateway' && url).map(([name, url]) => [name, () => checkReady(url as ServiceTarget)]),
    ),
  );
  app.use(strata.handle);
  app.use(createScimEdge({ serviceUrls, upstream, trustedProxies, log }));
  app.use('/sign', signingPageRouter());
  app.use('/verify', verifyPageRouter());
  app.use('/view', viewerPageRouter());
  app.use('/l', linkPageRouter());
  const dashboard = dashboardRouter({ feed: deps.liveFeed, distDir: deps.dashboardDistDir, sessionOf: (req) => sigil.resolveCaller('D', req), log });
  app.use('/app', dashboard.router);
  app.use('/console', consoleRouter({ distDir: deps.consoleDistDir }));

  // Apollo Gateway and its query planner (~60 MiB once loaded) come with the first GraphQL request: most traffic is
  // REST, and a process that never serves GraphQL never pays for it.
  let graph: Promise<{ graph: FederatedGraph; router: express.Router }> | undefined;
  const loadGraph = () =>
    (graph ??= import('./graphql.ts')
      .then(({ createFederatedGraph }) =>
        createFederatedGraph({
          supergraphSdl: deps.supergraphSdl,
          serviceUrls,
          principalToken: sigilToken,
          log,
          limits: deps.graphLimits,
          principalOf: (res) => res.locals.principal as Principal | undefined,
          strata: strataAuthenticator && { principalOf: (res) => res.locals.strataPrincipal as StrataPrincipal | undefined, principalToken: strataToken },
        }),
      )
      .then((loaded) => ({ graph: loaded, router: express.Router().use(...loaded.handler) }))
      .catch((error: unknown) => {
        graph = undefined;
        throw error;
      }));
  app.use('/graphql', async (req, res, next) => {
    try {
      // Same rules as a K operation: a bad key is a 401 problem before GraphQL runs, and so is a bad access token;
      // a cookie (either product's) from another origin is a 403 (CSRF, cookie-writes.ts).
      const crossOrigin = crossOriginCookieRefusal(req, sigilCookieCarries('K', req.headers) || strataCookieCarries(strataAuthenticator, req.headers));
      if (crossOrigin) throw new AppError('forbidden', crossOrigin);
      res.locals.principal = await sigil.resolveCaller('K', req);
      res.locals.strataPrincipal = strataAuthenticator && (await strataCallerOf(strataAuthenticator, req, log));
      (await loadGraph()).router(req, res, next);
    } catch (error) {
      next(error);
    }
  });
  app.use((req, res, next) => void sigil.handle(req, res, next));
  app.use(problemErrorHandler(log));

  return {
    app,
    health,
    close: async () => {
      dashboard.close();
      await (await graph?.catch(() => undefined))?.graph.stop();
      await upstream.close();
    },
  };
}

/** A GraphQL request's Strata caller: its access token judged as on `/api/v1`, a refusal thrown as a problem. */
async function strataCallerOf(authenticator: StrataAuthenticator, req: Request, log: Logger): Promise<StrataPrincipal | undefined> {
  const result = await authenticator.authenticate(req.headers);
  const refusal = strataRefusal(result, log, req.headers[REQUEST_ID_HEADER]);
  if (refusal) throw new AppError(REFUSAL_CODES[refusal.status], refusal.message);
  return result.kind === 'authenticated' ? result.principal : undefined;
}

const REFUSAL_CODES = { 401: 'unauthorized', 403: 'forbidden', 502: 'bad-gateway' } as const;

/** A service is ready when one of its replicas is: the gateway routes around the others. */
async function checkReady(target: ServiceTarget): Promise<void> {
  await Promise.any(
    replicasOf(target).map(async (baseUrl) => {
      const response = await fetch(`${baseUrl.replace(/\/+$/, '')}/readyz`, { signal: AbortSignal.timeout(2000) });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`readyz answered ${response.status}`);
    }),
  ).catch((error: unknown) => {
    throw error instanceof AggregateError ? error.errors[0] : error;
  });
}

/** One line per request, at debug below 400: method, path (never the query: viewer tokens travel there), outcome. */
function accessLog(log: Logger, req: Request, res: Response): void {
  const started = process.hrtime.bigint();
  const path = req.path;
  const method = req.method;
  res.on('close', () => {
    const level = res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'info' : 'debug';
    if (!log.isLevelEnabled(level)) return;
    log[level](
      {
        requestId: res.locals.requestId,
        method,
        path,
        operationId: res.locals.operationId,
        service: res.locals.service,
        status: res.statusCode,
        aborted: !res.writableFinished,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
      },
      'request',
    );
  });
}
