import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * The parts of Ajv 8 (`ajv/dist/2020`, a dependency of proto) that proto's callers use: a narrow interface, so
 * callers never depend on which Ajv copy a package resolves (eslint brings an Ajv 6 to the root).
 */
export interface JsonSchemaError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

export interface JsonSchemaValidateFunction {
  (data: unknown): boolean;
  errors?: JsonSchemaError[] | null;
}

export interface JsonSchemaValidator {
  compile(schema: object | boolean): JsonSchemaValidateFunction;
  addSchema(schema: object | object[], key?: string): JsonSchemaValidator;
  getSchema(keyRef: string): JsonSchemaValidateFunction | undefined;
  addFormat(name: string, format: RegExp | ((value: string) => boolean)): JsonSchemaValidator;
  addKeyword(keyword: string): JsonSchemaValidator;
  errorsText(errors?: JsonSchemaError[] | null, options?: { separator?: string; dataVar?: string }): string;
}

// RFC 3339 date-time with a mandatory offset; checked for calendar validity below.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$/;
const URI_REFERENCE = /^[^\s]*$/;

function isDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 60) return false;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day >= 1 && day <= daysInMonth;
}

/**
 * The string formats used by proto's schemas. Pass them to any Ajv instance
 * (e.g. openapi-backend's `customizeAjv`) so formats are checked, not ignored.
 */
export const JSON_SCHEMA_FORMATS: Readonly<Record<string, RegExp | ((value: string) => boolean)>> = {
  'date-time': isDateTime,
  email: EMAIL,
  uri: URI,
  'uri-reference': URI_REFERENCE,
};

/**
 * A strict JSON Schema 2020-12 validator with the formats proto's schemas use
 * (`date-time`, `email`, `uri`, `uri-reference`). Strict mode rejects unknown
 * keywords and formats, so a typo in a schema fails at compile time.
 */
export function createAjv(options: Record<string, unknown> = {}): JsonSchemaValidator {
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true, ...options });
  // The standard formats from ajv-formats; date-time stays ours (an offset is mandatory, the calendar is checked).
  addFormats.default(ajv, ['email', 'uri', 'uri-reference']);
  ajv.addFormat('date-time', isDateTime);
  return ajv as unknown as JsonSchemaValidator;
}

/** Ajv errors as `"<instancePath> <message>"` lines. */
export function formatErrors(errors: JsonSchemaError[] | null | undefined, root = ''): string[] {
  return (errors ?? []).map((e) => {
    const where = `${root}${e.instancePath}` || '/';
    const extra =
      e.keyword === 'additionalProperties' && typeof e.params.additionalProperty === 'string'
        ? ` (${e.params.additionalProperty})`
        : '';
    return `${where} ${e.message ?? e.keyword}${extra}`;
  });
}
