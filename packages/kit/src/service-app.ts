import type { Express, Request, Response } from 'express';
import type { Context, Request as OpenApiRequest } from 'openapi-backend';
import { createOpenApiBackend, sendReply, type Reply } from './openapi-backend.ts';
import { loadSigilOpenApi, listOperations, type OperationInfo as OperationSummary, type ServiceName } from '@sigil/proto';
import { AppError, type FieldError } from './errors.ts';
import { createHttpShell, notFoundHandler, problemErrorHandler, rawBodyOf, sendProblem } from './http-app.ts';
import { IDEMPOTENCY_HEADER, REPLAYED_HEADER, runIdempotent, storedError, type StoredReply } from './idempotency.ts';
import { PRINCIPAL_HEADER, callerScope, requirePermission, unauthorized, type Principal, type PrincipalVerifier } from './principal.ts';
import type { Permission } from './permissions.ts';
import type { Logger } from './logger.ts';
import type { SqlClient } from './sql.ts';

/** The part of an ajv error the API turns into a field error. */
export interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

export type { Reply };

export interface OperationContext {
  req: Request;
  res: Response;
  operation: OperationSummary;
  /** Present whenever the operation needs a caller; undefined only on public operations. */
  principal: Principal | undefined;
  params: Record<string, string>;
  /** Query parameters, coerced to their documented types. */
  query: Record<string, unknown>;
  body: unknown;
  requestId: string;
  log: Logger;
}

/** An operation either returns a reply (stored for idempotent replays) or writes a stream itself and returns nothing. */
export type OperationHandler = (ctx: OperationContext & { principal: Principal }) => Promise<Reply | void>;
export type PublicOperationHandler = (ctx: OperationContext) => Promise<Reply | void>;

export interface ServiceAppOptions {
  service: ServiceName;
  log: Logger;
  verifyPrincipal: PrincipalVerifier;
  /** Holds the idempotency_keys table. */
  db: SqlClient;
  /** Operations that need a caller (auth K or D): the handler always gets a principal. */
  handlers?: Record<string, OperationHandler>;
  /** Public operations (auth P): the principal is present only if the caller happened to send one. */
  publicHandlers?: Record<string, PublicOperationHandler>;
  /** Routes outside the public contract (health, internal, GraphQL), mounted before the operations. */
  mount?: (app: Express) => void | Promise<void>;
  jsonLimit?: string;
}

/**
 * The Express app of one service: every handler is bound to an operationId of the public contract,
 * requests are authenticated, authorised and validated against the OpenAPI document before the handler runs.
 */
export async function createServiceApp(options: ServiceAppOptions): Promise<Express> {
  const { service, log } = options;
  const definition = loadSigilOpenApi();
  const operations = new Map(listOperations(definition).map((op) => [op.operationId, op]));
  const handlers: Record<string, OperationHandler | PublicOperationHandler> = { ...options.handlers, ...options.publicHandlers };
  for (const operationId of Object.keys(handlers)) {
    const op = operations.get(operationId);
    if (!op) throw new Error(`Handler ${operationId} does not match any operation of the contract`);
    if (op.service !== service) throw new Error(`Operation ${operationId} belongs to ${op.service}, not ${service}`);
    const isPublic = op.auth === 'P';
    if (isPublic !== Boolean(options.publicHandlers?.[operationId])) {
      throw new Error(`Operation ${operationId} (auth ${op.auth}) must be registered in ${isPublic ? 'publicHandlers' : 'handlers'}`);
    }
  }

  const api = createOpenApiBackend(definition);
  const bound: Record<string, (c: Context, req: Request, res: Response) => Promise<void>> = {};
  for (const [operationId, handler] of Object.entries(handlers)) {
    const op = operations.get(operationId) as OperationSummary;
    bound[operationId] = (c, req, res) => runOperation(options, op, handler as OperationHandler, c, req, res);
  }
  const principalOf = (req: Request) => resolvePrincipal(options.verifyPrincipal, req);
  // The public schemes map to the kind of principal the gateway resolved them to.
  api.registerSecurityHandler('bearerApiKey', async (_c: Context, req: Request) => (await principalOf(req))?.kind === 'api_key');
  api.registerSecurityHandler('apiKey', async (_c: Context, req: Request) => (await principalOf(req))?.kind === 'api_key');
  api.registerSecurityHandler('sessionCookie', async (_c: Context, req: Request) => (await principalOf(req))?.kind === 'session');
  api.register({
    ...bound,
    unauthorizedHandler: async (c: Context, req: Request) => {
      if (typeof req.headers[PRINCIPAL_HEADER] === 'string' && !(await principalOf(req).catch(() => undefined))) {
        throw unauthorized('The internal principal token is invalid or expired.');
      }
      const op = operations.get(c.operation.operationId as string);
      throw op?.auth === 'D' ? unauthorized('This operation requires a dashboard session; API keys cannot call it.') : unauthorized();
    },
    // Authorised callers are checked for the operation's permission before their input is looked at.
    postSecurityHandler: async (c: Context, req: Request) => {
      const op = operations.get(c.operation.operationId as string);
      const principal = await principalOf(req).catch(() => undefined);
      if (c.security?.authorized && principal && op?.permission) requirePermission(principal, op.permission as Permission);
    },
    validationFail: async (c: Context) => {
      throw validationError((c.validation.errors ?? []) as unknown as ValidationIssue[]);
    },
    notFound: async (_c: Context, _req: Request, res: Response) => sendProblem(res, new AppError('not-found', 'No operation exists at this path.')),
    methodNotAllowed: async (_c: Context, req: Request, res: Response) =>
      sendProblem(res, new AppError('method-not-allowed', `${req.method} is not allowed on this path.`)),
    // Operations of the contract that this service does not serve (yet, or at all).
    notImplemented: async (_c: Context, _req: Request, res: Response) => sendProblem(res, new AppError('not-found', 'No operation exists at this path.')),
  });
  await api.init();

  const app = createHttpShell(log, { jsonLimit: options.jsonLimit });
  await options.mount?.(app);
  app.use((req, res, next) => {
    api.handleRequest(toOpenApiRequest(req), req, res).catch(next);
  });
  app.use(notFoundHandler);
  app.use(problemErrorHandler(log));
  return app;
}

const PRINCIPAL = Symbol('principal');

/** Verifies the gateway's principal token once per request; undefined when none was sent. */
function resolvePrincipal(verify: PrincipalVerifier, req: Request): Promise<Principal | undefined> {
  const holder = req as Request & { [PRINCIPAL]?: Promise<Principal | undefined> };
  const token = req.headers[PRINCIPAL_HEADER];
  holder[PRINCIPAL] ??= typeof token === 'string' ? verify(token) : Promise.resolve(undefined);
  return holder[PRINCIPAL];
}

function toOpenApiRequest(req: Request): OpenApiRequest {
  return {
    method: req.method,
    path: req.path,
    query: req.query as Record<string, string | string[]>,
    headers: req.headers as Record<string, string | string[]>,
    body: req.body,
  };
}

async function runOperation(
  options: ServiceAppOptions,
  op: OperationSummary,
  handler: OperationHandler,
  c: Context,
  req: Request,
  res: Response,
): Promise<void> {
  // Public operations ignore a bad token rather than fail: the caller did not need one.
  const principal = await resolvePrincipal(options.verifyPrincipal, req).catch(() => undefined);
  const ctx = {
    req,
    res,
    operation: op,
    principal,
    params: c.request.params as Record<string, string>,
    query: { ...(c.request.query as Record<string, unknown>) },
    body: req.body,
    requestId: String(res.locals.requestId),
    log: (req as Request & { log: Logger }).log,
  } as OperationContext & { principal: Principal };

  const idempotencyKey = req.headers[IDEMPOTENCY_HEADER];
  if (op.idempotent && typeof idempotencyKey === 'string' && principal) {
    const outcome = await runIdempotent(
      options.db,
      {
        scope: callerScope(principal),
        key: idempotencyKey,
        method: req.method,
        path: req.path,
        query: new URL(req.originalUrl, 'http://local').search,
        rawBody: rawBodyOf(req),
      },
      async () => toStored(await handler(ctx)),
    );
    if (outcome.replayed) res.setHeader(REPLAYED_HEADER, 'true');
    if (outcome.status >= 400) throw storedError(outcome.body) ?? new AppError('internal', 'Stored response could not be replayed.');
    return sendReply(res, outcome);
  }
  const reply = await handler(ctx);
  if (reply) sendReply(res, reply);
}

function toStored(reply: Reply | void): StoredReply {
  if (!reply) throw new Error('Idempotent operations must return a reply');
  return { status: reply.status, headers: reply.headers ?? {}, body: reply.body ?? null };
}

function validationError(errors: ValidationIssue[]): AppError {
  const fieldErrors = errors.map(toFieldError);
  const first = fieldErrors[0];
  const detail = first ? `${describePointer(first.pointer)} ${first.detail}.` : 'The request is not valid.';
  return new AppError('validation-failed', detail, { errors: fieldErrors });
}

/** ajv reports `/requestBody/name`, `/query/limit`, `/path/id`, `/headers/x`; the API speaks `/body`, `/query`, `/path`, `/header`. */
export function toFieldError(error: ValidationIssue): FieldError {
  let pointer = error.instancePath
    .replace(/^\/requestBody/, '/body')
    .replace(/^\/headers/, '/header');
  if (pointer === '') pointer = '/body';
  const params = error.params;
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    pointer = `${pointer}/${escapePointer(params.missingProperty)}`;
  } else if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    pointer = `${pointer}/${escapePointer(params.additionalProperty)}`;
    return { pointer, detail: 'is not a known field' };
  }
  return { pointer, detail: error.message ?? 'is invalid' };
}

function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function describePointer(pointer: string): string {
  const [, part, ...rest] = pointer.split('/');
  if (!rest.length) return part === 'body' ? 'The request body' : `The ${part}`;
  const name = rest.join('.');
  return part === 'body' ? `Field ${name}` : `${part === 'query' ? 'Query parameter' : part === 'path' ? 'Path parameter' : 'Header'} ${name}`;
}
