import { createAjv, loadSigilOpenApi, matchRoute, resolveRef, type OpenApiDocument } from '@sigil/proto';

interface ResponseObject {
  $ref?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: unknown }>;
}

/**
 * Checks real responses against the OpenAPI document: the status is documented for the operation,
 * the media type is documented for that status, the body matches its schema, and `x-request-id` is set.
 */
export function createContractValidator(doc: OpenApiDocument = loadSigilOpenApi()) {
  const ajv = createAjv({ strict: false, allErrors: true });
  ajv.addSchema(doc as object, 'sigil');
  const templates = Object.keys(doc.paths ?? {});
  const checked = new Set<string>();

  function check(method: string, url: string, status: number, headers: Headers, body: unknown): string[] {
    const path = new URL(url, 'http://x').pathname;
    const template = templates.find((t) => matchRoute(t, path) && (doc.paths as Record<string, Record<string, unknown>>)[t]?.[method.toLowerCase()]);
    if (!template) return [`${method} ${path}: no operation in the document`];
    const operation = (doc.paths as Record<string, Record<string, { operationId: string; responses: Record<string, ResponseObject> }>>)[template]![method.toLowerCase()]!;
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
    const validate = ajv.getSchema(`sigil#${pointer}/content/${escape(mediaType)}/schema`);
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
