import express, { type Express, type Request, type Response } from 'express';
import { parseAllDocuments } from 'yaml';
import { STRATA, roleAtLeast, type StrataPrincipal } from '@sigil/proto/strata';
import { listStrataOperations, type StrataOperationInfo } from '@sigil/proto/strata-openapi';
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { STRATA_PRINCIPAL_HEADER, type StrataPrincipalVerifier } from '../auth/strata-principal.ts';
import type { operations as StrataOperations } from '@sigil/proto/api/strata';
import { createContractApp, jsonBodyParser, type ContractContext, type ErrorRenderer, type FinishedRequest } from './contract-app.ts';
import type { OperationRequest, RequestShape } from './operation-types.ts';
import type { Reply } from './openapi-backend.ts';
import { toFieldError, type ValidationIssue } from './validation.ts';

export type StrataOperationId = keyof StrataOperations;

/** What a handler gets; with an operationId, its params, query and body are typed as the contract says. */
export interface ConsoleContext<Id extends StrataOperationId | undefined = undefined>
  extends ContractContext<StrataPrincipal, StrataOperationInfo, Id extends StrataOperationId ? OperationRequest<StrataOperations[Id]> : RequestShape> {
  principal: StrataPrincipal;
  /** What the audit record of this write names as its object (a backup or restore name, say). */
  setAuditObject(object: string, detail?: Record<string, unknown>): void;
}

export type ConsoleHandler<Id extends StrataOperationId | undefined = undefined> = (ctx: ConsoleContext<Id>) => Promise<Reply | void>;
/** Handlers by operationId, each typed for its operation; a name the contract does not have is a type error. */
export type ConsoleHandlers = { [Id in StrataOperationId]?: ConsoleHandler<Id> };

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

export interface StrataAppOptions {
  /** The Strata OpenAPI document (`loadStrataOpenApi()`), passed by the service. */
  document: Record<string, unknown>;
  service: 'backup-catalog' | 'sandbox';
  log: Logger;
  verifyPrincipal: StrataPrincipalVerifier;
  handlers: ConsoleHandlers;
  /** Routes outside the contract (health, internal), mounted first. */
  mount?: (app: Express) => void | Promise<void>;
  /** Called once per write (any method but GET/HEAD) by an authenticated caller, whatever its outcome. */
  recordWrite?: (record: WriteRecord) => Promise<void>;
}

const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];
export const STRATA_BODY_LIMIT = '2mb';

/** Strata's errors: `{ "error": "..." }` with the status of the spec's table. */
export const strataErrorRenderer: ErrorRenderer = {
  send: sendError,
  validation(issues: ValidationIssue[]): AppError {
    const issue = issues[0];
    if (!issue) return new AppError('validation-failed', 'The request is not valid.');
    const first = toFieldError(issue);
    const where = first.pointer.replace(/^\//, '').replace(/\//g, '.');
    return new AppError('validation-failed', `${where}: ${oneOf(issue) ?? first.detail}`);
  },
};

/**
 * A Strata service's app: the contract builder with Strata's rules. 401 / 403 (`x-strata-role`) / 400 in that order,
 * YAML bodies accepted where the document takes them, every write recorded in the audit log, errors as `{ error }`.
 */
export async function createStrataApp(options: StrataAppOptions): Promise<Express> {
  const operations = listStrataOperations(options.document);
  const handlers = Object.fromEntries(
    // The document has validated each request before its handler runs: the shape its operation's type says holds.
    Object.entries(options.handlers as Record<string, ConsoleHandler>).map(([operationId, handler]) => [
      operationId,
      (ctx: ContractContext<StrataPrincipal, StrataOperationInfo>) =>
        handler({ ...ctx, principal: ctx.principal as StrataPrincipal, setAuditObject: (object, detail) => setAuditObject(ctx.res, object, detail) }),
    ]),
  );
  return createContractApp<StrataPrincipal, StrataOperationInfo>({
    document: options.document,
    operations,
    service: options.service,
    log: options.log,
    errors: strataErrorRenderer,
    prefix: STRATA.apiPrefix,
    mount: options.mount,
    bodyParsers: [jsonBodyParser(STRATA_BODY_LIMIT), express.text({ limit: STRATA_BODY_LIMIT, type: YAML_TYPES })],
    decodeBody: decodeYamlBody,
    handlers,
    caller: {
      principalHeader: STRATA_PRINCIPAL_HEADER,
      verify: options.verifyPrincipal,
      schemes: { accessJWT: () => true, accessToken: () => true, accessCookie: () => true },
      unauthenticated: () => new AppError('unauthorized', 'Valid access credentials are required.'),
      authorize: (principal, op) => {
        if (!roleAtLeast(principal.role, op.role)) {
          throw new AppError('forbidden', `This operation needs the role ${op.role}; you are ${principal.role}.`);
        }
      },
    },
    onFinish: options.recordWrite ? auditWrites(options.recordWrite) : undefined,
  });
}

/** YAML bodies become JSON values before validation: one document as itself, several as an array. */
function decodeYamlBody(req: Request): void {
  const type = String(req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
  if (typeof req.body !== 'string' || !YAML_TYPES.includes(type)) return;
  const values: unknown[] = [];
  for (const [index, doc] of parseAllDocuments(req.body).entries()) {
    const error = doc.errors[0];
    if (error) throw new AppError('validation-failed', `body: document ${index + 1}: ${error.message.split('\n')[0]}`);
    const value = jsonValueOf(doc.toJSON(), index);
    if (value !== null && value !== undefined) values.push(value);
  }
  req.body = values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
  // The document describes YAML bodies by their JSON value.
  req.headers['content-type'] = 'application/json';
}

/**
 * The document as a plain JSON value. An alias inside its own anchor (`a: &x [*x]`) makes `toJSON` answer a circular
 * value, which every later step (validation, the handlers) would walk forever (the catalog ran out of memory on one):
 * it is refused as invalid YAML, like any other document JSON cannot represent.
 */
function jsonValueOf(value: unknown, index: number): unknown {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : (JSON.parse(text) as unknown);
  } catch {
    throw new AppError('validation-failed', `body: document ${index + 1}: an alias refers to the node that holds it (a circular document).`);
  }
}

interface AuditState {
  object: string;
  detail: Record<string, unknown>;
  error?: string;
}
const AUDIT = Symbol('audit');

function auditState(res: Response): AuditState {
  const holder = res as Response & { [AUDIT]?: AuditState };
  holder[AUDIT] ??= { object: '', detail: {} };
  return holder[AUDIT];
}

function setAuditObject(res: Response, object: string, detail?: Record<string, unknown>): void {
  auditState(res).object = object;
  if (detail) Object.assign(auditState(res).detail, detail);
}

/**
 * Records every write of an authenticated caller once its answer is out, whatever the outcome: writes refused before
 * reaching a handler (403, 400) are recorded too.
 */
function auditWrites(record: (entry: WriteRecord) => Promise<void>) {
  return async ({ req, res, operation, path, params, principal, from }: FinishedRequest<StrataPrincipal, StrataOperationInfo>): Promise<void> => {
    if (!principal || req.method === 'GET' || req.method === 'HEAD') return;
    const body = (req.body ?? {}) as Record<string, unknown>;
    const target = params.ns && params.name ? `${params.ns}/${params.name}` : typeof body.target === 'string' ? body.target : (params.id ?? params.name ?? '');
    const state = auditState(res);
    const status = res.statusCode;
    await record({
      time: new Date(),
      user: principal.email || principal.id,
      role: principal.role,
      action: operation?.operationId ?? `${req.method} ${path}`,
      target,
      object: state.object,
      outcome: outcomeOf(status),
      from,
      detail: {
        status,
        ...(typeof body.reason === 'string' && body.reason ? { reason: body.reason } : {}),
        ...(state.error ? { error: state.error } : {}),
        ...state.detail,
      },
    });
  };
}

export function sendError(res: Response, error: AppError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  auditState(res).error = error.message;
  // Members an error adds (an apply's `errors`) go next to `error`, never in its place.
  res.status(error.status).json({ ...error.extensions, error: error.message });
}

/** `must be one of ok, never, failing` for a value outside an enumeration: the caller learns what is accepted. */
function oneOf(issue: ValidationIssue): string | undefined {
  const values = issue.keyword === 'enum' ? issue.params.allowedValues : undefined;
  return Array.isArray(values) && values.length ? `must be one of ${values.map(String).join(', ')}` : undefined;
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
