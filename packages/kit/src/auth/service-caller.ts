import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { sendProblem } from '../http/problem.ts';
import { PRINCIPAL_HEADER, unauthorized, type Principal, type PrincipalVerifier } from './principal.ts';

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
