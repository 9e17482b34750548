import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { HTTP_METHODS, type LowerHttpMethod } from './openapi.ts';
import { STRATA, isStrataRole, type StrataRole } from './strata.ts';

/** Absolute path of the Strata console API document (OpenAPI 3.1, paths relative to `/api/v1`). */
export const STRATA_OPENAPI_PATH: string = fileURLToPath(new URL('../openapi/strata.v1.yaml', import.meta.url));

/** The services that serve the console API (`x-strata-service`). */
export const STRATA_API_SERVICES = ['backup-catalog', 'sandbox'] as const;
export type StrataApiService = (typeof STRATA_API_SERVICES)[number];

/** The extension naming the service that serves an operation. */
export const STRATA_SERVICE_EXTENSION = 'x-strata-service';

export interface StrataOperationInfo {
  operationId: string;
  /** Lowercase HTTP method, e.g. `post`. */
  method: LowerHttpMethod;
  /** Path relative to `/api/v1`, e.g. `/targets/{ns}/{name}`. */
  path: string;
  /** The minimum role (`x-strata-role`). */
  role: StrataRole;
  service: StrataApiService;
  tags: string[];
}

let rawText: string | undefined;
let parsed: Record<string, unknown> | undefined;

/** The document's raw YAML text (as served by `GET /api/v1/openapi.yaml`). */
export function strataOpenApiYaml(): string {
  rawText ??= readFileSync(STRATA_OPENAPI_PATH, 'utf8');
  return rawText;
}

/** The parsed document. Parsed once; every call returns a fresh deep copy, so callers may mutate it. */
export function loadStrataOpenApi(): Record<string, unknown> {
  parsed ??= parse(strataOpenApiYaml()) as Record<string, unknown>;
  return structuredClone(parsed);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isApiService(value: unknown): value is StrataApiService {
  return typeof value === 'string' && (STRATA_API_SERVICES as readonly string[]).includes(value);
}

/**
 * Every operation of the document (default: the Strata document), in document order.
 * Throws when an operation lacks an operationId, a valid `x-strata-role` or a valid `x-strata-service`.
 */
export function listStrataOperations(doc: Record<string, unknown> = loadStrataOpenApi()): StrataOperationInfo[] {
  const out: StrataOperationInfo[] = [];
  const paths = isRecord(doc.paths) ? doc.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isRecord(item)) continue;
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!isRecord(op)) continue;
      const where = `${method.toUpperCase()} ${path}`;
      const { operationId } = op;
      const role = op[STRATA.roleExtension];
      const service = op[STRATA_SERVICE_EXTENSION];
      if (typeof operationId !== 'string' || operationId === '') throw new Error(`${where}: no operationId`);
      if (!isStrataRole(role)) throw new Error(`${where}: ${STRATA.roleExtension} ${String(role)} is not a role`);
      if (!isApiService(service)) throw new Error(`${where}: ${STRATA_SERVICE_EXTENSION} ${String(service)} is not a service`);
      const tags = Array.isArray(op.tags) ? op.tags.filter((t): t is string => typeof t === 'string') : [];
      out.push({ operationId, method, path, role, service, tags });
    }
  }
  return out;
}
