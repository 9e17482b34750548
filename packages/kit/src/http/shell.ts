import express, { type Express, type Request, type Response, type NextFunction } from 'express';
import { pinoHttp } from 'pino-http';
import { AppError, isAppError, toProblem } from '../errors.ts';
import { requestIdMiddleware } from './request-id.ts';
import type { Logger } from '../log.ts';

export const PROBLEM_JSON = 'application/problem+json';

/** Raw bytes of a JSON body, kept for idempotency fingerprints. */
export function rawBodyOf(req: Request): Buffer | undefined {
  return (req as Request & { rawBody?: Buffer }).rawBody;
}

/** The common Express shell: request id, logs, JSON bodies (raw bytes kept), problem+json errors. */
export function createHttpShell(log: Logger, options: { jsonLimit?: string } = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(requestIdMiddleware);
  app.use(
    pinoHttp({
      logger: log,
      genReqId: (_req, res) => (res as Response).locals.requestId as string,
      customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'info' : 'debug'),
    }),
  );
  app.use(
    express.json({
      limit: options.jsonLimit ?? '1mb',
      type: ['application/json', 'application/*+json'],
      verify: (req, _res, buffer) => {
        (req as Request & { rawBody?: Buffer }).rawBody = buffer;
      },
    }),
  );
  return app;
}

export function sendProblem(res: Response, error: AppError): void {
  const requestId = String(res.locals.requestId ?? '');
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).type(PROBLEM_JSON).send(JSON.stringify(toProblem(error, requestId)));
}

/** Last middleware: anything thrown becomes problem+json; unknown errors are logged and hidden. */
export function problemErrorHandler(log: Logger) {
  return (error: unknown, req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) return next(error);
    sendProblem(res, toAppError(error, req, log));
  };
}

function toAppError(error: unknown, req: Request, log: Logger): AppError {
  if (isAppError(error)) return error;
  const httpError = error as { type?: string; status?: number; expose?: boolean };
  if (httpError.type === 'entity.parse.failed') {
    return new AppError('malformed-request', 'The request body is not valid JSON.', { errors: [{ pointer: '/body', detail: 'Invalid JSON.' }] });
  }
  if (httpError.type === 'entity.too.large') return new AppError('payload-too-large', 'The request body is too large.');
  if (httpError.type === 'encoding.unsupported' || httpError.type === 'charset.unsupported') {
    return new AppError('unsupported-media-type', 'The request body encoding is not supported.');
  }
  log.error({ err: error, path: req.path }, 'unhandled error');
  return new AppError('internal', 'An unexpected error occurred. Quote the requestId when contacting support.');
}

export function notFoundHandler(_req: Request, res: Response): void {
  sendProblem(res, new AppError('not-found', 'No operation exists at this path.'));
}
