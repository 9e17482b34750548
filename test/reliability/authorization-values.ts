import fc from 'fast-check';
import { deref, type OpenApiDocument } from '@sigil/proto/openapi';
import { ID_PATTERN, type MatrixOperation } from './authorization-contract.ts';

/**
 * The smallest valid value of a JSON Schema (required members only, first branch, first enum value), with the world's
 * real ids where a schema's pattern names an id prefix (`^tpl_...` takes the world's template). Authorization is
 * decided before the input is read, but a caller that passes it must meet a valid request to reach its resource: a
 * foreign caller's 404 means something only when its request was otherwise good.
 */
export interface ValueSource {
  /** A real id of this prefix (`tpl`, `env`, `org`, ...) in the world the request addresses, if the world has one. */
  idFor(prefix: string): string | undefined;
  /** Bytes for a binary body of this media type. */
  bytesFor(mediaType: string): Uint8Array;
}

type Schema = Record<string, unknown>;

/** Values tried, in order, against a string pattern before asking fast-check for a match. */
const PATTERN_CANDIDATES = ['authz-matrix', '1', 'latest', 'authz-matrix/main', '1h', '2030-01-01', 'authz_matrix'];
/** A loopback address nothing listens on: URLs in bodies must never reach outside the machine. */
export const UNREACHABLE_URL = 'http://127.0.0.1:9/authz-matrix';

function resolve(doc: OpenApiDocument, schema: unknown): Schema {
  return (deref(doc, schema as Schema) as Schema | undefined) ?? {};
}

function formatted(format: unknown): string | undefined {
  switch (format) {
    case 'email':
      return 'authz-matrix@example.com';
    case 'uri':
      return UNREACHABLE_URL;
    case 'date-time':
      return new Date(Date.UTC(2030, 0, 1)).toISOString();
    case 'date':
      return '2030-01-01';
  }
  return undefined;
}

function stringFor(schema: Schema, source: ValueSource): string {
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
  const fits = (value: string) => (!pattern || pattern.test(value)) && value.length >= Number(schema.minLength ?? 0) && value.length <= Number(schema.maxLength ?? Infinity);
  const id = typeof schema.pattern === 'string' ? ID_PATTERN.exec(schema.pattern) : null;
  if (id) return source.idFor(id[1] as string) ?? `${id[1]}_${'0'.repeat(24)}`;
  const byFormat = formatted(schema.format);
  if (byFormat !== undefined && fits(byFormat)) return byFormat;
  if (pattern) {
    const known = PATTERN_CANDIDATES.find(fits);
    if (known !== undefined) return known;
    const sampled = fc.sample(fc.stringMatching(pattern), { seed: 32, numRuns: 50 }).find(fits);
    if (sampled !== undefined) return sampled;
  }
  const min = Math.max(Number(schema.minLength ?? 1), 1);
  return 'authz matrix'.padEnd(min, 'x').slice(0, Math.max(min, Math.min(12, Number(schema.maxLength ?? 12))));
}

export function valueOf(doc: OpenApiDocument, raw: unknown, source: ValueSource, depth = 0): unknown {
  const schema = resolve(doc, raw);
  if (depth > 12) return undefined;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.default !== undefined && schema.type !== 'object' && schema.type !== 'array') return schema.default;
  const branches = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (branches?.length && !schema.type && !schema.properties) return valueOf(doc, branches[0], source, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === 'object' || schema.properties || schema.allOf) return objectOf(doc, schema, source, depth);
  switch (type) {
    case 'string':
      return stringFor(schema, source);
    case 'integer':
    case 'number':
      return Math.max(Number(schema.minimum ?? 1), 1);
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: Number(schema.minItems ?? 0) }, () => valueOf(doc, schema.items, source, depth + 1));
    default:
      return branches?.length ? valueOf(doc, branches[0], source, depth + 1) : 'authz-matrix';
  }
}

function objectOf(doc: OpenApiDocument, schema: Schema, source: ValueSource, depth: number): Record<string, unknown> {
  const parts = [schema, ...((schema.allOf as unknown[]) ?? []).map((part) => resolve(doc, part))];
  const properties: Record<string, unknown> = Object.assign({}, ...parts.map((part) => (part.properties as Record<string, unknown>) ?? {}));
  const required = new Set(parts.flatMap((part) => (part.required as string[]) ?? []));
  const minProperties = Math.max(...parts.map((part) => Number(part.minProperties ?? 0)));
  const names = Object.keys(properties);
  for (const name of names) {
    if (required.size >= minProperties) break;
    required.add(name);
  }
  const out: Record<string, unknown> = {};
  for (const name of required) out[name] = valueOf(doc, properties[name], source, depth + 1);
  // A map (`additionalProperties` a schema, no named members) that must not be empty gets one entry.
  const extra = parts.map((part) => part.additionalProperties).find((value) => value && typeof value === 'object');
  if (Object.keys(out).length < minProperties && extra) out['authz-matrix'] = valueOf(doc, extra, source, depth + 1);
  return out;
}

/** The request a cell sends: the path with its parameters filled, required query parameters, a valid body. */
export interface BuiltRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: RequestInit['body'];
  /** Every string the request carries (path values, body text): a leak check ignores an echo of what was sent. */
  sent: string;
}

export function buildRequest(doc: OpenApiDocument, op: MatrixOperation, source: ValueSource, options: { withBody: boolean }): BuiltRequest {
  let path = op.path;
  for (const param of op.pathParams) path = path.replace(`{${param.name}}`, encodeURIComponent(String(valueOf(doc, param.schema, source))));
  const query = new URLSearchParams();
  for (const param of op.queryParams) if (param.required) query.set(param.name, String(valueOf(doc, param.schema, source)));
  if (query.size) path += `?${query}`;
  const headers: Record<string, string> = {};
  let body: RequestInit['body'] | undefined;
  let sent = path;
  const spec = op.requestBody;
  if (spec && options.withBody) {
    const schema = resolve(doc, spec.schema);
    const isBinary = schema.type === 'string' && (schema.contentMediaType !== undefined || schema.format === 'binary');
    if (spec.mediaType === 'multipart/form-data') {
      const form = new FormData();
      const value = objectOf(doc, schema, source, 0);
      for (const [name, member] of Object.entries(value)) {
        const memberSchema = resolve(doc, ((schema.properties as Record<string, unknown>) ?? {})[name]);
        if (memberSchema.format === 'binary' || memberSchema.contentMediaType) form.set(name, new Blob([source.bytesFor('image/png')], { type: 'image/png' }), `${name}.png`);
        else form.set(name, typeof member === 'string' ? member : JSON.stringify(member));
      }
      body = form;
    } else if (isBinary) {
      headers['content-type'] = spec.mediaType;
      body = source.bytesFor(spec.mediaType);
    } else {
      const generated = valueOf(doc, schema, source);
      const value = generated !== null && typeof generated === 'object' && !Array.isArray(generated) ? { ...generated, ...op.bodyOverrides } : generated;
      headers['content-type'] = spec.mediaType;
      if (spec.mediaType === 'application/x-www-form-urlencoded') {
        body = new URLSearchParams(Object.entries(value as object).map(([k, v]): [string, string] => [k, String(v)])).toString();
      } else if (/json/.test(spec.mediaType)) {
        body = JSON.stringify(value);
      } else {
        // A text format (YAML): the generated value as the text itself.
        body = typeof value === 'string' ? value : JSON.stringify(value);
      }
      sent += ` ${body}`;
    }
  }
  return { method: op.method, path, headers, body, sent };
}
