import { Validator } from '@seriousme/openapi-schema-validator';
import { createAjv, formatErrors, type JsonSchemaValidator } from './ajv.ts';
import { AUTH_KINDS, PERMISSIONS, SECURITY_BY_AUTH, isAuthKind } from './auth.ts';
import {
  HTTP_METHODS,
  deref,
  resolveRef,
  type JsonSchema,
  type OpenApiDocument,
  type OpenApiHeader,
  type OpenApiOperation,
  type OpenApiParameter,
  type OpenApiReference,
  type OpenApiResponse,
} from './openapi.ts';
import { SIGIL } from './product.ts';
import { SERVICE_NAMES, resolveService } from './routes.ts';

/*
 * Checks of an OpenAPI 3.1 document: its structure against the official OpenAPI 3.1 schema
 * (`@seriousme/openapi-schema-validator`, so a typo like `requestbody` is refused), plus the semantic rules a
 * JSON Schema cannot express: every `$ref` resolves, path templates and path parameters agree, operationIds are
 * unique, security schemes and tags are declared, every embedded JSON Schema compiles under strict JSON Schema
 * 2020-12.
 */

const COMPONENTS_ID = 'https://sigil.dev/openapi/components';

/** The document against the official OpenAPI 3.1 schema, as `structure: <where> <what>` lines. */
async function structureProblems(doc: OpenApiDocument): Promise<string[]> {
  const result = await new Validator().validate(structuredClone(doc) as Record<string, unknown>);
  if (result.valid) return [];
  if (typeof result.errors === 'string') return [`structure: ${result.errors}`];
  return (result.errors ?? []).map((e) => {
    const named = e.params.unevaluatedProperty ?? e.params.additionalProperty ?? e.params.missingProperty;
    return `structure: ${e.instancePath || '/'} ${e.message ?? e.keyword}${typeof named === 'string' ? ` (${named})` : ''}`;
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Every `$ref` in the document with the JSON pointer of where it occurs. */
function collectRefs(node: unknown, pointer: string, out: Array<{ at: string; ref: string }>): void {
  if (Array.isArray(node)) {
    node.forEach((child, i) => collectRefs(child, `${pointer}/${i}`, out));
  } else if (isRecord(node)) {
    for (const [key, child] of Object.entries(node)) {
      const at = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (key === '$ref' && typeof child === 'string') out.push({ at: pointer || '/', ref: child });
      else collectRefs(child, at, out);
    }
  }
}

/** Deep copy with `#/components/schemas/X` rewritten for a standalone Ajv compile. */
function rewriteSchemaRefs(node: unknown, prefix: string): unknown {
  if (Array.isArray(node)) return node.map((child) => rewriteSchemaRefs(child, prefix));
  if (!isRecord(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] =
      key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')
        ? prefix + value.slice('#/components/schemas/'.length)
        : rewriteSchemaRefs(value, prefix);
  }
  return out;
}

interface Located<T> {
  at: string;
  value: T;
}

/** Every inline JSON Schema of parameters, headers, request and response bodies. */
function collectInlineSchemas(doc: OpenApiDocument): Array<Located<JsonSchema>> {
  const out: Array<Located<JsonSchema>> = [];
  const fromContent = (content: unknown, at: string): void => {
    if (!isRecord(content)) return;
    for (const [mediaType, media] of Object.entries(content)) {
      if (isRecord(media) && media.schema !== undefined) {
        out.push({ at: `${at}/content/${mediaType}/schema`, value: media.schema as JsonSchema });
      }
    }
  };
  const fromParams = (params: unknown, at: string): void => {
    if (!Array.isArray(params)) return;
    params.forEach((p, i) => {
      if (isRecord(p) && !('$ref' in p) && p.schema !== undefined) {
        out.push({ at: `${at}/${i}/schema`, value: p.schema as JsonSchema });
      }
    });
  };
  const fromResponse = (res: unknown, at: string): void => {
    if (!isRecord(res) || '$ref' in res) return;
    fromContent(res.content, at);
    if (isRecord(res.headers)) {
      for (const [name, h] of Object.entries(res.headers)) {
        if (isRecord(h) && !('$ref' in h) && h.schema !== undefined) {
          out.push({ at: `${at}/headers/${name}/schema`, value: h.schema as JsonSchema });
        }
      }
    }
  };
  const fromPathItems = (items: Record<string, unknown> | undefined, root: string): void => {
    for (const [path, item] of Object.entries(items ?? {})) {
      if (!isRecord(item)) continue;
      const itemAt = `${root}/${path.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      fromParams(item.parameters, `${itemAt}/parameters`);
      for (const method of HTTP_METHODS) {
        const op = item[method];
        if (!isRecord(op)) continue;
        const opAt = `${itemAt}/${method}`;
        fromParams(op.parameters, `${opAt}/parameters`);
        if (isRecord(op.requestBody) && !('$ref' in op.requestBody)) fromContent(op.requestBody.content, `${opAt}/requestBody`);
        if (isRecord(op.responses)) {
          for (const [status, res] of Object.entries(op.responses)) fromResponse(res, `${opAt}/responses/${status}`);
        }
      }
    }
  };
  fromPathItems(doc.paths, '/paths');
  fromPathItems(doc.webhooks, '/webhooks');
  const c = doc.components ?? {};
  for (const [name, p] of Object.entries(c.parameters ?? {})) {
    if (p.schema !== undefined) out.push({ at: `/components/parameters/${name}/schema`, value: p.schema });
  }
  for (const [name, h] of Object.entries(c.headers ?? {})) {
    if (h.schema !== undefined) out.push({ at: `/components/headers/${name}/schema`, value: h.schema });
  }
  for (const [name, r] of Object.entries(c.responses ?? {})) fromResponse(r, `/components/responses/${name}`);
  return out;
}

/** Ajv instance holding the document's component schemas under `$defs`. */
function componentsAjv(doc: OpenApiDocument): JsonSchemaValidator {
  const ajv = createAjv();
  // OpenAPI 3.1 vocabulary keywords that may appear inside schemas
  for (const keyword of ['discriminator', 'xml', 'externalDocs', 'example']) ajv.addKeyword(keyword);
  const defs = rewriteSchemaRefs(doc.components?.schemas ?? {}, '#/$defs/');
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: defs as Record<string, unknown> });
  return ajv;
}

/**
 * Problems that make the document invalid OpenAPI 3.1 (empty when valid):
 * structure, unresolved `$ref`s, path parameters, duplicate operationIds,
 * undefined security schemes or tags, JSON Schemas that do not compile.
 */
export async function checkOpenApiDocument(doc: OpenApiDocument): Promise<string[]> {
  const problems: string[] = await structureProblems(doc);

  const refs: Array<{ at: string; ref: string }> = [];
  collectRefs(doc, '', refs);
  for (const { at, ref } of refs) {
    if (!ref.startsWith('#/')) problems.push(`${at}: external $ref ${ref} is not allowed`);
    else if (resolveRef(doc, ref) === undefined) problems.push(`${at}: $ref ${ref} does not resolve`);
  }

  const operationIds = new Map<string, string>();
  const schemes = new Set(Object.keys(doc.components?.securitySchemes ?? {}));
  const tags = new Set((doc.tags ?? []).map((t) => t.name));
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!isRecord(item)) continue;
    const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
    if (new Set(templated).size !== templated.length) problems.push(`${path}: a path parameter is repeated`);
    const pathLevel = (item.parameters ?? []).map((p) => deref<OpenApiParameter>(doc, p)).filter((p) => p !== undefined);
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      const where = `${method.toUpperCase()} ${path}`;
      if (typeof op.operationId !== 'string' || op.operationId === '') {
        problems.push(`${where}: no operationId`);
      } else if (operationIds.has(op.operationId)) {
        problems.push(`${where}: operationId ${op.operationId} also used by ${operationIds.get(op.operationId)}`);
      } else {
        operationIds.set(op.operationId, where);
      }
      const opLevel = (op.parameters ?? []).map((p) => deref<OpenApiParameter>(doc, p)).filter((p) => p !== undefined);
      const seen = new Set<string>();
      for (const p of opLevel) {
        const key = `${p.in}:${p.in === 'header' ? p.name.toLowerCase() : p.name}`;
        if (seen.has(key)) problems.push(`${where}: parameter ${key} declared twice`);
        seen.add(key);
      }
      const effective = [...opLevel, ...pathLevel.filter((p) => !opLevel.some((o) => o.in === p.in && o.name === p.name))];
      const declaredPath = effective.filter((p) => p.in === 'path').map((p) => p.name);
      for (const name of templated) {
        if (!declaredPath.includes(name)) problems.push(`${where}: path parameter {${name}} is not declared`);
      }
      for (const name of declaredPath) {
        if (!templated.includes(name)) problems.push(`${where}: path parameter ${name} is not in the path template`);
      }
      for (const requirement of op.security ?? []) {
        for (const scheme of Object.keys(requirement)) {
          if (!schemes.has(scheme)) problems.push(`${where}: security scheme ${scheme} is not defined`);
        }
      }
      for (const tag of op.tags ?? []) {
        if (!tags.has(tag)) problems.push(`${where}: tag ${tag} is not declared in the top-level tags`);
      }
    }
  }

  // every JSON Schema in the document must compile under strict JSON Schema 2020-12
  if (problems.length === 0) {
    let ajv: JsonSchemaValidator;
    try {
      ajv = componentsAjv(doc);
    } catch (error) {
      return [...problems, `components/schemas: ${(error as Error).message}`];
    }
    for (const name of Object.keys(doc.components?.schemas ?? {})) {
      try {
        if (!ajv.getSchema(`${COMPONENTS_ID}#/$defs/${name}`)) problems.push(`/components/schemas/${name}: cannot compile`);
      } catch (error) {
        problems.push(`/components/schemas/${name}: ${(error as Error).message}`);
      }
    }
    for (const { at, value } of collectInlineSchemas(doc)) {
      try {
        ajv.compile(rewriteSchemaRefs(value, `${COMPONENTS_ID}#/$defs/`) as object);
      } catch (error) {
        problems.push(`${at}: ${(error as Error).message}`);
      }
    }
  }
  return problems;
}

/**
 * Validates values against the document's component schemas (strict JSON
 * Schema 2020-12), e.g. `validate('Template', body)`; returns error lines,
 * empty when valid. For tests and contract checks.
 */
export function createSchemaValidator(doc: OpenApiDocument): (schemaName: string, value: unknown) => string[] {
  const ajv = componentsAjv(doc);
  return (schemaName, value) => {
    const validate = ajv.getSchema(`${COMPONENTS_ID}#/$defs/${schemaName}`);
    if (!validate) throw new Error(`no schema ${schemaName} in components/schemas`);
    return validate(value) ? [] : formatErrors(validate.errors);
  };
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

const LIST_PARAMETERS: Record<string, { ref: string; schema: Record<string, unknown> }> = {
  limit: { ref: '#/components/parameters/Limit', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
  cursor: { ref: '#/components/parameters/Cursor', schema: { type: 'string', minLength: 1, maxLength: 200 } },
  q: { ref: '#/components/parameters/Query', schema: { type: 'string', maxLength: 200 } },
};

/**
 * Problems with the Sigil conventions (docs/api-conventions.md), empty when
 * the document follows them: extensions and security per operation, request
 * id and idempotency headers, error responses, list parameter bounds, and the
 * route table agreeing with `x-service`.
 */
export function checkSigilConventions(doc: OpenApiDocument): string[] {
  const problems: string[] = [];
  const isRef = (value: unknown, ref: string): boolean => isRecord(value) && value.$ref === ref;
  const headersOf = (res: OpenApiResponse | OpenApiReference): Record<string, OpenApiHeader | OpenApiReference> =>
    deref<OpenApiResponse>(doc, res)?.headers ?? {};

  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.startsWith('/v1/') && path !== SIGIL.keysPath) problems.push(`${path}: paths live under /v1/ (or are the keys file)`);
    for (const method of HTTP_METHODS) {
      const op: OpenApiOperation | undefined = item[method];
      if (!op) continue;
      const where = `${method.toUpperCase()} ${path}`;
      if (!/^[a-z][a-zA-Z0-9]*$/.test(op.operationId)) problems.push(`${where}: operationId ${op.operationId} is not lowerCamelCase`);
      if (!(SERVICE_NAMES as readonly string[]).includes(op['x-service'])) problems.push(`${where}: x-service ${String(op['x-service'])} unknown`);
      else if (resolveService(path) !== op['x-service']) {
        problems.push(`${where}: x-service ${op['x-service']} but the route table sends it to ${String(resolveService(path))}`);
      }
      const auth = op['x-auth'];
      if (!isAuthKind(auth)) {
        problems.push(`${where}: x-auth must be one of ${AUTH_KINDS.join(' ')}`);
        continue;
      }
      if (!sameJson(op.security, SECURITY_BY_AUTH[auth])) problems.push(`${where}: security does not match x-auth ${auth}`);
      const permission = op['x-permission'];
      if (permission !== undefined && !(PERMISSIONS as readonly string[]).includes(permission)) {
        problems.push(`${where}: x-permission ${String(permission)} unknown`);
      }
      if (permission !== undefined && (auth === 'P' || auth === 'S' || auth === 'V')) {
        problems.push(`${where}: x-permission makes no sense with x-auth ${auth}`);
      }
      const idempotent = op['x-idempotent'];
      if (idempotent !== undefined && idempotent !== true) problems.push(`${where}: x-idempotent is true or absent`);

      const params = op.parameters ?? [];
      if (!params.some((p) => isRef(p, '#/components/parameters/RequestId'))) problems.push(`${where}: no x-request-id parameter`);
      const hasIdemKey = params.some((p) => isRef(p, '#/components/parameters/IdempotencyKey'));
      if (idempotent && !hasIdemKey) problems.push(`${where}: idempotent but no Idempotency-Key parameter`);
      if (!idempotent && hasIdemKey) problems.push(`${where}: Idempotency-Key parameter on a non-idempotent operation`);

      for (const p of [...params, ...(item.parameters ?? [])]) {
        const resolved = deref<OpenApiParameter>(doc, p);
        if (!resolved || resolved.in !== 'query') continue;
        const expected = LIST_PARAMETERS[resolved.name];
        if (!expected) continue;
        if (!isRef(p, expected.ref)) problems.push(`${where}: query ${resolved.name} must use ${expected.ref}`);
        const schema = deref<Record<string, unknown>>(doc, resolved.schema as Record<string, unknown>);
        if (!sameJson(schema, expected.schema)) problems.push(`${where}: query ${resolved.name} bounds differ from ${JSON.stringify(expected.schema)}`);
      }

      const responses = op.responses;
      const statuses = Object.keys(responses);
      if (!statuses.some((s) => s.startsWith('2') || s.startsWith('3'))) problems.push(`${where}: no success response`);
      const required = new Set<string>();
      if (auth !== 'P') ['400', '401', '403'].forEach((s) => required.add(s));
      if (idempotent) ['409', '422'].forEach((s) => required.add(s));
      if (path.includes('{')) required.add('404');
      for (const s of required) if (!statuses.includes(s)) problems.push(`${where}: no ${s} response`);
      if (idempotent) {
        if (!isRef(responses['422'], '#/components/responses/IdempotencyKeyReused')) problems.push(`${where}: 422 must be IdempotencyKeyReused`);
        const r409 = responses['409'];
        if (!isRef(r409, '#/components/responses/IdempotencyInProgress') && !isRef(r409, '#/components/responses/Conflict')) {
          problems.push(`${where}: 409 must be IdempotencyInProgress or Conflict`);
        }
      }
      for (const [status, res] of Object.entries(responses)) {
        const headers = headersOf(res);
        if (!isRef(headers['x-request-id'], '#/components/headers/RequestId')) problems.push(`${where} ${status}: no x-request-id header`);
        const success = status.startsWith('2');
        const replayed = isRef(headers['Idempotent-Replayed'], '#/components/headers/IdempotentReplayed');
        if (success && idempotent && !replayed) problems.push(`${where} ${status}: no Idempotent-Replayed header`);
        if (success && !idempotent && replayed) problems.push(`${where} ${status}: Idempotent-Replayed on a non-idempotent operation`);
        if (/^[45]/.test(status)) {
          const media = deref<OpenApiResponse>(doc, res)?.content?.['application/problem+json'];
          if (!media || !isRef(media.schema, '#/components/schemas/Problem')) problems.push(`${where} ${status}: not application/problem+json Problem`);
        }
      }
    }
  }
  return problems;
}
