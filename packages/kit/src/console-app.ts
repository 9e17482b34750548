import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { pinoHttp } from 'pino-http';
import { parseAllDocuments } from 'yaml';
import type { Context, OpenAPIBackend, Request as OpenApiRequest } from 'openapi-backend';
import {
  listStrataOperations,
  loadStrataOpenApi,
  roleAtLeast,
  STRATA,
  type StrataOperationInfo as StrataOperation,
  type StrataPrincipal,
} from '@sigil/proto';
import { AppError, isAppError } from './errors.ts';
import { requestIdMiddleware } from './request-id.ts';
import { STRATA_PRINCIPAL_HEADER, type StrataPrincipalVerifier } from './strata-principal.ts';
import { toFieldError, type ValidationIssue } from './service-app.ts';
import { createOpenApiBackend, sendReply, type Reply } from './openapi-backend.ts';
import type { Logger } from './logger.ts';

/**
 * The Express app of a Strata service: handlers bound to operationIds of proto/openapi/strata.v1.yaml,
 * 401 / 403 (x-strata-role) / 400 (the document) checked in that order, every error `{ "error": "..." }`.
 */

export interface ConsoleContext {
  req: Request;
  res: Response;
  operation: StrataOperation;
  principal: StrataPrincipal;
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  /** The caller's address: the first x-forwarded-for entry the gateway passed on, else the socket peer. */
  from: string;
  log: Logger;
  /** What the audit record of this write names as its object (a backup or restore name, say). */
  setAuditObject(object: string, detail?: Record<string, unknown>): void;
}

export type ConsoleHandler = (ctx: ConsoleContext) => Promise<Reply | void>;

export interface WriteRecord {
  time: Date;
  user: string;
  role: string;
  action: string;
  target: string;
  object: string;
  outcome: string;
  from: string;
  detail: Record<string, unknown>;
}

export interface ConsoleAppOptions {
  service: 'backup-catalog' | 'sandbox';
  log: Logger;
  verifyPrincipal: StrataPrincipalVerifier;
  handlers: Record<string, ConsoleHandler>;
  /** Routes outside the contract (health, internal), mounted first. */
  mount?: (app: Express) => void | Promise<void>;
  /** Called once per write (any method but GET/HEAD) by an authenticated caller, whatever its outcome. */
  recordWrite?: (record: WriteRecord) => Promise<void>;
}

const STRATA_PREFIX = STRATA.apiPrefix;
const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];

/** YAML bodies become JSON values before validation: one document as itself, several as an array. */
function parseYamlBody(text: string): unknown {
  const values: unknown[] = [];
  for (const [index, doc] of parseAllDocuments(text).entries()) {
    const error = doc.errors[0];
    if (error) throw new AppError('validation-failed', `body: document ${index + 1}: ${error.message.split('\n')[0]}`);
    const value = doc.toJSON() as unknown;
    if (value !== null && value !== undefined) values.push(value);
  }
  return values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
}
const AUDIT = Symbol('audit');

export async function createConsoleApp(options: ConsoleAppOptions): Promise<Express> {
  const { log, service } = options;
  const definition = loadStrataOpenApi();
  const operations = new Map(listStrataOperations(definition).map((op) => [op.operationId, op]));
  for (const operationId of Object.keys(options.handlers)) {
    const op = operations.get(operationId);
    if (!op) throw new Error(`Handler ${operationId} does not match any Strata operation`);
    if (op.service !== service) throw new Error(`Operation ${operationId} belongs to ${op.service}, not ${service}`);
  }
  const api = createOpenApiBackend(definition);
  const principalOf = (req: Request) => resolvePrincipal(options.verifyPrincipal, req);
  const authenticated = async (_c: Context, req: Request) => Boolean(await principalOf(req).catch(() => undefined));
  for (const scheme of ['accessJWT', 'accessToken', 'accessCookie']) api.registerSecurityHandler(scheme, authenticated);

  const bound: Record<string, (c: Context, req: Request, res: Response) => Promise<void>> = {};
  for (const [operationId, handler] of Object.entries(options.handlers)) {
    const op = operations.get(operationId) as StrataOperation;
    bound[operationId] = async (c, req, res) => {
      const principal = (await principalOf(req)) as StrataPrincipal;
      const reply = await handler({
        req,
        res,
        operation: op,
        principal,
        params: c.request.params as Record<string, string>,
        query: { ...(c.request.query as Record<string, unknown>) },
        body: req.body,
        from: sourceAddress(req),
        log: (req as Request & { log: Logger }).log,
        setAuditObject: (object, detail) => {
          auditState(res).object = object;
          if (detail) Object.assign(auditState(res).detail, detail);
        },
      });
      if (reply) sendReply(res, reply);
    };
  }
  const notFound = async () => {
    throw new AppError('not-found', 'No operation exists at this path.');
  };
  api.register({
    ...bound,
    unauthorizedHandler: async () => {
      throw new AppError('unauthorized', 'Valid access credentials are required.');
    },
    postSecurityHandler: async (c: Context, req: Request) => {
      const op = operations.get(c.operation.operationId as string);
      const principal = await principalOf(req).catch(() => undefined);
      if (!c.security?.authorized || !principal || !op) return;
      if (!roleAtLeast(principal.role, op.role)) {
        throw new AppError('forbidden', `This operation needs the role ${op.role}; you are ${principal.role}.`);
      }
    },
    validationFail: async (c: Context) => {
      throw validationError((c.validation.errors ?? []) as unknown as ValidationIssue[]);
    },
    notFound,
    notImplemented: notFound,
    methodNotAllowed: async (_c: Context, req: Request) => {
      throw new AppError('method-not-allowed', `${req.method} is not allowed on this path.`);
    },
  });
  await api.init();

  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('trust proxy', false);
  app.use(requestIdMiddleware);
  app.use(pinoHttp({ logger: log, genReqId: (_req, res) => (res as Response).locals.requestId as string, autoLogging: { ignore: (req) => req.url === '/healthz' } }));
  await options.mount?.(app);
  app.use(STRATA_PREFIX, express.json({ limit: '2mb', type: ['application/json', 'application/*+json'] }));
  app.use(STRATA_PREFIX, express.text({ limit: '2mb', type: YAML_TYPES }));
  app.use(STRATA_PREFIX, (req, res, next) => {
    const path = req.path;
    if (options.recordWrite && req.method !== 'GET' && req.method !== 'HEAD') {
      res.on('finish', () => void recordWrite(options, operations, api, req, path, res, principalOf));
    }
    const headers = { ...req.headers } as Record<string, string | string[]>;
    if (typeof req.body === 'string' && YAML_TYPES.includes(String(req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '')) {
      req.body = parseYamlBody(req.body);
      headers['content-type'] = 'application/json';
    }
    const request: OpenApiRequest = { method: req.method, path, query: req.query as Record<string, string | string[]>, headers, body: req.body };
    api.handleRequest(request, req, res).catch(next);
  });
  app.use((_req, res) => sendError(res, new AppError('not-found', 'No operation exists at this path.')));
  app.use(consoleErrorHandler(log));
  return app;
}

function auditState(res: Response): { object: string; detail: Record<string, unknown>; error?: string } {
  const holder = res as Response & { [AUDIT]?: { object: string; detail: Record<string, unknown>; error?: string } };
  holder[AUDIT] ??= { object: '', detail: {} };
  return holder[AUDIT];
}

async function recordWrite(
  options: ConsoleAppOptions,
  operations: Map<string, StrataOperation>,
  api: OpenAPIBackend,
  req: Request,
  path: string,
  res: Response,
  principalOf: (req: Request) => Promise<StrataPrincipal | undefined>,
): Promise<void> {
  const principal = await principalOf(req).catch(() => undefined);
  if (!principal) return;
  const match = api.router.matchOperation({ method: req.method, path, headers: {}, query: {} } as OpenApiRequest);
  const operationId = match?.operationId ?? `${req.method} ${path}`;
  const params = match ? api.router.parseRequest({ method: req.method, path, headers: {}, query: {} } as OpenApiRequest, match).params : {};
  const body = (req.body ?? {}) as Record<string, unknown>;
  const target = params.ns && params.name ? `${params.ns}/${params.name}` : typeof body.target === 'string' ? body.target : params.id ?? params.name ?? '';
  const state = auditState(res);
  const status = res.statusCode;
  try {
    await options.recordWrite!({
      time: new Date(),
      user: principal.email || principal.id,
      role: principal.role,
      action: operations.get(operationId)?.operationId ?? operationId,
      target,
      object: state.object,
      outcome: outcomeOf(status),
      from: sourceAddress(req),
      detail: { status, ...(typeof body.reason === 'string' && body.reason ? { reason: body.reason } : {}), ...(state.error ? { error: state.error } : {}), ...state.detail },
    });
  } catch (error) {
    options.log.error({ err: error }, 'could not record an audit event');
  }
}

/** Audit outcomes: ok, denied (403), invalid (400), not-found, conflict, unprocessable, error (5xx). */
export function outcomeOf(status: number): string {
  if (status < 400) return 'ok';
  if (status === 403) return 'denied';
  if (status === 400) return 'invalid';
  if (status === 404) return 'not-found';
  if (status === 409) return 'conflict';
  if (status === 422) return 'unprocessable';
  if (status === 401) return 'unauthenticated';
  return 'error';
}

const PRINCIPAL = Symbol('strataPrincipal');

function resolvePrincipal(verify: StrataPrincipalVerifier, req: Request): Promise<StrataPrincipal | undefined> {
  const holder = req as Request & { [PRINCIPAL]?: Promise<StrataPrincipal | undefined> };
  const token = req.headers[STRATA_PRINCIPAL_HEADER];
  holder[PRINCIPAL] ??= typeof token === 'string' ? verify(token) : Promise.resolve(undefined);
  return holder[PRINCIPAL];
}

export function sourceAddress(req: Request): string {
  const forwarded = req.headers['x-forwarded-for'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
  return (first || req.socket.remoteAddress || '').replace(/^::ffff:/, '');
}

export function sendError(res: Response, error: AppError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  auditState(res).error = error.message;
  res.status(error.status).json({ error: error.message });
}

function consoleErrorHandler(log: Logger) {
  return (error: unknown, req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) return next(error);
    if (isAppError(error)) return sendError(res, error);
    const httpError = error as { type?: string };
    if (httpError.type === 'entity.parse.failed') return sendError(res, new AppError('malformed-request', 'The request body is not valid JSON.'));
    if (httpError.type === 'entity.too.large') return sendError(res, new AppError('payload-too-large', 'The request body is too large.'));
    if (httpError.type === 'encoding.unsupported' || httpError.type === 'charset.unsupported') {
      return sendError(res, new AppError('unsupported-media-type', 'The request body encoding is not supported.'));
    }
    log.error({ err: error, path: req.path }, 'unhandled error');
    sendError(res, new AppError('internal', `An unexpected error occurred (request ${String(res.locals.requestId)}).`));
  };
}

function validationError(errors: ValidationIssue[]): AppError {
  const first = errors.map(toFieldError)[0];
  if (!first) return new AppError('validation-failed', 'The request is not valid.');
  const where = first.pointer.replace(/^\//, '').replace(/\//g, '.');
  return new AppError('validation-failed', `${where}: ${first.detail}`);
}
