import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { pinoHttp } from 'pino-http';
import type { Context, Request as OpenApiRequest } from 'openapi-backend';
import { AppError, notImplemented } from '../errors.ts';
import { toAppError } from '../http/problem.ts';
import type { Logger } from '../log.ts';
import { requestIdMiddleware } from '../http/request-id.ts';
import { clientAddress } from '../http/client-address.ts';
import { bodyRules, checkBody } from './media-types.ts';
import { createOpenApiBackend, precompileRouting, sendReply, type Reply } from './openapi-backend.ts';
import type { RequestShape } from './operation-types.ts';
import { findUnstorableText, type ValidationIssue } from './validation.ts';

/** What the builder needs to know of an operation besides the document: who serves it. */
export interface ContractOperation {
  operationId: string;
  /** The service that serves it (`x-service`, `x-strata-service`). */
  service: string;
}

/** How a product renders errors: problem+json for Sigil, `{ error }` for Strata. */
export interface ErrorRenderer {
  send(res: Response, error: AppError): void;
  /** The error for a request the document refuses. */
  validation(issues: ValidationIssue[]): AppError;
}

/** How a product recognises and checks its callers (a principal token the gateway signed). */
export interface CallerRules<P, Op extends ContractOperation> {
  principalHeader: string;
  verify: (token: string) => Promise<P>;
  /** Security schemes of the document → whether the verified principal satisfies it. */
  schemes: Record<string, (principal: P) => boolean>;
  /**
   * Security schemes a service checks itself from the request (a signer's bearer token): whether the request carries a
   * credential that holds. The check may remember what it found for the handler (`req`-keyed).
   */
  tokenSchemes?: Record<string, (req: Request) => Promise<boolean>>;
  /** The 401 of an operation that needs a caller and got none that holds (`invalid`: a token that does not verify). */
  unauthenticated: (operation: Op | undefined, reason: 'missing' | 'invalid') => AppError;
  /** Throws the 403 when the caller may not call the operation; runs before the input is validated. */
  authorize?: (principal: P, operation: Op) => void;
}

/** What a handler gets; `R` types the request per operation (`OperationRequest`), by default only loosely. */
export interface ContractContext<P, Op, R extends RequestShape = RequestShape> {
  req: Request;
  res: Response;
  operation: Op;
  /** The verified caller; undefined only on operations that need none. */
  principal: P | undefined;
  params: R['params'];
  /** Query parameters, coerced to their documented types. */
  query: R['query'];
  body: R['body'];
  requestId: string;
  /** The caller's address (the right-most hop not added by a trusted proxy). */
  from: string;
  log: Logger;
}

export type ContractHandler<P, Op, R extends RequestShape = RequestShape> = (ctx: ContractContext<P, Op, R>) => Promise<Reply | void>;

export interface ContractAppOptions<P, Op extends ContractOperation> {
  /** The parsed OpenAPI 3.1 document; the service loads it, the kit never does. */
  document: Record<string, unknown>;
  operations: readonly Op[];
  /** This service: operations of other services answer 503, its own without a handler 501. */
  service: string;
  log: Logger;
  caller: CallerRules<P, Op>;
  errors: ErrorRenderer;
  handlers: Record<string, ContractHandler<P, Op>>;
  /** Runs around every handler (idempotent replays, audit records). */
  around?: (ctx: ContractContext<P, Op>, run: () => Promise<Reply | void>) => Promise<Reply | void>;
  /** Where the document's paths are mounted (`/api/v1` for Strata). */
  prefix?: string;
  /** Routes outside the contract (health, internal, GraphQL), mounted before the operations. */
  mount?: (app: Express) => void | Promise<void>;
  /** Body parsers for the contract's paths (JSON is parsed by default). */
  bodyParsers?: express.RequestHandler[];
  /** Proxies in front of this process whose X-Forwarded-For entries are trusted. Default 1 (the gateway). */
  trustedProxies?: number;
  /** Turns a body the parsers left as text (YAML, say) into the value validated against the document. */
  decodeBody?: (req: Request) => void;
  /** Called when the answer to any request on the contract's paths has been sent, whatever its outcome. */
  onFinish?: (finished: FinishedRequest<P, Op>) => Promise<void>;
}

export interface FinishedRequest<P, Op> {
  req: Request;
  res: Response;
  /** The operation the path and method matched, if any. */
  operation: Op | undefined;
  /** The path relative to the document (without the prefix). */
  path: string;
  params: Record<string, string>;
  principal: P | undefined;
  from: string;
}

export const DEFAULT_BODY_LIMIT = '1mb';

/**
 * The Express app of a contract-bound service: every handler is bound to an operationId of the document; each request
 * is routed, authenticated (401), authorised (403), its body type checked (415) and validated (400) before the
 * handler runs. Operations of another service the document lists answer 503; those of this one without a handler
 * answer 501 `not-implemented`, naming the operation.
 */
export async function createContractApp<P, Op extends ContractOperation>(options: ContractAppOptions<P, Op>): Promise<Express> {
  const { log, caller, errors, service } = options;
  const prefix = options.prefix ?? '';
  const operations = new Map(options.operations.map((op) => [op.operationId, op]));
  for (const operationId of Object.keys(options.handlers)) {
    const op = operations.get(operationId);
    if (!op) throw new Error(`Handler ${operationId} does not match any operation of the contract`);
    if (op.service !== service) throw new Error(`Operation ${operationId} belongs to ${op.service}, not ${service}`);
  }
  const rules = bodyRules(options.document);
  const principalOf = (req: Request) => resolvePrincipal(caller, req, log);
  const api = createOpenApiBackend(options.document);
  for (const [scheme, satisfied] of Object.entries(caller.schemes)) {
    api.registerSecurityHandler(scheme, async (_c: Context, req: Request) => {
      const principal = await principalOf(req).catch(() => undefined);
      return principal !== undefined && satisfied(principal);
    });
  }
  // A token check that could not tell (its owner is down) fails the request with its own error, not a 401.
  const tokenCheckFailures = new WeakMap<Request, unknown>();
  for (const [scheme, holds] of Object.entries(caller.tokenSchemes ?? {})) {
    api.registerSecurityHandler(scheme, async (_c: Context, req: Request) =>
      holds(req).catch((error: unknown) => {
        tokenCheckFailures.set(req, error);
        return false;
      }),
    );
  }
  const bound: Record<string, (c: Context, req: Request, res: Response) => Promise<void>> = {};
  for (const [operationId, handler] of Object.entries(options.handlers)) {
    const op = operations.get(operationId) as Op;
    bound[operationId] = async (c, req, res) => {
      // Operations that need no caller ignore a bad token rather than fail: the caller did not need one.
      const principal = await principalOf(req).catch(() => undefined);
      const ctx: ContractContext<P, Op> = {
        req,
        res,
        operation: op,
        principal,
        params: c.request.params as Record<string, string>,
        query: { ...(c.request.query as Record<string, unknown>) },
        body: req.body,
        requestId: String(res.locals.requestId),
        from: clientAddress(req, options.trustedProxies ?? 1),
        log: (req as Request & { log: Logger }).log,
      };
      const reply = options.around ? await options.around(ctx, () => handler(ctx)) : await handler(ctx);
      if (reply) sendReply(res, reply);
    };
  }
  const operationOf = (c: Context) => operations.get(c.operation?.operationId as string);
  api.register({
    ...bound,
    unauthorizedHandler: async (c: Context, req: Request) => {
      if (tokenCheckFailures.has(req)) throw tokenCheckFailures.get(req);
      const sent = typeof req.headers[caller.principalHeader] === 'string';
      const invalid = sent && !(await principalOf(req).catch(() => undefined));
      throw caller.unauthenticated(operationOf(c), invalid ? 'invalid' : 'missing');
    },
    postSecurityHandler: async (c: Context, req: Request) => {
      const op = operationOf(c);
      if (!op) return;
      // An operation open to anyone (`security: []`) is never "authorized" in openapi-backend's sense; its input is
      // still checked for text PostgreSQL cannot store below.
      const open = ((c.operation as { security?: unknown[] } | undefined)?.security ?? (options.document.security as unknown[] | undefined) ?? []).length === 0;
      if (c.security?.authorized) {
        const principal = await principalOf(req).catch(() => undefined);
        if (principal !== undefined) caller.authorize?.(principal, op);
        if (!bound[op.operationId]) throw notServed(op, service);
        checkBody(req, rules.get(op.operationId));
      } else if (!open) {
        return;
      }
      const unstorable = findUnstorableText({ path: c.request.params, query: c.request.query, body: req.body });
      if (unstorable) throw errors.validation([{ keyword: 'unstorable', instancePath: unstorable.pointer, params: {}, message: unstorable.detail }]);
    },
    validationFail: async (c: Context) => {
      throw errors.validation((c.validation.errors ?? []) as unknown as ValidationIssue[]);
    },
    notFound: async () => {
      throw new AppError('not-found', 'No operation exists at this path.');
    },
    methodNotAllowed: async (_c: Context, req: Request) => {
      throw new AppError('method-not-allowed', `${req.method} is not allowed on this path.`);
    },
    notImplemented: async (c: Context) => {
      throw notServed(operationOf(c), service);
    },
  });
  await api.init();
  precompileRouting(api);

  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(requestIdMiddleware);
  app.use(requestLogger(log));
  await options.mount?.(app);
  const parsers = options.bodyParsers ?? [jsonBodyParser()];
  const contract = express.Router();
  contract.use(...parsers);
  contract.use((req, res, next) => {
    const path = req.path;
    if (options.onFinish) res.on('finish', () => void finish(req, res, path));
    options.decodeBody?.(req);
    const request: OpenApiRequest = {
      method: req.method,
      path,
      query: req.query as Record<string, string | string[]>,
      headers: req.headers as Record<string, string | string[]>,
      body: req.body,
    };
    api.handleRequest(request, req, res).catch(next);
  });
  const finish = async (req: Request, res: Response, path: string): Promise<void> => {
    const bare = { method: req.method, path, headers: {}, query: {} } as OpenApiRequest;
    const match = api.router.matchOperation(bare);
    try {
      await options.onFinish?.({
        req,
        res,
        operation: match ? operations.get(match.operationId as string) : undefined,
        path,
        params: match ? (api.router.parseRequest(bare, match).params as Record<string, string>) : {},
        principal: await principalOf(req).catch(() => undefined),
        from: clientAddress(req, options.trustedProxies ?? 1),
      });
    } catch (error) {
      log.error({ err: error }, 'a finished-request hook failed');
    }
  };
  app.use(prefix || '/', contract);
  app.use((_req, _res, next) => next(new AppError('not-found', 'No operation exists at this path.')));
  app.use(errorHandler(log, errors));
  return app;
}

/**
 * Why a listed operation is not served here: another service's is the same 503 the gateway gives for a service it
 * cannot reach; one of this service's without a handler is 501 `not-implemented`.
 */
export function notServed(operation: ContractOperation | undefined, service: string): AppError {
  if (!operation) return new AppError('not-found', 'No operation exists at this path.');
  if (operation.service !== service) return new AppError('service-unavailable', `The ${operation.service} service is not available.`);
  return notImplemented(service, operation.operationId);
}

/** JSON bodies (raw bytes kept for idempotency fingerprints). */
export function jsonBodyParser(limit = DEFAULT_BODY_LIMIT): express.RequestHandler {
  return express.json({
    limit,
    type: ['application/json', 'application/*+json'],
    verify: (req, _res, buffer) => {
      (req as Request & { rawBody?: Buffer }).rawBody = buffer;
    },
  });
}

/** HTML form posts (`application/x-www-form-urlencoded`) as an object of strings; repeated names are not merged. */
export function formBodyParser(limit = DEFAULT_BODY_LIMIT): express.RequestHandler {
  return express.urlencoded({ extended: false, limit, parameterLimit: 20 });
}

/** Files as raw bytes (a Buffer body; the bytes are also the idempotency fingerprint's). */
export function binaryBodyParser(types: string[], limit: number): express.RequestHandler {
  return express.raw({
    limit,
    type: types,
    verify: (req, _res, buffer) => {
      (req as Request & { rawBody?: Buffer }).rawBody = buffer;
    },
  });
}

const PRINCIPAL = Symbol('principal');

/** Verifies the principal token once per request; undefined when none was sent. A failure is logged, never the token. */
function resolvePrincipal<P>(caller: Pick<CallerRules<P, ContractOperation>, 'principalHeader' | 'verify'>, req: Request, log: Logger): Promise<P | undefined> {
  const holder = req as Request & { [PRINCIPAL]?: Promise<P | undefined> };
  if (!holder[PRINCIPAL]) {
    const token = req.headers[caller.principalHeader];
    holder[PRINCIPAL] =
      typeof token === 'string'
        ? caller.verify(token).catch((error: unknown) => {
            log.warn({ requestId: String(req.headers['x-request-id'] ?? ''), path: req.path, reason: (error as Error)?.message ?? String(error) }, 'principal verification failed');
            throw error;
          })
        : Promise.resolve(undefined);
    holder[PRINCIPAL].catch(() => undefined);
  }
  return holder[PRINCIPAL];
}

/**
 * One line per request, without headers or the query: credentials travel in both (keys, cookies, principal tokens,
 * viewer tokens), and a log line that never holds them cannot leak them.
 */
export function requestLogger(log: Logger) {
  return pinoHttp({
    logger: log,
    serializers: {
      req: (req: { id?: unknown; method?: string; url?: string }) => ({ id: req.id, method: req.method, path: (req.url ?? '').split('?')[0] }),
      res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
    },
    genReqId: (_req, res) => (res as Response).locals.requestId as string,
    autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' },
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'info' : 'debug'),
  });
}

/** Last middleware: anything thrown is rendered by the product's renderer; unknown errors are logged and hidden. */
function errorHandler(log: Logger, errors: ErrorRenderer) {
  return (error: unknown, req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) return next(error);
    errors.send(res, toAppError(error, req, log));
  };
}
