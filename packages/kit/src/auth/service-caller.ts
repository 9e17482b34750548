import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError } from '../errors.ts';
import { sendProblem } from '../http/problem.ts';
import { PRINCIPAL_HEADER, unauthorized, type Mode, type Principal, type PrincipalSigner, type PrincipalVerifier } from './principal.ts';

/** An internal route's handler: its answers are never cached, and what it throws goes to the app's error renderer. */
export function internalRoute(handler: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      res.setHeader('cache-control', 'no-store');
      await handler(req, res);
    } catch (error) {
      next(error);
    }
  };
}

/**
 * Guards a service's internal routes (contracts between services, outside the public API): the request must carry a
 * principal token of `kind: 'service'` whose `actorId` is one of `callers`, else 401 with `detail`. The principal is
 * kept for the handler (`serviceCaller(res)`).
 */
export function requireServiceCaller(verify: PrincipalVerifier, callers: readonly string[], detail: string): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const token = req.headers[PRINCIPAL_HEADER];
      if (typeof token !== 'string') throw new Error('missing');
      const principal = await verify(token);
      if (principal.kind !== 'service' || !callers.includes(principal.actorId)) throw new Error('not a caller of these routes');
      res.locals.serviceCaller = principal;
    } catch {
      return sendProblem(res, unauthorized(detail));
    }
    next();
  };
}

/** The service principal `requireServiceCaller` let through. */
export function serviceCaller(res: Response): Principal {
  return res.locals.serviceCaller as Principal;
}

export interface ServiceClientOptions {
  /** The service called, for messages (`templates`). */
  target: string;
  /** This service: the principal's `actorId`, which the target's `requireServiceCaller` checks. */
  actorId: string;
  baseUrl: string;
  signPrincipal: PrincipalSigner;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface ServiceRequest {
  organizationId: string;
  mode: Mode;
  method?: string;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as it is, with `contentType`. */
  body?: Uint8Array;
  contentType?: string;
  timeoutMs?: number;
}

/**
 * Calls another service's internal routes as this service (a service principal signed with the internal key). A
 * target that does not answer is a 503 `service-unavailable`; any answer, whatever its status, is the caller's to read.
 */
export function createServiceClient(options: ServiceClientOptions): (path: string, request: ServiceRequest) => Promise<globalThis.Response> {
  const doFetch = options.fetch ?? fetch;
  return async (path, request) => {
    const principal: Principal = { kind: 'service', organizationId: request.organizationId, actorId: options.actorId, mode: request.mode, permissions: [] };
    const headers: Record<string, string> = { [PRINCIPAL_HEADER]: await options.signPrincipal(principal) };
    if (request.json !== undefined) headers['content-type'] = 'application/json';
    else if (request.body !== undefined) headers['content-type'] = request.contentType ?? 'application/octet-stream';
    try {
      return await doFetch(new URL(path, options.baseUrl), {
        method: request.method ?? 'GET',
        headers,
        body: request.json !== undefined ? JSON.stringify(request.json) : request.body,
        signal: AbortSignal.timeout(request.timeoutMs ?? options.timeoutMs ?? 10_000),
      });
    } catch (error) {
      throw new AppError('service-unavailable', `The ${options.target} service did not answer; try again.`, { cause: error });
    }
  };
}

/** Statuses that say the service is there but cannot serve right now: a caller may try again in a moment. */
const UNAVAILABLE_STATUSES = new Set([502, 503, 504]);

/**
 * What another service's unexpected answer means to this service's caller: 502, 503 or 504 is a 503
 * `service-unavailable` (a consumer retries it soon, bus/outage.ts), anything else a 502 `bad-gateway`. The answer's
 * body is kept as the cause, for the logs.
 */
export async function unexpectedAnswer(target: string, response: globalThis.Response, what = ''): Promise<AppError> {
  const detail = await response.text().catch(() => '');
  const cause = new Error(detail.slice(0, 500));
  const about = what ? ` for ${what}` : '';
  if (UNAVAILABLE_STATUSES.has(response.status)) {
    return new AppError('service-unavailable', `The ${target} service is unavailable (it answered ${response.status}${about}); try again.`, { cause });
  }
  return new AppError('bad-gateway', `The ${target} service answered ${response.status}${about}.`, { cause });
}
