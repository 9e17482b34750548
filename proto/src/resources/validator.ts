import { createAjv, type JsonSchemaValidateFunction, type JsonSchemaValidator } from '../ajv.ts';
import { BYTE_QUANTITY_PATTERN, parseQuantity } from '../units.ts';
import { isCron5, isIanaTimeZone, regexProblem } from './formats.ts';
import { RESOURCE_KINDS, type ResourceKind } from './kinds.ts';
import { COMMON_RESOURCE_SCHEMA, RESOURCE_SCHEMAS } from './schemas.ts';
import type { AnyResource } from './types.ts';

export interface ResourceValidationError {
  /** Dotted field path, e.g. `spec.full.schedule`, `spec.encryption.ageRecipients[0]`; '' for the document itself. */
  path: string;
  /** An English sentence that starts with the path, e.g. `spec.compression.threads: must be at most 64`. */
  message: string;
}

export type ResourceValidation = { ok: true; resource: AnyResource } | { ok: false; errors: ResourceValidationError[] };

interface KeywordDefinition {
  keyword: string;
  type?: string | string[];
  schemaType?: string | string[];
  metaSchema?: object;
  validate: (schema: never, data: never) => boolean;
}

/** The keywords Kubernetes reads and Ajv only carries (annotations). */
export const KUBERNETES_SCHEMA_KEYWORDS = ['x-kubernetes-validations', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys'] as const;

export function quantityRangeProblem(range: { minimum?: string; maximum?: string }, value: string): string | undefined {
  let bytes: number;
  try {
    bytes = parseQuantity(value);
  } catch {
    return undefined; // the pattern reports it
  }
  if (range.minimum !== undefined && bytes < parseQuantity(range.minimum)) return `must be at least ${range.minimum} (got ${JSON.stringify(value)})`;
  if (range.maximum !== undefined && bytes > parseQuantity(range.maximum)) return `must be at most ${range.maximum} (got ${JSON.stringify(value)})`;
  return undefined;
}

/**
 * An Ajv 2020 instance that knows Strata's resource schemas: strict, all errors, defaults applied
 * (`useDefaults`), verbose errors (for messages), formats `cron5`, `iana-time-zone`, `regex`, the
 * keyword `quantityRange` and the Kubernetes annotation keywords; common.schema.json is added.
 */
export function createResourceAjv(): JsonSchemaValidator {
  const ajv = createAjv({ useDefaults: true, verbose: true });
  ajv.addFormat('cron5', isCron5);
  ajv.addFormat('iana-time-zone', isIanaTimeZone);
  ajv.addFormat('regex', (value: string) => regexProblem(value) === undefined);
  for (const keyword of KUBERNETES_SCHEMA_KEYWORDS) ajv.addKeyword(keyword);
  const withDefinitions = ajv as unknown as { addKeyword(definition: KeywordDefinition): unknown };
  withDefinitions.addKeyword({
    keyword: 'quantityRange',
    type: 'string',
    schemaType: 'object',
    metaSchema: {
      type: 'object',
      additionalProperties: false,
      properties: { minimum: { type: 'string', pattern: BYTE_QUANTITY_PATTERN.source }, maximum: { type: 'string', pattern: BYTE_QUANTITY_PATTERN.source } },
    },
    validate: ((range: { minimum?: string; maximum?: string }, value: string) => quantityRangeProblem(range, value) === undefined) as KeywordDefinition['validate'],
  });
  ajv.addSchema(structuredClone(COMMON_RESOURCE_SCHEMA) as object);
  return ajv;
}

let validators: Map<ResourceKind, JsonSchemaValidateFunction> | undefined;

export function validatorFor(kind: ResourceKind): JsonSchemaValidateFunction {
  if (!validators) {
    const ajv = createResourceAjv();
    validators = new Map(RESOURCE_KINDS.map((k) => [k, ajv.compile(structuredClone(RESOURCE_SCHEMAS[k]) as object)]));
  }
  return validators.get(kind) as JsonSchemaValidateFunction;
}
