import { ROLE_PERMISSIONS, ROLES, type Permission, type Role } from '@sigil/kit/auth';
import { deref, listOperations, loadSigilOpenApi, type OpenApiDocument, type OpenApiOperation, type OpenApiParameter } from '@sigil/proto/openapi';
import { listStrataOperations, loadStrataOpenApi } from '@sigil/proto/strata-openapi';
import { STRATA_ROLES, roleAtLeast, type StrataRole } from '@sigil/proto/strata';

/**
 * The authorization matrix's rows and the rule that gives each cell its expected answer, read from the two contracts
 * only: `x-auth`, `x-permission` and the path parameters' schemas for Sigil; `x-strata-role` and `x-strata-mode-roles`
 * for Strata. No operation id appears here, so a new operation gets its row and its expectations by itself.
 */

export type AuthKind = 'K' | 'D' | 'S' | 'V' | 'P';

/** A document-agnostic view of one operation: what the request builder and the rule need. */
export interface MatrixOperation {
  api: 'sigil' | 'strata';
  operationId: string;
  /** The row's name: the operation id, plus the variant for Strata's mode rows (`createRestore (mode in-place)`). */
  row: string;
  method: string;
  path: string;
  pathParams: OpenApiParameter[];
  /** A path parameter is an id (its schema's pattern names a prefix, `^tpl_...`), which belongs to one organization. */
  addressesId: boolean;
  queryParams: OpenApiParameter[];
  requestBody?: { required: boolean; mediaType: string; schema: unknown };
  /** Members forced into the generated body (Strata's mode rows). */
  bodyOverrides?: Record<string, unknown>;
}

export interface SigilOperation extends MatrixOperation {
  api: 'sigil';
  auth: AuthKind;
  permission?: Permission;
  /** The path addresses a resource that belongs to one mode (its schema carries `mode` or `testMode`). */
  modeScoped: boolean;
}

export interface StrataOperation extends MatrixOperation {
  api: 'strata';
  role: StrataRole;
}

/** The columns of Sigil's matrix: one credential each, described in docs/security.md. */
export const SIGIL_KINDS = [
  'none',
  'malformed key',
  'revoked key',
  'expired key',
  'ended session',
  'other org',
  'test key, live resource',
  'live key, test resource',
  'missing permission',
  'signer token',
  'viewer token',
  'API key',
] as const;
export type SigilKind = (typeof SIGIL_KINDS)[number];

export const STRATA_KINDS = ['none', 'invalid token', ...STRATA_ROLES] as const;
export type StrataKind = (typeof STRATA_KINDS)[number];

/**
 * What a cell must answer. `allowed`: the credential passes authentication and authorization (the answer is the
 * operation's own: never 401, never 403 for a missing permission or role, never 404 for a path resource the caller owns,
 * never 5xx). `as-anonymous`: a public operation ignores credentials, so the cell answers what the `none` cell answered.
 */
export type Expectation =
  | { kind: 'refused'; status: 401 | 403 | 404; code?: string; detail?: string }
  | { kind: 'allowed' }
  | { kind: 'as-anonymous' }
  /** The `none` cell of a public operation: whatever it answers, short of a 5xx (the other cells are compared with it). */
  | { kind: 'public' };

const REFUSE_401: Expectation = { kind: 'refused', status: 401, code: 'unauthorized' };

/** An id's schema: a pattern that starts with a prefix and an underscore (`^tpl_[A-Za-z0-9]{10,40}$`). */
export const ID_PATTERN = /^\^\(?([a-z]+)_\[/;

/** The Sigil rule (docs/security.md, "Rules"). */
export function expectSigil(op: SigilOperation, kind: SigilKind): Expectation {
  if (op.auth === 'P') return kind === 'none' ? { kind: 'public' } : { kind: 'as-anonymous' };
  if (op.auth === 'S') return kind === 'signer token' ? { kind: 'allowed' } : REFUSE_401;
  if (op.auth === 'V') return kind === 'viewer token' ? { kind: 'allowed' } : REFUSE_401;
  // K and D from here on.
  switch (kind) {
    case 'none':
    case 'malformed key':
    case 'revoked key':
    case 'expired key':
    case 'ended session':
    case 'signer token':
    case 'viewer token':
      return REFUSE_401;
    case 'API key':
      return op.auth === 'D' ? REFUSE_401 : { kind: 'allowed' };
    case 'test key, live resource':
    case 'live key, test resource':
      if (op.auth === 'D') return REFUSE_401;
      return op.modeScoped ? { kind: 'refused', status: 404, code: 'not-found' } : { kind: 'allowed' };
    case 'other org':
      // A path of names only (an SSO provider id) names something in the caller's own organization.
      return op.addressesId ? { kind: 'refused', status: 404, code: 'not-found' } : { kind: 'allowed' };
    case 'missing permission':
      return op.permission ? { kind: 'refused', status: 403, code: 'forbidden', detail: `Missing permission: ${op.permission}.` } : { kind: 'allowed' };
  }
}

/** The Strata rule: no or invalid token 401; a role below the operation's (or the body's mode's) 403; else allowed. */
export function expectStrata(op: StrataOperation, kind: StrataKind): Expectation {
  if (kind === 'none' || kind === 'invalid token') return { kind: 'refused', status: 401 };
  return roleAtLeast(kind, op.role) ? { kind: 'allowed' } : { kind: 'refused', status: 403 };
}

/** The least-privileged dashboard role that lacks a permission (any role when there is none to lack). */
export function roleLacking(permission: Permission | undefined): Role {
  const lacking = ROLES.filter((role) => !permission || !ROLE_PERMISSIONS[role].includes(permission));
  const role = lacking.at(-1);
  if (!role) throw new Error(`every role holds ${permission}: the missing-permission column needs another credential`);
  return role;
}

type Json = Record<string, unknown>;

function parametersOf(doc: OpenApiDocument, item: Json, op: OpenApiOperation): OpenApiParameter[] {
  const all = [...((item.parameters as unknown[]) ?? []), ...((op.parameters as unknown[]) ?? [])];
  return all.map((p) => deref(doc, p as OpenApiParameter)).filter((p): p is OpenApiParameter => p !== undefined);
}

function bodyOf(doc: OpenApiDocument, op: OpenApiOperation): MatrixOperation['requestBody'] {
  const body = op.requestBody ? deref(doc, op.requestBody) : undefined;
  if (!body?.content) return undefined;
  const [mediaType, media] = Object.entries(body.content)[0] as [string, { schema?: unknown }];
  return { required: body.required === true, mediaType, schema: media.schema };
}

function addressesId(doc: OpenApiDocument, pathParams: OpenApiParameter[]): boolean {
  return pathParams.some((param) => {
    const schema = deref(doc, param.schema as { $ref: string }) as { pattern?: unknown } | undefined;
    return typeof schema?.pattern === 'string' && ID_PATTERN.test(schema.pattern);
  });
}

/** Whether a path's first parameter names a resource whose schema has a `mode` or `testMode` member. */
function modeScopedPath(doc: OpenApiDocument, pathParams: OpenApiParameter[]): boolean {
  const first = pathParams[0]?.schema as { $ref?: string } | undefined;
  if (!first?.$ref) return false;
  const schemas = (doc.components?.schemas ?? {}) as Record<string, Json>;
  return Object.values(schemas).some((schema) => {
    const properties = schema.properties as Record<string, { $ref?: string }> | undefined;
    return properties !== undefined && properties.id?.$ref === first.$ref && ('mode' in properties || 'testMode' in properties);
  });
}

export function sigilOperations(): SigilOperation[] {
  const doc = loadSigilOpenApi();
  return listOperations(doc).map((info) => {
    const item = doc.paths[info.path] as unknown as Json;
    const op = item[info.method.toLowerCase()] as OpenApiOperation;
    const params = parametersOf(doc, item, op);
    const pathParams = params.filter((p) => p.in === 'path');
    return {
      api: 'sigil',
      operationId: info.operationId,
      row: info.operationId,
      method: info.method,
      path: info.path,
      pathParams,
      addressesId: addressesId(doc, pathParams),
      queryParams: params.filter((p) => p.in === 'query'),
      requestBody: bodyOf(doc, op),
      auth: info.auth as AuthKind,
      ...(info.permission ? { permission: info.permission } : {}),
      modeScoped: modeScopedPath(doc, pathParams),
    } satisfies SigilOperation;
  });
}

/** Every Strata operation, plus one row per entry of its `x-strata-mode-roles` (the body names that mode). */
export function strataOperations(): StrataOperation[] {
  const doc = loadStrataOpenApi() as unknown as OpenApiDocument;
  const rows: StrataOperation[] = [];
  for (const info of listStrataOperations(doc as unknown as Json)) {
    const item = doc.paths[info.path] as unknown as Json;
    const op = item[info.method] as OpenApiOperation & { 'x-strata-mode-roles'?: Record<string, StrataRole> };
    const params = parametersOf(doc, item, op);
    const pathParams = params.filter((p) => p.in === 'path');
    const base: StrataOperation = {
      api: 'strata',
      operationId: info.operationId,
      row: info.operationId,
      method: info.method.toUpperCase(),
      path: `/api/v1${info.path}`,
      pathParams,
      addressesId: addressesId(doc, pathParams),
      queryParams: params.filter((p) => p.in === 'query'),
      requestBody: bodyOf(doc, op),
      role: info.role,
    };
    rows.push(base);
    for (const [mode, role] of Object.entries(op['x-strata-mode-roles'] ?? {})) {
      rows.push({ ...base, row: `${info.operationId} (mode ${mode})`, role, bodyOverrides: { mode } });
    }
  }
  return rows;
}

export function sigilDocument(): OpenApiDocument {
  return loadSigilOpenApi();
}

export function strataDocument(): OpenApiDocument {
  return loadStrataOpenApi() as unknown as OpenApiDocument;
}
