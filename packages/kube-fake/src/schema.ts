/**
 * What the API server does with a custom resource's body and its CRD's structural schema (openAPIV3Schema): it prunes
 * fields the schema does not name (and nulls where nothing is nullable) without a word, fills in defaults, then
 * validates what is left and answers 422 Invalid with one cause per field. The validation covers the keywords the project's CRDs use; its
 * messages follow kube-openapi's wording.
 */
export interface Schema {
  type?: string;
  default?: unknown;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
}

export interface FieldError {
  field: string;
  reason: 'FieldValueRequired' | 'FieldValueNotSupported' | 'FieldValueTypeInvalid' | 'FieldValueInvalid' | 'FieldValueDuplicate';
  detail: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
/** The root's apiVersion, kind and metadata are never pruned. */
const ROOT_KEPT = new Set(['apiVersion', 'kind', 'metadata']);

export function prune(value: unknown, schema: Schema | undefined, root = false): unknown {
  if (!schema || schema['x-kubernetes-preserve-unknown-fields']) return value;
  if (Array.isArray(value)) return value.map((item) => prune(item, schema.items));
  if (!isObject(value)) return value;
  const result: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (root && ROOT_KEPT.has(key)) {
      result[key] = child;
      continue;
    }
    const childSchema = schema.properties?.[key] ?? (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
    if (!childSchema && schema.additionalProperties !== true) continue;
    if (child === null && !childSchema?.nullable) continue;
    result[key] = prune(child, childSchema);
  }
  return result;
}

/** Fills in the schema's defaults, top down (a defaulted object gets its own properties' defaults too). */
export function applyDefaults(value: unknown, schema: Schema | undefined, root = false): unknown {
  if (!schema) return value;
  if (Array.isArray(value)) return value.map((item) => applyDefaults(item, schema.items));
  if (!isObject(value)) return value;
  const result: Record<string, unknown> = { ...value };
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    if (root && ROOT_KEPT.has(key)) continue;
    if (result[key] === undefined && child.default !== undefined) result[key] = structuredClone(child.default);
    if (result[key] !== undefined) result[key] = applyDefaults(result[key], child);
  }
  if (isObject(schema.additionalProperties)) {
    for (const key of Object.keys(result)) if (!schema.properties?.[key]) result[key] = applyDefaults(result[key], schema.additionalProperties);
  }
  return result;
}

/** Go's %#v of the value as kube-openapi prints it in "Invalid value: ...". */
const shown = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value) : String(value));

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(schema: Schema, value: unknown): boolean {
  if (schema['x-kubernetes-int-or-string']) return typeof value === 'string' || Number.isInteger(value);
  const actual = typeOf(value);
  if (!schema.type) return true;
  if (schema.type === 'number') return actual === 'number' || actual === 'integer';
  return actual === schema.type;
}

const DATE_TIME = /^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/;

function checkScalar(schema: Schema, value: unknown, path: string, errors: FieldError[]): void {
  const invalid = (detail: string) => errors.push({ field: path, reason: 'FieldValueInvalid', detail: `Invalid value: ${shown(value)}: ${path} in body ${detail}` });
  if (schema.enum && !schema.enum.some((allowed) => allowed === value)) {
    errors.push({ field: path, reason: 'FieldValueNotSupported', detail: `Unsupported value: ${shown(value)}: supported values: ${schema.enum.map(shown).join(', ')}` });
  }
  if (typeof value === 'string') {
    if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value)) invalid(`should match '${schema.pattern}'`);
    if (schema.minLength !== undefined && [...value].length < schema.minLength) invalid(`should be at least ${schema.minLength} chars long`);
    if (schema.maxLength !== undefined && [...value].length > schema.maxLength) invalid(`should be at most ${schema.maxLength} chars long`);
    if (schema.format === 'date-time' && !DATE_TIME.test(value)) {
      errors.push({ field: path, reason: 'FieldValueInvalid', detail: `Invalid value: ${shown(value)}: ${path} in body must be of type date-time: ${shown(value)}` });
    }
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) invalid(`should be greater than or equal to ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) invalid(`should be less than or equal to ${schema.maximum}`);
  }
}

/** `x-kubernetes-list-type`: a set holds each value once, a map each combination of its keys once. */
function checkListType(schema: Schema, list: unknown[], path: string, errors: FieldError[]): void {
  const kind = schema['x-kubernetes-list-type'];
  if (kind !== 'set' && kind !== 'map') return;
  const keys = schema['x-kubernetes-list-map-keys'] ?? [];
  const seen = new Set<string>();
  list.forEach((item, index) => {
    const identity = kind === 'set' ? item : Object.fromEntries(keys.map((k) => [k, (item as Record<string, unknown>)?.[k]]));
    const id = JSON.stringify(identity);
    if (!seen.has(id)) {
      seen.add(id);
      return;
    }
    // Go's %#v of the value, or of the map of key values.
    const printed = kind === 'set' ? shown(item) : `map[string]interface {}{${keys.map((k) => `"${k}":${shown((item as Record<string, unknown>)?.[k])}`).join(', ')}}`;
    errors.push({ field: `${path}[${index}]`, reason: 'FieldValueDuplicate', detail: `Duplicate value: ${printed}` });
  });
}

export function validate(value: unknown, schema: Schema | undefined, path = '', errors: FieldError[] = []): FieldError[] {
  if (!schema) return errors;
  const at = (key: string) => (path ? `${path}.${key}` : key);
  if (value === null && schema.nullable) return errors;
  if (!typeMatches(schema, value)) {
    errors.push({ field: path, reason: 'FieldValueTypeInvalid', detail: `Invalid value: ${shown(typeOf(value))}: ${path} in body must be of type ${schema.type}: ${shown(typeOf(value))}` });
    return errors;
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) errors.push({ field: path, reason: 'FieldValueInvalid', detail: `Invalid value: ${value.length}: ${path} in body should have at least ${schema.minItems} items` });
    if (schema.maxItems !== undefined && value.length > schema.maxItems) errors.push({ field: path, reason: 'FieldValueInvalid', detail: `Invalid value: ${value.length}: ${path} in body should have at most ${schema.maxItems} items` });
    value.forEach((item, index) => validate(item, schema.items, `${path}[${index}]`, errors));
    checkListType(schema, value, path, errors);
    return errors;
  }
  if (isObject(value)) {
    for (const key of schema.required ?? []) if (value[key] === undefined) errors.push({ field: at(key), reason: 'FieldValueRequired', detail: 'Required value' });
    for (const [key, child] of Object.entries(value)) {
      if (!path && ROOT_KEPT.has(key)) continue;
      validate(child, schema.properties?.[key] ?? (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined), at(key), errors);
    }
    return errors;
  }
  checkScalar(schema, value, path, errors);
  return errors;
}
