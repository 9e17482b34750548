import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describeInput } from '../units.ts';
import { RESOURCE_KINDS, isResourceKind, type ResourceKind } from './kinds.ts';


/** A JSON Schema object as read from `proto/resources/`. */
export type ResourceJsonSchema = { [keyword: string]: unknown };

const resourcesDir = new URL('../../resources/', import.meta.url);

/** Absolute path of the schema of shared definitions. */
export const commonResourceSchemaPath: string = fileURLToPath(new URL('common.schema.json', resourcesDir));

/** Absolute path of one kind's JSON Schema (`proto/resources/<kind in lower case>.schema.json`). */
export function resourceSchemaPath(kind: ResourceKind): string {
  return fileURLToPath(new URL(`${kind.toLowerCase()}.schema.json`, resourcesDir));
}

function readJson(path: string): ResourceJsonSchema {
  return JSON.parse(readFileSync(path, 'utf8')) as ResourceJsonSchema;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** common.schema.json as stored (frozen). */
export const COMMON_RESOURCE_SCHEMA: Readonly<ResourceJsonSchema> = deepFreeze(readJson(commonResourceSchemaPath));

/**
 * Each kind's schema exactly as stored (frozen): it references `common.schema.json#/$defs/...`
 * by `$ref`. For a self-contained copy use `loadResourceSchema(kind)`.
 */
export const RESOURCE_SCHEMAS: Readonly<Record<ResourceKind, Readonly<ResourceJsonSchema>>> = deepFreeze(
  Object.fromEntries(RESOURCE_KINDS.map((kind) => [kind, readJson(resourceSchemaPath(kind))])) as Record<ResourceKind, ResourceJsonSchema>,
);

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function resolvePointer(doc: unknown, pointer: string): unknown {
  if (pointer === '' || pointer === '/') return doc;
  let node: unknown = doc;
  for (const raw of pointer.replace(/^\//, '').split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isPlainObject(node) && !Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * A copy of `schema` with every `$ref` replaced by what it points to (keywords beside a `$ref`
 * win over the target's), `$defs` dropped. `documents` maps schema `$id`s to schemas; a `$ref` is
 * resolved against the `$id` of the document it appears in.
 */
export function inlineSchemaRefs(schema: ResourceJsonSchema, documents: ReadonlyMap<string, ResourceJsonSchema>): ResourceJsonSchema {
  const rootId = typeof schema.$id === 'string' ? schema.$id : 'urn:strata:schema';
  const lookup = (id: string): ResourceJsonSchema | undefined => documents.get(id) ?? (id === rootId ? schema : undefined);
  const VALUES = new Set(['default', 'const', 'enum', 'examples']);
  const visit = (node: unknown, base: string, stack: readonly string[]): unknown => {
    if (Array.isArray(node)) return node.map((item) => visit(item, base, stack));
    if (!isPlainObject(node)) return node;
    const out: Record<string, unknown> = {};
    if (typeof node.$ref === 'string') {
      const url = new URL(node.$ref, base);
      const docId = url.href.slice(0, url.href.length - url.hash.length);
      const doc = lookup(docId);
      if (!doc) throw new Error(`schema ${base}: cannot resolve $ref ${node.$ref}`);
      if (stack.includes(url.href)) throw new Error(`schema ${base}: circular $ref ${node.$ref}`);
      const target = resolvePointer(doc, decodeURIComponent(url.hash.slice(1)));
      if (!isPlainObject(target)) throw new Error(`schema ${base}: $ref ${node.$ref} does not point at a schema`);
      const inlined = visit(target, docId, [...stack, url.href]) as Record<string, unknown>;
      delete inlined.$id;
      delete inlined.$schema;
      Object.assign(out, inlined);
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' || key === '$defs') continue;
      if (VALUES.has(key)) out[key] = structuredClone(value);
      else if (key === 'properties' && isPlainObject(value)) {
        out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, visit(sub, base, stack)]));
      } else out[key] = visit(value, base, stack);
    }
    return out;
  };
  return visit(schema, rootId, []) as ResourceJsonSchema;
}

let schemaDocuments: Map<string, ResourceJsonSchema> | undefined;

function documentsById(): Map<string, ResourceJsonSchema> {
  if (!schemaDocuments) {
    schemaDocuments = new Map();
    for (const doc of [COMMON_RESOURCE_SCHEMA, ...Object.values(RESOURCE_SCHEMAS)]) {
      schemaDocuments.set(String(doc.$id), doc as ResourceJsonSchema);
    }
  }
  return schemaDocuments;
}

/**
 * A fresh, self-contained copy of one kind's schema: every `$ref` (to its own `$defs` or to
 * common.schema.json) inlined, no `$defs` left. Still JSON Schema 2020-12 with Strata's custom
 * formats (`cron5`, `iana-time-zone`, `regex`) and the `quantityRange` keyword.
 */
export function loadResourceSchema(kind: ResourceKind): ResourceJsonSchema {
  if (!isResourceKind(kind)) throw new Error(`unknown resource kind ${describeInput(kind)}`);
  return inlineSchemaRefs(structuredClone(RESOURCE_SCHEMAS[kind]) as ResourceJsonSchema, documentsById());
}
