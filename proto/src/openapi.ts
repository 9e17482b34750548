import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { AuthKind, Permission } from './auth.ts';
import type { ServiceName } from './routes.ts';

/** Absolute path of the Sigil OpenAPI 3.1 document. */
export const sigilOpenApiPath: string = fileURLToPath(new URL('../openapi/sigil.v1.yaml', import.meta.url));

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;
export type LowerHttpMethod = (typeof HTTP_METHODS)[number];
export type HttpMethod = Uppercase<LowerHttpMethod>;

export interface OpenApiReference {
  $ref: string;
  summary?: string;
  description?: string;
}

/** A JSON Schema 2020-12 object as OpenAPI 3.1 uses it (kept open on purpose). */
export type JsonSchema = { [keyword: string]: unknown } | boolean;

export interface OpenApiParameter {
  name: string;
  in: 'query' | 'header' | 'path' | 'cookie';
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
  [extension: string]: unknown;
}

export interface OpenApiMediaType {
  schema?: JsonSchema;
  example?: unknown;
  examples?: Record<string, unknown>;
  encoding?: Record<string, unknown>;
}

export interface OpenApiHeader {
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
  [extension: string]: unknown;
}

export interface OpenApiResponse {
  description: string;
  headers?: Record<string, OpenApiHeader | OpenApiReference>;
  content?: Record<string, OpenApiMediaType>;
  [extension: string]: unknown;
}

export interface OpenApiRequestBody {
  required?: boolean;
  description?: string;
  content: Record<string, OpenApiMediaType>;
}

export interface OpenApiOperation {
  operationId: string;
  summary?: string;
  description?: string;
  tags?: string[];
  'x-service': ServiceName;
  'x-auth': AuthKind;
  'x-permission'?: Permission;
  'x-idempotent'?: boolean;
  security: Array<Record<string, string[]>>;
  parameters?: Array<OpenApiParameter | OpenApiReference>;
  requestBody?: OpenApiRequestBody | OpenApiReference;
  responses: Record<string, OpenApiResponse | OpenApiReference>;
  [extension: string]: unknown;
}

export type OpenApiPathItem = { [M in LowerHttpMethod]?: OpenApiOperation } & {
  parameters?: Array<OpenApiParameter | OpenApiReference>;
  summary?: string;
  description?: string;
};

/** A minimal typing of an OpenAPI 3.1 document, sufficient for proto's helpers. */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; [key: string]: unknown };
  paths: Record<string, OpenApiPathItem>;
  webhooks?: Record<string, OpenApiPathItem>;
  components?: {
    schemas?: Record<string, JsonSchema>;
    parameters?: Record<string, OpenApiParameter>;
    headers?: Record<string, OpenApiHeader>;
    responses?: Record<string, OpenApiResponse>;
    securitySchemes?: Record<string, Record<string, unknown>>;
    [key: string]: unknown;
  };
  tags?: Array<{ name: string; description?: string }>;
  [key: string]: unknown;
}

export interface OperationInfo {
  operationId: string;
  method: HttpMethod;
  path: string;
  service: ServiceName;
  auth: AuthKind;
  permission?: Permission;
  idempotent: boolean;
}

let cached: OpenApiDocument | undefined;

/**
 * The parsed Sigil document. Parsed once; every call returns a fresh deep
 * copy, so callers may mutate (e.g. openapi-backend dereferences in place).
 */
export function loadSigilOpenApi(): OpenApiDocument {
  cached ??= parse(readFileSync(sigilOpenApiPath, 'utf8')) as OpenApiDocument;
  return structuredClone(cached);
}

/** Every operation under `paths`, in document order. */
export function listOperations(doc: OpenApiDocument): OperationInfo[] {
  const out: OperationInfo[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      const info: OperationInfo = {
        operationId: op.operationId,
        method: method.toUpperCase() as HttpMethod,
        path,
        service: op['x-service'],
        auth: op['x-auth'],
        idempotent: op['x-idempotent'] === true,
      };
      if (op['x-permission'] !== undefined) info.permission = op['x-permission'];
      out.push(info);
    }
  }
  return out;
}

/** Resolves a local `$ref` (`#/components/...`) against the document. */
export function resolveRef<T = unknown>(doc: OpenApiDocument, ref: string): T | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node as T;
}

/** Follows `$ref` chains until a non-reference value (or undefined when broken). */
export function deref<T>(doc: OpenApiDocument, value: T | OpenApiReference): T | undefined {
  let current: unknown = value;
  for (let depth = 0; depth < 32; depth++) {
    if (current === null || typeof current !== 'object' || !('$ref' in current)) return current as T;
    const ref = (current as OpenApiReference).$ref;
    current = resolveRef(doc, ref);
    if (current === undefined) return undefined;
  }
  return undefined;
}
