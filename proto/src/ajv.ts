import { createRequire } from 'node:module';

/**
 * A minimal typing of the parts of Ajv 8 (`ajv/dist/2020`) proto uses. Typed
 * locally because the hoisted `ajv` in this repository is Ajv 6 (eslint's),
 * whose types have no `dist/2020`.
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

type Ajv2020Constructor = new (options?: Record<string, unknown>) => JsonSchemaValidator;

const require = createRequire(import.meta.url);

/**
 * Where Ajv 8 is found. `@sigil/proto` declares `ajv@^8`; until `npm install`
 * has placed it under `proto/node_modules`, a bare `ajv` resolves to the
 * hoisted Ajv 6, which has no `dist/2020`, and we fall back to the Ajv 8 that
 * ships with packages already installed in the workspace.
 */
const AJV_HOSTS = ['openapi-backend', 'ajv-formats', 'openapi-schema-validator'] as const;

function loadAjv2020(): Ajv2020Constructor {
  const attempts: string[] = [];
  const tryLoad = (req: NodeJS.Require, from: string): Ajv2020Constructor | undefined => {
    try {
      const mod = req('ajv/dist/2020') as { default?: unknown; Ajv2020?: unknown };
      const ctor = mod.default ?? mod.Ajv2020 ?? mod;
      if (typeof ctor === 'function') return ctor as Ajv2020Constructor;
      attempts.push(`${from}: no constructor exported`);
    } catch (error) {
      attempts.push(`${from}: ${(error as Error).message.split('\n')[0]}`);
    }
    return undefined;
  };
  const direct = tryLoad(require, '@sigil/proto');
  if (direct) return direct;
  for (const host of AJV_HOSTS) {
    let hostRequire: NodeJS.Require;
    try {
      hostRequire = createRequire(require.resolve(`${host}/package.json`));
    } catch {
      attempts.push(`${host}: not installed`);
      continue;
    }
    const found = tryLoad(hostRequire, host);
    if (found) return found;
  }
  throw new Error(`Ajv 8 (ajv/dist/2020) not found; run npm install. Tried: ${attempts.join('; ')}`);
}

let Ajv2020: Ajv2020Constructor | undefined;

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
  Ajv2020 ??= loadAjv2020();
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true, ...options });
  for (const [name, format] of Object.entries(JSON_SCHEMA_FORMATS)) ajv.addFormat(name, format);
  return ajv;
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
