import { createAjv, loadSigilOpenApi, matchRoute, resolveRef, type OpenApiDocument } from '@sigil/proto';

interface ResponseObject {
  $ref?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: unknown }>;
}

interface OperationObject {
  operationId: string;
  responses: Record<string, ResponseObject>;
}

export interface ContractValidatorOptions {
  /** Where the document's paths are mounted (`/api/v1` for Strata's). Default: at the root (Sigil's). */
  prefix?: string;
}

/**
 * Checks real responses against the OpenAPI document (Sigil's by default; Strata's from `loadStrataOpenApi()` with
 * `prefix: '/api/v1'`): the status is documented for the operation, the media type is documented for that status, the
 * body matches its schema, and `x-request-id` is set. The operation is found by method and path, or named by
 * `operationId` when the request was meant for it but its path matches none (a fuzzed `..` or `%2F`).
 */
export function createContractValidator(doc: OpenApiDocument = loadSigilOpenApi(), options: ContractValidatorOptions = {}) {
  const ajv = createAjv({ strict: false, allErrors: true });
  const name = 'document';
  // Strata's integer formats: the schema's type already says what the validator needs to know.
  for (const format of ['int32', 'int64']) ajv.addFormat(format, () => true);
  ajv.addSchema(doc as object, name);
  const paths = (doc.paths ?? {}) as Record<string, Record<string, OperationObject>>;
  const templates = Object.keys(paths);
  const byId = new Map(templates.flatMap((t) => Object.entries(paths[t]!).filter(([, op]) => op?.operationId).map(([m, op]) => [op.operationId, { template: t, method: m }] as const)));
  const prefix = options.prefix ?? '';
  const checked = new Set<string>();

  function check(method: string, url: string, status: number, headers: Headers, body: unknown, operationId?: string): string[] {
    const full = new URL(url, 'http://x').pathname;
    const path = prefix && full.startsWith(prefix) ? full.slice(prefix.length) || '/' : full;
    const named = operationId === undefined ? undefined : byId.get(operationId);
    if (operationId !== undefined && !named) return [`${operationId}: no such operation in the document`];
    if (named && named.method !== method.toLowerCase()) return [`${operationId} is ${named.method.toUpperCase()}, not ${method}`];
    const template = named?.template ?? templates.find((t) => matchRoute(t, path) && paths[t]?.[method.toLowerCase()]);
    if (!template) return [`${method} ${path}: no operation in the document`];
    const operation = paths[template]![method.toLowerCase()]!;
    checked.add(`${operation.operationId} ${status}`);
    const errors: string[] = [];
    if (!headers.get('x-request-id')) errors.push('missing x-request-id header');
    const key = operation.responses[String(status)] ? String(status) : operation.responses[`${String(status)[0]}XX`] ? `${String(status)[0]}XX` : 'default';
    let response = operation.responses[key];
    if (!response) return [...errors, `${operation.operationId}: status ${status} is not documented`];
    let pointer = `/paths/${escape(template)}/${method.toLowerCase()}/responses/${key}`;
    if (response.$ref) {
      pointer = response.$ref.replace(/^#/, '');
      response = resolveRef<ResponseObject>(doc, response.$ref) ?? {};
    }
    if (!response.content || status === 204) {
      if (body !== undefined && body !== '') errors.push(`${operation.operationId} ${status}: a body was sent where none is documented`);
      return errors;
    }
    const mediaType = (headers.get('content-type') ?? '').split(';')[0]!.trim();
    if (!response.content[mediaType]) return [...errors, `${operation.operationId} ${status}: media type ${mediaType} is not documented`];
    const validate = ajv.getSchema(`${name}#${pointer}/content/${escape(mediaType)}/schema`);
    if (!validate) return [...errors, `${operation.operationId} ${status}: schema not found`];
    if (!validate(body)) {
      for (const e of validate.errors ?? []) errors.push(`${operation.operationId} ${status}: ${e.instancePath || '/'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`);
    }
    return errors;
  }

  return { check, checked };
}

function escape(token: string): string {
  return encodeURIComponent(token.replace(/~/g, '~0').replace(/\//g, '~1'));
}
