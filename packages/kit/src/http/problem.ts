import type { Request, Response, NextFunction } from 'express';
import { AppError, isAppError, toProblem } from '../errors.ts';
import type { Logger } from '../log.ts';
import { isDependencyUnavailable } from './dependency-down.ts';

export const PROBLEM_JSON = 'application/problem+json';

/** Sigil's error rendering: RFC 9457 problem+json with the request id. */
export function sendProblem(res: Response, error: AppError): void {
  const requestId = String(res.locals.requestId ?? '');
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).type(PROBLEM_JSON).send(JSON.stringify(toProblem(error, requestId)));
}

/** Last middleware of a problem+json app: anything thrown becomes a problem; unknown errors are logged and hidden. */
export function problemErrorHandler(log: Logger) {
  return (error: unknown, req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) return next(error);
    sendProblem(res, toAppError(error, req, log));
  };
}

/** What an error thrown while handling a request means to the caller: body-parser's failures get their own codes. */
export function toAppError(error: unknown, req: Request, log: Logger): AppError {
  if (isAppError(error)) return error;
  const httpError = error as { type?: string; limit?: number };
  if (httpError.type === 'entity.parse.failed') {
    return new AppError('malformed-request', 'The request body is not valid JSON.', { errors: [{ pointer: '/body', detail: 'Invalid JSON.' }] });
  }
  if (httpError.type === 'entity.too.large') {
    const limit = typeof httpError.limit === 'number' ? ` (the limit is ${formatBytes(httpError.limit)})` : '';
    return new AppError('payload-too-large', `The request body is too large${limit}.`);
  }
  if (httpError.type === 'encoding.unsupported' || httpError.type === 'charset.unsupported') {
    return new AppError('unsupported-media-type', 'The request body encoding is not supported.');
  }
  if (isDependencyUnavailable(error)) {
    log.warn({ err: error, path: req.path }, 'a dependency is unavailable');
    return new AppError('service-unavailable', 'The service cannot reach what it depends on right now; try again in a few seconds.', { headers: { 'Retry-After': '5' }, cause: error });
  }
  log.error({ err: error, path: req.path }, 'unhandled error');
  return new AppError('internal', `An unexpected error occurred; quote request ${String(req.headers['x-request-id'] ?? '')} when contacting support.`);
}

function formatBytes(bytes: number): string {
  if (bytes % 1048576 === 0) return `${bytes / 1048576} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
