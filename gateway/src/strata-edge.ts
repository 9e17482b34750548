import type { NextFunction, Request, Response } from 'express';
import type { StrataPrincipalSigner } from '@sigil/kit/auth';
import { notImplemented } from '@sigil/kit/errors';
import { REQUEST_ID_HEADER } from '@sigil/kit/http';
import type { Logger } from '@sigil/kit/log';
import { loadStrataOpenApi } from '@sigil/proto/strata-openapi';
import type { OpenApiDocument } from '@sigil/proto/openapi';
import { isStrataService, resolveService } from '@sigil/proto/routes';
import type { ServiceUrls } from './replicas.ts';
import { STRATA, type StrataPrincipal } from '@sigil/proto/strata';
import { isNotImplemented } from '@sigil/proto/unimplemented';
import { crossOriginCookieRefusal, strataCookieCarries } from './cookie-writes.ts';
import { DEV_ISSUER_PREFIX, type DevIssuer } from './dev-issuer.ts';
import { forwardingFacts, headersForService } from './forwarding.ts';
import { createOperationMatcher } from './operations.ts';
import { forward, type Upstream } from './proxy.ts';
import { sendStrataError, strataRefusal, type StrataAuthenticator } from './strata-auth.ts';

/** What the gateway needs to serve Strata's console API (`/api/v1`). */
export interface StrataGatewayDeps {
  /** Verifies the access proxy's JWT. Absent: Strata authentication is not configured, `/api/v1` is 401. */
  authenticator?: StrataAuthenticator;
  /** Signs the resolved caller into `x-strata-principal` (same internal key as Sigil's principals). */
  signPrincipal: StrataPrincipalSigner;
  /** Local stack only: serves `/api/dev/jwks.json` and `/api/dev/token`. */
  devIssuer?: DevIssuer;
}

export interface StrataEdgeDeps {
  strata: StrataGatewayDeps | undefined;
  serviceUrls: ServiceUrls;
  principalToken: (principal: StrataPrincipal) => Promise<string>;
  upstream: Upstream;
  trustedProxies: number;
  log: Logger;
  /** Default: the contract's list (proto/src/unimplemented.ts). */
  isNotImplemented?: (operationId: string) => boolean;
}

/**
 * `/api/v1`: routed by the route table (sandboxes to `sandbox`, the rest to `backup-catalog`), the access proxy's JWT
 * verified here, the caller signed into `x-strata-principal`, streamed through. Answers in Strata's `{ error }` shape.
 */
export function createStrataEdge(deps: StrataEdgeDeps) {
  const { log } = deps;
  const contract = createOperationMatcher(loadStrataOpenApi() as unknown as OpenApiDocument);
  const devIssuer = deps.strata?.devIssuer;

  async function serve(req: Request, res: Response): Promise<void> {
    const service = strataServiceOf(req.path);
    res.locals.service = service;
    if (!service) return sendStrataError(res, 404, 'No operation exists at this path.');
    const baseUrl = deps.serviceUrls[service];
    const match = contract.match(req.method, req.path.slice(STRATA.apiPrefix.length));
    const listed = match.kind === 'operation';
    if (!baseUrl && !listed) return sendStrataError(res, 404, 'No operation exists at this path.');

    const strata = deps.strata;
    if (!strata?.authenticator) return sendStrataError(res, 401, 'Strata authentication is not configured on this gateway.');
    const crossOrigin = crossOriginCookieRefusal(req, strataCookieCarries(strata.authenticator, req.headers));
    if (crossOrigin) return sendStrataError(res, 403, crossOrigin);
    const result = await strata.authenticator.authenticate(req.headers);
    const refusal = strataRefusal(result, log, res.locals.requestId);
    if (refusal) return sendStrataError(res, refusal.status, refusal.message);
    // An anonymous caller is forwarded without a principal: the service answers 401 in its own words.
    const principal = result.kind === 'authenticated' ? result.principal : undefined;
    // A listed operation whose service is not running here: the same 503 as Sigil's (501 for one nobody implements).
    if (!baseUrl) {
      if (match.kind === 'operation' && (deps.isNotImplemented ?? isNotImplemented)(match.operation.operationId)) {
        const error = notImplemented(service, match.operation.operationId);
        return sendStrataError(res, error.status, error.message);
      }
      return sendStrataError(res, 503, `The ${service} service is not available.`);
    }

    // Services never see raw credentials: Strata's three, and Sigil's should a browser send them along.
    const headers = headersForService(req, { keepAuthorization: false });
    strata.authenticator.stripCredentials(headers);
    if (principal) headers[STRATA.principalHeader] = await deps.principalToken(principal);
    Object.assign(headers, forwardingFacts(req, deps.trustedProxies));
    // Server-sent events (`GET /api/v1/events`) stay open for hours: no idle timeout on the client's socket.
    if (req.path === `${STRATA.apiPrefix}/events` || String(req.headers.accept ?? '').includes('text/event-stream')) req.setTimeout(0);
    forward(req, res, {
      baseUrl,
      headers,
      upstream: deps.upstream,
      responseHeaders: { [REQUEST_ID_HEADER]: String(res.locals.requestId) },
      onUnreachable: (error) => {
        log.warn({ err: error, service }, 'service unreachable');
        sendStrataError(res, 502, `The ${service} service could not be reached.`);
      },
    });
  }

  return {
    /** The local dev issuer, then the console API. */
    handle(req: Request, res: Response, next: NextFunction): void {
      if (isUnder(req.path, DEV_ISSUER_PREFIX)) {
        if (!devIssuer) return sendStrataError(res, 404, 'No operation exists at this path.');
        devIssuer.router(req, res, next);
        return;
      }
      if (!isUnder(req.path, STRATA.apiPrefix)) return next();
      serve(req, res).catch((error: unknown) => {
        log.error({ err: error }, 'strata request failed');
        sendStrataError(res, 500, 'The gateway failed to handle the request.');
      });
    },
  };
}

/** Whether `path` is `prefix` or below it (segment-wise: `/api/v1x` is not under `/api/v1`). */
function isUnder(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * The Strata service owning a path under `/api/v1`, or undefined when it can never be routed: empty segments (`//`, a
 * trailing `/`), dot segments, encoded slashes, bad escapes (see `resolveService`).
 */
function strataServiceOf(path: string): 'backup-catalog' | 'sandbox' | undefined {
  if (path.split('/').slice(1).some((segment) => segment === '')) return undefined;
  const service = resolveService(path);
  return service && isStrataService(service) ? service : undefined;
}
