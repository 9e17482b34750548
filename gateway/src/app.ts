import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { OutgoingHttpHeaders } from 'node:http';
import {
  AppError,
  PRINCIPAL_HEADER,
  REQUEST_ID_HEADER,
  mountHealth,
  problemErrorHandler,
  requestIdMiddleware,
  sendProblem,
  unauthorized,
  type Health,
  type Logger,
  type Principal,
  type PrincipalSigner,
  type StrataPrincipalSigner,
} from '@sigil/kit';
import {
  STRATA,
  isStrataService,
  loadSigilOpenApi,
  resolveService,
  type OperationInfo,
  type ServiceName,
  type StrataPrincipal,
} from '@sigil/proto';
import type { Authenticator, ResolutionFailure } from './authenticator.ts';
import { API_KEY_HEADER, MODE_HEADER, apiKeyOf, cookieWithoutSession, sessionTokenOf } from './credentials.ts';
import { DEV_ISSUER_PREFIX, type DevIssuer } from './dev-issuer.ts';
import { createFederatedGraph } from './graphql.ts';
import { createOperationMatcher } from './operations.ts';
import { createUpstream, endToEndHeaders, forward } from './proxy.ts';
import { sendStrataError, type StrataAuthenticator } from './strata-auth.ts';

/** What the gateway needs to serve Strata's console API (`/api/v1`). */
export interface StrataGatewayDeps {
  /** Verifies the access proxy's JWT. Absent: Strata authentication is not configured, `/api/v1` is 401. */
  authenticator?: StrataAuthenticator;
  /** Signs the resolved caller into `x-strata-principal` (same internal key as Sigil's principals). */
  signPrincipal: StrataPrincipalSigner;
  /** Local stack only: serves `/api/dev/jwks.json` and `/api/dev/token`. */
  devIssuer?: DevIssuer;
}

export interface GatewayDeps {
  /** Base URL of each service (`http://127.0.0.1:4101`). A service left out answers 503. */
  serviceUrls: Partial<Record<ServiceName, string>>;
  /** Signs the resolved caller into the short-lived internal principal token. */
  signPrincipal: PrincipalSigner;
  log: Logger;
  /** Resolves API keys and sessions (cached, with revocation). */
  authenticator: Authenticator;
  /** The composed supergraph (`gateway/supergraph.graphql`). */
  supergraphSdl: string;
  /**
   * Whether a proxy in front of the gateway sets `x-forwarded-*` (then they are extended, otherwise
   * replaced: a caller cannot claim another address). Default false.
   */
  trustProxy?: boolean;
  /** Strata's console API. Absent: every `/api/v1` request is 401 (not configured). */
  strata?: StrataGatewayDeps;
}

export interface GatewayApp {
  app: Express;
  health: Health;
  close(): Promise<void>;
}

type CallerRule = 'K' | 'D' | 'P';

const UNAUTHORIZED_DETAIL: Record<ResolutionFailure, string> = {
  malformed: 'The API key is malformed.',
  unknown: 'The API key is not valid.',
  revoked: 'The API key has been revoked.',
  expired: 'The API key has expired.',
};

/**
 * The single public entry. Every request: request id, spoofed principal dropped, matched against the
 * contract (404/405 otherwise), caller resolved by the operation's `x-auth`, raw credentials removed,
 * principal signed into `x-sigil-principal`, streamed to the owning service.
 */
export async function createGatewayApp(deps: GatewayDeps): Promise<GatewayApp> {
  const { serviceUrls, signPrincipal, log, authenticator } = deps;
  const matcher = createOperationMatcher();
  const upstream = createUpstream();
  const openApiJson = JSON.stringify(loadSigilOpenApi());

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

  const health = mountHealth(
    app,
    Object.fromEntries(
      Object.entries(serviceUrls).filter(([name, url]) => name !== 'gateway' && url).map(([name, url]) => [name, () => checkReady(url as string)]),
    ),
  );

  /** Resolves the caller by the rules of an auth kind; throws 401 for a bad API key on K. */
  async function resolveCaller(rule: CallerRule, req: Request): Promise<Principal | undefined> {
    const requestId = String(req.headers[REQUEST_ID_HEADER]);
    if (rule === 'K') {
      const apiKey = apiKeyOf(req.headers);
      if (apiKey.present) {
        const resolution = apiKey.key
          ? await authenticator.resolveApiKey(apiKey.key, { requestId })
          : ({ principal: null, reason: 'malformed' } as const);
        if (!resolution.principal) throw unauthorized(UNAUTHORIZED_DETAIL[resolution.reason]);
        return resolution.principal;
      }
    }
    const token = sessionTokenOf(req.headers);
    if (!token) return undefined;
    if (rule === 'P') {
      // Optional on public operations: a broken accounts service must not break them.
      try {
        const resolution = await authenticator.resolveSession(token, { requestId });
        return resolution.principal ? withSessionMode(resolution.principal, req) : undefined;
      } catch (error) {
        if (error instanceof AppError && error.code === 'validation-failed') throw error;
        log.warn({ err: error }, 'could not resolve the session of a public request');
        return undefined;
      }
    }
    // An unknown, revoked or expired session is forwarded without a principal: the service answers 401.
    const resolution = await authenticator.resolveSession(token, { requestId });
    return resolution.principal ? withSessionMode(resolution.principal, req) : undefined;
  }

  // Strata: the local dev issuer, then the console API. Both answer in Strata's `{ error }` shape.
  const devIssuer = deps.strata?.devIssuer;
  app.use((req, res, next) => {
    if (!isUnder(req.path, DEV_ISSUER_PREFIX)) return next();
    if (!devIssuer) return sendStrataError(res, 404, 'No operation exists at this path.');
    devIssuer.router(req, res, next);
  });
  app.use((req, res, next) => {
    if (!isUnder(req.path, STRATA.apiPrefix)) return next();
    serveStrata(req, res).catch((error: unknown) => {
      log.error({ err: error }, 'strata request failed');
      sendStrataError(res, 500, 'The gateway failed to handle the request.');
    });
  });

  const graph = await createFederatedGraph({
    supergraphSdl: deps.supergraphSdl,
    serviceUrls,
    signPrincipal,
    log,
    principalOf: (res) => res.locals.principal as Principal | undefined,
  });
  app.use(
    '/graphql',
    async (req, res, next) => {
      try {
        // Same rules as a K operation: a bad key is a 401 problem before GraphQL runs.
        res.locals.principal = await resolveCaller('K', req);
        next();
      } catch (error) {
        next(error);
      }
    },
    ...graph.handler,
  );

  app.use(async (req: Request, res: Response, next: NextFunction) => {
    try {
      const match = matcher.match(req.method, req.path);
      if (match.kind === 'not-found') return sendProblem(res, new AppError('not-found', 'No operation exists at this path.'));
      if (match.kind === 'method-not-allowed') {
        res.setHeader('allow', match.allowed.join(', '));
        return sendProblem(res, new AppError('method-not-allowed', `${req.method} is not allowed on this path.`));
      }
      const { operation, params } = match;
      res.locals.operationId = operation.operationId;

      if (operation.service === 'gateway') return serveLocally(operation, res);

      const principal = operation.auth === 'S' || operation.auth === 'V' ? undefined : await resolveCaller(operation.auth, req);
      const baseUrl = serviceUrls[operation.service];
      if (!baseUrl) {
        return sendProblem(res, new AppError('service-unavailable', `The ${operation.service} service is not available.`));
      }
      const headers = await forwardedHeaders(req, operation, principal);
      const sessionToken = sessionTokenOf(req.headers);
      forward(req, res, {
        baseUrl,
        headers,
        upstream,
        responseHeaders: { [REQUEST_ID_HEADER]: String(res.locals.requestId) },
        onResponse: (status) => afterResponse(operation, params, status, sessionToken),
        onUnreachable: (error) => {
          log.warn({ err: error, service: operation.service }, 'service unreachable');
          sendProblem(res, new AppError('bad-gateway', `The ${operation.service} service could not be reached.`));
        },
      });
    } catch (error) {
      next(error);
    }
  });

  app.use(problemErrorHandler(log));

  function serveLocally(operation: OperationInfo, res: Response): void {
    if (operation.operationId === 'getOpenApiDocument') {
      res.status(200).type('application/json').send(openApiJson);
      return;
    }
    sendProblem(res, new AppError('not-found', 'No operation exists at this path.'));
  }

  /** What the service sees: no raw credentials, no spoofed principal, the signed principal, forwarding facts. */
  async function forwardedHeaders(req: Request, operation: OperationInfo, principal: Principal | undefined): Promise<OutgoingHttpHeaders> {
    const headers = endToEndHeaders(req.headers);
    delete headers[PRINCIPAL_HEADER];
    delete headers.host;
    delete headers.expect; // 100-continue was handled between the client and the gateway
    delete headers[API_KEY_HEADER];
    const cookie = cookieWithoutSession(req.headers.cookie);
    if (cookie) headers.cookie = cookie;
    else delete headers.cookie;
    // Signer and viewer tokens belong to the signing service; every other Authorization is an API key.
    if (operation.auth !== 'S' && operation.auth !== 'V') delete headers.authorization;
    if (principal) headers[PRINCIPAL_HEADER] = await signPrincipal(principal);
    return Object.assign(headers, forwardingFacts(req));
  }

  /**
   * `/api/v1`: routed by the route table (sandboxes to `sandbox`, the rest to `backup-catalog`), the
   * access proxy's JWT verified here, the caller signed into `x-strata-principal`, streamed through.
   */
  async function serveStrata(req: Request, res: Response): Promise<void> {
    const service = strataServiceOf(req.path);
    res.locals.service = service;
    if (!service) return sendStrataError(res, 404, 'No operation exists at this path.');
    const baseUrl = serviceUrls[service];
    // The sandbox service may not exist in this deployment: its paths simply do not exist then.
    if (!baseUrl && service === 'sandbox') return sendStrataError(res, 404, 'No operation exists at this path.');

    const strata = deps.strata;
    if (!strata?.authenticator) return sendStrataError(res, 401, 'Strata authentication is not configured on this gateway.');
    const result = await strata.authenticator.authenticate(req.headers);
    let principal: StrataPrincipal | undefined;
    switch (result.kind) {
      case 'anonymous':
        break; // forwarded without a principal: the service answers 401 in its own words
      case 'authenticated':
        principal = result.principal;
        break;
      case 'invalid':
        return sendStrataError(res, 401, `The access token is invalid: ${result.reason}`);
      case 'no-role':
        return sendStrataError(res, 403, 'Your groups grant no Strata role.');
      case 'keys-unavailable':
        log.warn({ err: result.error }, "could not fetch the access proxy's keys");
        return sendStrataError(res, 502, "The access proxy's signing keys could not be fetched.");
    }
    if (!baseUrl) return sendStrataError(res, 503, `The ${service} service is not available.`);

    const headers = endToEndHeaders(req.headers);
    delete headers.host;
    delete headers.expect;
    // Services never see raw credentials: Strata's three, and Sigil's should a browser send them along.
    strata.authenticator.stripCredentials(headers);
    delete headers.authorization;
    delete headers[API_KEY_HEADER];
    const cookie = cookieWithoutSession(typeof headers.cookie === 'string' ? headers.cookie : undefined);
    if (cookie) headers.cookie = cookie;
    else delete headers.cookie;
    delete headers[PRINCIPAL_HEADER];
    delete headers[STRATA.principalHeader];
    if (principal) headers[STRATA.principalHeader] = await strata.signPrincipal(principal);
    Object.assign(headers, forwardingFacts(req));
    // Server-sent events (`GET /api/v1/events`) stay open for hours: no idle timeout on the client's
    // socket (the proxy itself sets none on the response, only on connecting upstream).
    if (req.path === `${STRATA.apiPrefix}/events` || String(req.headers.accept ?? '').includes('text/event-stream')) req.setTimeout(0);

    forward(req, res, {
      baseUrl,
      headers,
      upstream,
      responseHeaders: { [REQUEST_ID_HEADER]: String(res.locals.requestId) },
      onUnreachable: (error) => {
        log.warn({ err: error, service }, 'service unreachable');
        sendStrataError(res, 502, `The ${service} service could not be reached.`);
      },
    });
  }

  /** `x-request-id` and `x-forwarded-*`: extended behind a trusted proxy, replaced otherwise. */
  function forwardingFacts(req: Request): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = { [REQUEST_ID_HEADER]: String(req.headers[REQUEST_ID_HEADER]) };
    const client = req.socket.remoteAddress ?? '';
    const host = req.headers.host ?? '';
    const proto = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
    if (deps.trustProxy) {
      const prior = req.headers['x-forwarded-for'];
      headers['x-forwarded-for'] = prior ? `${String(prior)}, ${client}` : client;
      headers['x-forwarded-proto'] = req.headers['x-forwarded-proto'] ?? proto;
      headers['x-forwarded-host'] = req.headers['x-forwarded-host'] ?? host;
    } else {
      headers['x-forwarded-for'] = client;
      headers['x-forwarded-proto'] = proto;
      headers['x-forwarded-host'] = host;
    }
    return headers;
  }

  /** Revocations made through this gateway apply to its own cache before the event even arrives. */
  function afterResponse(operation: OperationInfo, params: Record<string, string>, status: number, sessionToken: string | undefined): void {
    if (status < 200 || status >= 300) return;
    if (operation.operationId === 'revokeApiKey' && params.id) authenticator.evictApiKey(params.id);
    if (operation.operationId === 'signOut' && sessionToken) authenticator.evictSessionToken(sessionToken);
  }

  return {
    app,
    health,
    close: async () => {
      await graph.stop();
      upstream.close();
    },
  };
}

/** Whether `path` is `prefix` or below it (segment-wise: `/api/v1x` is not under `/api/v1`). */
function isUnder(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * The Strata service owning a path under `/api/v1`, or undefined when it can never be routed: empty
 * segments (`//`, a trailing `/`), dot segments, encoded slashes, bad escapes (see `resolveService`).
 */
function strataServiceOf(path: string): 'backup-catalog' | 'sandbox' | undefined {
  if (path.split('/').slice(1).some((segment) => segment === '')) return undefined;
  const service = resolveService(path);
  return service && isStrataService(service) ? service : undefined;
}

/** Dashboard sessions act in live mode unless the request asks for test mode. */
function withSessionMode(principal: Principal, req: Request): Principal {
  if (principal.kind !== 'session') return principal;
  const header = req.headers[MODE_HEADER];
  if (header === undefined) return principal.mode === 'live' ? principal : { ...principal, mode: 'live' };
  if (header !== 'test' && header !== 'live') {
    throw new AppError('validation-failed', `Header ${MODE_HEADER} must be test or live.`, {
      errors: [{ pointer: `/header/${MODE_HEADER}`, detail: 'must be test or live' }],
    });
  }
  return principal.mode === header ? principal : { ...principal, mode: header };
}

async function checkReady(baseUrl: string): Promise<void> {
  const response = await fetch(`${baseUrl.replace(/\/+$/, '')}/readyz`, { signal: AbortSignal.timeout(2000) });
  await response.body?.cancel();
  if (!response.ok) throw new Error(`readyz answered ${response.status}`);
}

function accessLog(log: Logger, req: Request, res: Response): void {
  const started = process.hrtime.bigint();
  const path = req.path; // never the query: viewer tokens travel there
  const method = req.method;
  res.on('close', () => {
    const entry = {
      requestId: res.locals.requestId,
      method,
      path,
      operationId: res.locals.operationId,
      service: res.locals.service,
      status: res.statusCode,
      aborted: !res.writableFinished,
      ms: Number(process.hrtime.bigint() - started) / 1e6,
    };
    if (res.statusCode >= 500) log.error(entry, 'request');
    else if (res.statusCode >= 400) log.info(entry, 'request');
    else log.debug(entry, 'request');
  });
}
