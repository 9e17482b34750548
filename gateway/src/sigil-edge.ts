import type { NextFunction, Request, Response } from 'express';
import { AppError, notImplemented } from '@sigil/kit/errors';
import { PRINCIPAL_HEADER, unauthorized, type Principal } from '@sigil/kit/auth';
import { REQUEST_ID_HEADER, sendProblem } from '@sigil/kit/http';
import type { Logger } from '@sigil/kit/log';
import { loadSigilOpenApi, type OperationInfo } from '@sigil/proto/openapi';
import type { ServiceUrls } from './replicas.ts';
import { isNotImplemented } from '@sigil/proto/unimplemented';
import type { Authenticator, ResolutionFailure } from './authenticator.ts';
import { crossOriginCookieRefusal, sigilCookieCarries } from './cookie-writes.ts';
import { MODE_HEADER, apiKeyOf, sessionTokenOf } from './credentials.ts';
import { forwardingFacts, headersForService } from './forwarding.ts';
import { createOperationMatcher } from './operations.ts';
import { forward, type Upstream } from './proxy.ts';

export type CallerRule = 'K' | 'D' | 'P';

export interface SigilEdgeDeps {
  serviceUrls: ServiceUrls;
  authenticator: Authenticator;
  /** Signs the resolved caller into `x-sigil-principal` (a token is re-used while it is fresh). */
  principalToken: (principal: Principal) => Promise<string>;
  upstream: Upstream;
  trustedProxies: number;
  log: Logger;
  /** Default: the contract's list (proto/src/unimplemented.ts). */
  isNotImplemented?: (operationId: string) => boolean;
}

const UNAUTHORIZED_DETAIL: Record<ResolutionFailure, string> = {
  malformed: 'The API key is malformed.',
  unknown: 'The API key is not valid.',
  revoked: 'The API key has been revoked.',
  expired: 'The API key has expired.',
};

/**
 * Sigil's public paths: matched against the contract (404/405 otherwise), the caller resolved by the operation's
 * `x-auth`, raw credentials removed, the principal signed into `x-sigil-principal`, streamed to the owning service.
 */
export function createSigilEdge(deps: SigilEdgeDeps) {
  const { serviceUrls, authenticator, log } = deps;
  const matcher = createOperationMatcher();
  const openApiJson = JSON.stringify(loadSigilOpenApi());
  /** The gateway's own operations (`x-service: gateway`). */
  const handlers: Record<string, (res: Response) => void> = {
    getOpenApiDocument: (res) => void res.status(200).type('application/json').send(openApiJson),
  };

  /** Resolves the caller by the rules of an auth kind; throws 401 for a bad API key on K. */
  async function resolveCaller(rule: CallerRule, req: Request): Promise<Principal | undefined> {
    const requestId = String(req.headers[REQUEST_ID_HEADER]);
    if (rule === 'K') {
      const apiKey = apiKeyOf(req.headers);
      if (apiKey.present) {
        const resolution = apiKey.key ? await authenticator.resolveApiKey(apiKey.key, { requestId }) : ({ principal: null, reason: 'malformed' } as const);
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

  async function handle(req: Request, res: Response, next: NextFunction): Promise<void> {
    try {
      const match = matcher.match(req.method, req.path);
      if (match.kind === 'not-found') return sendProblem(res, new AppError('not-found', 'No operation exists at this path.'));
      if (match.kind === 'method-not-allowed') {
        res.setHeader('allow', match.allowed.join(', '));
        return sendProblem(res, new AppError('method-not-allowed', `${req.method} is not allowed on this path.`));
      }
      const { operation, params } = match;
      res.locals.operationId = operation.operationId;
      res.locals.service = operation.service;
      if (operation.service === 'gateway') return serveLocally(operation, res);
      const crossOrigin = crossOriginCookieRefusal(req, sigilCookieCarries(operation.auth, req.headers));
      if (crossOrigin) return sendProblem(res, new AppError('forbidden', crossOrigin));

      const principal = operation.auth === 'S' || operation.auth === 'V' ? undefined : await resolveCaller(operation.auth, req);
      const baseUrl = serviceUrls[operation.service];
      if (!baseUrl) return sendProblem(res, unavailable(operation, deps.isNotImplemented ?? isNotImplemented));
      // Signer and viewer tokens belong to the signing service; every other Authorization is an API key.
      const headers = headersForService(req, { keepAuthorization: operation.auth === 'S' || operation.auth === 'V' });
      if (principal) headers[PRINCIPAL_HEADER] = await deps.principalToken(principal);
      Object.assign(headers, forwardingFacts(req, deps.trustedProxies));
      const sessionToken = sessionTokenOf(req.headers);
      forward(req, res, {
        baseUrl,
        headers,
        upstream: deps.upstream,
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
  }

  function serveLocally(operation: OperationInfo, res: Response): void {
    const handler = handlers[operation.operationId];
    if (!handler) return sendProblem(res, notImplemented('gateway', operation.operationId));
    handler(res);
  }

  /** Revocations made through this gateway apply to its own cache before the event even arrives. */
  function afterResponse(operation: OperationInfo, params: Record<string, string>, status: number, sessionToken: string | undefined): void {
    if (status < 200 || status >= 300) return;
    if (operation.operationId === 'revokeApiKey' && params.id) authenticator.evictApiKey(params.id);
    if (operation.operationId === 'signOut' && sessionToken) authenticator.evictSessionToken(sessionToken);
  }

  return { resolveCaller, handle };
}

/** A service this gateway has no address for: 501 for an operation nobody implements yet, else 503. */
function unavailable(operation: OperationInfo, unbuilt: (operationId: string) => boolean): AppError {
  if (unbuilt(operation.operationId)) return notImplemented(operation.service, operation.operationId);
  return new AppError('service-unavailable', `The ${operation.service} service is not available.`);
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
