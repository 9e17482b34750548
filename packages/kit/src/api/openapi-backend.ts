import type { Response } from 'express';
import { OpenAPIBackend } from 'openapi-backend';
import { JSON_SCHEMA_FORMATS } from '@sigil/proto/ajv';

/** What a handler answers: stored for idempotent replays, or written as is. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * openapi-backend for one of our OpenAPI 3.1 documents: requests validated (types coerced), unknown
 * keywords refused, with the formats proto's schemas use. The documents themselves are validated by
 * proto's tests; openapi-backend's own check only knows OpenAPI 3.0, hence `quick`.
 */
export function createOpenApiBackend(definition: Record<string, unknown>): OpenAPIBackend {
  return new OpenAPIBackend({
    definition: definition as never,
    validate: true,
    coerceTypes: true,
    quick: true,
    strict: true,
    customizeAjv: (ajv) => {
      for (const [name, format] of Object.entries(JSON_SCHEMA_FORMATS)) ajv.addFormat(name, format);
      ajv.addFormat('int64', { type: 'number', validate: Number.isSafeInteger });
      ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31 });
      return ajv;
    },
  });
}

/** Writes a reply: no body for 204 or an empty one, strings and bytes (a PDF, say) as they are, anything else as JSON. */
export function sendReply(res: Response, reply: Reply): void {
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  if (reply.status === 204 || reply.body === undefined || reply.body === null) {
    res.status(reply.status).end();
    return;
  }
  if (typeof reply.body === 'string' || Buffer.isBuffer(reply.body)) {
    res.status(reply.status).send(reply.body);
    return;
  }
  res.status(reply.status).json(reply.body);
}

type Router = OpenAPIBackend['router'];
type RouterOperation = ReturnType<Router['getOperations']>[number];

/**
 * openapi-backend flattens every operation of the document and compiles a regular expression per path template on
 * every request (about 1.5 ms for our 96 operations). The document never changes once loaded: flatten once, compile
 * once, match with the same rules (exact path first, then templates by specificity, 404, 405).
 */
export function precompileRouting(api: OpenAPIBackend): void {
  const router: Router = api.router;
  const operations = router.getOperations();
  const byId = new Map(operations.map((op) => [op.operationId, op]));
  const templates = operations
    .map((op) => ({ op, pattern: new RegExp(`^${op.path.replace(/\{[^}]+\}/g, '\0').split('\0').map(escapeRegExp).join('[^/]+')}$`), literal: op.path.replace(/\{.*?\}/g, '').length }))
    .sort((a, b) => b.literal - a.literal);
  router.getOperations = () => operations;
  router.getOperation = (operationId: string) => byId.get(operationId);
  router.matchOperation = ((request: Parameters<Router['matchOperation']>[0], strict?: boolean): RouterOperation | undefined => {
    const req = router.normalizeRequest(request);
    const fail = (reason: string): undefined => {
      if (strict) throw Error(reason);
      return undefined;
    };
    // Our documents are mounted at the router's root ('/'): every path is under it.
    const path = router.normalizePath(req.path);
    const exact = operations.find((op) => op.path === path && op.method === req.method);
    if (exact) return exact;
    const candidates = templates.filter(({ pattern }) => pattern.test(path));
    if (candidates.length === 0) return fail('404-notFound: no route matches request');
    return candidates.find(({ op }) => op.method === req.method)?.op ?? fail('405-methodNotAllowed: this method is not registered for the route');
  }) as Router['matchOperation'];
}

function escapeRegExp(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
