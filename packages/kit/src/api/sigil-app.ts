import type { Express, Request } from 'express';
import { listOperations, type OpenApiDocument, type OperationInfo } from '@sigil/proto/openapi';
import type { ServiceName } from '@sigil/proto/routes';
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { SqlClient } from '../db/sql.ts';
import { sendProblem } from '../http/problem.ts';
import { PRINCIPAL_HEADER, callerScope, requirePermission, unauthorized, type Principal, type PrincipalVerifier } from '../auth/principal.ts';
import type { Permission } from '../auth/permissions.ts';
import type { operations as SigilOperations } from '@sigil/proto/api/sigil';
import { binaryBodyParser, createContractApp, formBodyParser, jsonBodyParser, type ContractContext, type ErrorRenderer } from './contract-app.ts';
import type { OperationRequest, RequestShape } from './operation-types.ts';
import { multipartBodyParser } from './multipart.ts';
import { IDEMPOTENCY_HEADER, REPLAYED_HEADER, runIdempotent, storedError, type StoredReply } from './idempotency.ts';
import type { Reply } from './openapi-backend.ts';
import { describePointer, toFieldError, type ValidationIssue } from './validation.ts';

export type { Reply };

export type SigilOperationId = keyof SigilOperations;
/** What a handler gets; with an operationId, its params, query and body are typed as the contract says. */
export type OperationContext<Id extends SigilOperationId | undefined = undefined> = ContractContext<
  Principal,
  OperationInfo,
  Id extends SigilOperationId ? OperationRequest<SigilOperations[Id]> : RequestShape
>;
/** An operation either returns a reply (stored for idempotent replays) or writes a stream itself and returns nothing. */
export type OperationHandler<Id extends SigilOperationId | undefined = undefined> = (ctx: OperationContext<Id> & { principal: Principal }) => Promise<Reply | void>;
export type PublicOperationHandler<Id extends SigilOperationId | undefined = undefined> = (ctx: OperationContext<Id>) => Promise<Reply | void>;
/** Handlers by operationId, each typed for its operation; a name the contract does not have is a type error. */
export type OperationHandlers = { [Id in SigilOperationId]?: OperationHandler<Id> };
export type PublicOperationHandlers = { [Id in SigilOperationId]?: PublicOperationHandler<Id> };

export interface SigilAppOptions {
  /** The Sigil OpenAPI document (`loadSigilOpenApi()`), passed by the service. */
  document: OpenApiDocument;
  service: ServiceName;
  log: Logger;
  verifyPrincipal: PrincipalVerifier;
  /** Holds the idempotency_keys table. */
  db: SqlClient;
  /** Operations that need a caller (auth K or D): the handler always gets a principal. */
  handlers?: OperationHandlers;
  /** Public operations (auth P): the principal is present only if the caller happened to send one. */
  publicHandlers?: PublicOperationHandlers;
  /**
   * Operations of a signer or a viewer (auth S or V): the gateway forwards their bearer token as it came, and the
   * service checks it with `tokenSchemes` (the document's `signerToken`, `viewerToken`) before the handler runs.
   */
  tokenHandlers?: PublicOperationHandlers;
  tokenSchemes?: Record<string, (req: Request) => Promise<boolean>>;
  /** Routes outside the public contract (health, internal, GraphQL), mounted before the operations. */
  mount?: (app: Express) => void | Promise<void>;
  jsonLimit?: string;
  /** Operations that take files: these media types are read as raw bytes (a Buffer body), up to `limit` bytes. */
  binaryBodies?: { types: string[]; limit: number };
  /** Operations that take `multipart/form-data`: one file of at most this many bytes (`uploadedFile(req, name)`). */
  multipartLimit?: number;
  /** Operations that take `application/x-www-form-urlencoded` (a SAML HTTP-POST binding): bodies up to this size. */
  formLimit?: string;
}

/** Sigil's errors: RFC 9457 problem+json with the JSON Pointers of the offending fields. */
export const problemRenderer: ErrorRenderer = {
  send: sendProblem,
  validation(issues: ValidationIssue[]): AppError {
    const fieldErrors = issues.map(toFieldError);
    const first = fieldErrors[0];
    const detail = first ? `${describePointer(first.pointer)} ${first.detail}.` : 'The request is not valid.';
    return new AppError('validation-failed', detail, { errors: fieldErrors });
  },
};

/**
 * A Sigil service's app: the contract builder with Sigil's rules. API keys and sessions map to the document's
 * security schemes, `x-permission` is checked before the input, `x-idempotent` operations replay by Idempotency-Key.
 */
export async function createSigilApp(options: SigilAppOptions): Promise<Express> {
  const operations = listOperations(options.document);
  const byId = new Map(operations.map((op) => [op.operationId, op]));
  for (const operationId of Object.keys({ ...options.handlers, ...options.publicHandlers, ...options.tokenHandlers })) {
    const op = byId.get(operationId);
    if (!op) continue;
    const expected = op.auth === 'P' ? 'publicHandlers' : op.auth === 'S' || op.auth === 'V' ? 'tokenHandlers' : 'handlers';
    if (!options[expected]?.[operationId as SigilOperationId]) throw new Error(`Operation ${operationId} (auth ${op.auth}) must be registered in ${expected}`);
  }
  return createContractApp<Principal, OperationInfo>({
    document: options.document as unknown as Record<string, unknown>,
    operations,
    service: options.service,
    log: options.log,
    errors: problemRenderer,
    mount: options.mount,
    bodyParsers: [
      jsonBodyParser(options.jsonLimit),
      ...(options.binaryBodies ? [binaryBodyParser(options.binaryBodies.types, options.binaryBodies.limit)] : []),
      ...(options.multipartLimit ? [multipartBodyParser(options.multipartLimit)] : []),
      ...(options.formLimit ? [formBodyParser(options.formLimit)] : []),
    ],
    // The document has validated each request before its handler runs: the shape its operation's type says holds.
    handlers: { ...options.handlers, ...options.publicHandlers, ...options.tokenHandlers } as Record<string, PublicOperationHandler>,
    caller: {
      principalHeader: PRINCIPAL_HEADER,
      verify: options.verifyPrincipal,
      schemes: {
        bearerApiKey: (p) => p.kind === 'api_key',
        apiKey: (p) => p.kind === 'api_key',
        sessionCookie: (p) => p.kind === 'session',
      },
      tokenSchemes: options.tokenSchemes,
      unauthenticated: (op, reason) => {
        if (op?.auth === 'S') return unauthorized('A valid signing token is required: a sgls_ session token or the sgla_ access token it was exchanged for.');
        if (op?.auth === 'V') return unauthorized('A valid viewer token is required.');
        if (reason === 'invalid') return unauthorized('The internal principal token is invalid or expired.');
        return op?.auth === 'D' ? unauthorized('Sign in to the dashboard: this operation requires a dashboard session (API keys cannot call it).') : unauthorized();
      },
      authorize: (principal, op) => {
        if (op.permission) requirePermission(principal, op.permission as Permission);
      },
    },
    around: (ctx, run) => runWithIdempotency(options.db, ctx, run),
  });
}

async function runWithIdempotency(db: SqlClient, ctx: OperationContext, run: () => Promise<Reply | void>): Promise<Reply | void> {
  const { req, res, operation, principal } = ctx;
  const key = req.headers[IDEMPOTENCY_HEADER];
  if (!operation.idempotent || typeof key !== 'string' || !principal) return run();
  const outcome = await runIdempotent(
    db,
    {
      scope: callerScope(principal),
      key,
      method: req.method,
      path: req.path,
      query: new URL(req.originalUrl, 'http://local').search,
      rawBody: rawBodyOf(req),
    },
    async () => toStored(await run()),
  );
  if (outcome.replayed) res.setHeader(REPLAYED_HEADER, 'true');
  if (outcome.status >= 400) throw storedError(outcome.body) ?? new AppError('internal', 'Stored response could not be replayed.');
  return { status: outcome.status, headers: outcome.headers, body: fromStoredBody(outcome.body) };
}

/** Bytes (a rendered PDF, say) are kept as base64 in the JSON column and replayed as the same bytes. */
const BINARY = '$binaryBase64';
const toStoredBody = (body: unknown): unknown => (Buffer.isBuffer(body) ? { [BINARY]: body.toString('base64') } : body);
const fromStoredBody = (body: unknown): unknown =>
  body !== null && typeof body === 'object' && typeof (body as Record<string, unknown>)[BINARY] === 'string'
    ? Buffer.from((body as Record<string, string>)[BINARY] as string, 'base64')
    : body;

function rawBodyOf(req: Request): Buffer | undefined {
  return (req as Request & { rawBody?: Buffer }).rawBody;
}

function toStored(reply: Reply | void): StoredReply {
  if (!reply) throw new Error('Idempotent operations must return a reply');
  return { status: reply.status, headers: reply.headers ?? {}, body: toStoredBody(reply.body ?? null) };
}
