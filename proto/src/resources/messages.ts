import type { JsonSchemaError } from '../ajv.ts';
import { describeInput } from '../units.ts';
import { cronProblem, regexProblem } from './formats.ts';
import { COMMON_RESOURCE_SCHEMA, isPlainObject } from './schemas.ts';
import { quantityRangeProblem, type ResourceValidationError } from './validator.ts';

/** What a schema pattern means, for error messages. Every pattern in the schemas has an entry (tested). */
const COMMON_DEFS = COMMON_RESOURCE_SCHEMA.$defs as Record<string, { pattern?: string }>;
const DNS_LABEL_TEXT = "is not a valid name (a DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit)";
export const PATTERN_DESCRIPTIONS: ReadonlyMap<string, string> = new Map([
  [String(COMMON_DEFS.Duration?.pattern), 'is not a duration (a number with a unit ns, us, ms, s, m, h, d or w, e.g. 90s, 1h30m, 7d)'],
  [String(COMMON_DEFS.ByteQuantity?.pattern), 'is not a byte quantity (a number with an optional k, M, G, T, Ki, Mi, Gi or Ti suffix, e.g. 16Mi)'],
  [String(COMMON_DEFS.ResourceQuantity?.pattern), 'is not a Kubernetes resource quantity (e.g. 500m, 2, 512Mi, 4Gi)'],
  [String(COMMON_DEFS.DNSLabel?.pattern), DNS_LABEL_TEXT],
  [String(COMMON_DEFS.DNSSubdomain?.pattern), "is not a valid name (a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)"],
  [String(COMMON_DEFS.SecretKey?.pattern), "is not a valid Secret key (letters, digits, '-', '_' and '.')"],
  ['^age1[02-9ac-hj-np-z]{58}$', 'is not an age recipient (age1 followed by 58 lowercase bech32 characters)'],
  ['^https?://[^\\s]+$', 'is not an http:// or https:// URL'],
  ['^(inventory-matches|schema-matches|row-estimates-within-[0-9]+pct|target-checks)$', 'is not a built-in check (inventory-matches, schema-matches, row-estimates-within-<N>pct, target-checks)'],
  ['^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$', DNS_LABEL_TEXT.replace('a DNS-1123 label:', 'empty or a DNS-1123 label:')],
]);

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean (true or false)',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

export function jsonValue(value: unknown, max = 80): string {
  const text = describeInput(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function joinPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  const segment = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? key : JSON.stringify(key);
  if (segment.startsWith('"')) return `${parent}[${segment}]`;
  return parent === '' ? segment : `${parent}.${segment}`;
}

/** `/spec/encryption/ageRecipients/0` → `spec.encryption.ageRecipients[0]` (array indexes where the data has arrays). */
function dottedPath(pointer: string, data: unknown): string {
  if (pointer === '') return '';
  let path = '';
  let node: unknown = data;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node) && /^\d+$/.test(key)) {
      path = joinPath(path, Number(key));
      node = node[Number(key)];
    } else {
      path = joinPath(path, key);
      node = isPlainObject(node) ? node[key] : undefined;
    }
  }
  return path;
}

export function problem(path: string, text: string): ResourceValidationError {
  return { path, message: path === '' ? text : `${path}: ${text}` };
}

export function describeAjvError(error: JsonSchemaError & { data?: unknown; schema?: unknown; parentSchema?: Record<string, unknown> }, doc: unknown): ResourceValidationError | undefined {
  const at = dottedPath(error.instancePath, doc);
  const params = error.params;
  const data = error.data;
  switch (error.keyword) {
    case 'required':
      return problem(joinPath(at, String(params.missingProperty)), 'is required');
    case 'additionalProperties':
      return problem(joinPath(at, String(params.additionalProperty)), 'is not a known field');
    case 'type': {
      const types = String(params.type).split(',');
      return problem(at, `must be ${types.map((t) => TYPE_WORDS[t] ?? t).join(' or ')} (got ${jsonValue(data)})`);
    }
    case 'const':
      return problem(at, `must be ${jsonValue(params.allowedValue)} (got ${jsonValue(data)})`);
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).map((v) => jsonValue(v));
      return problem(at, `${jsonValue(data)} is not one of ${allowed.join(', ')}`);
    }
    case 'pattern': {
      const pattern = String(params.pattern);
      return problem(at, `${jsonValue(data)} ${PATTERN_DESCRIPTIONS.get(pattern) ?? `does not match the pattern ${pattern}`}`);
    }
    case 'format': {
      const value = String(data);
      switch (params.format) {
        case 'cron5':
          return problem(at, `${jsonValue(value)} ${cronProblem(value) ?? 'is not a valid cron expression'}`);
        case 'iana-time-zone':
          return problem(at, `${jsonValue(value)} is not an IANA time zone (e.g. UTC, Europe/Berlin, America/New_York)`);
        case 'date-time':
          return problem(at, `${jsonValue(value)} is not an RFC 3339 date-time (e.g. 2026-01-31T02:00:00Z)`);
        case 'regex':
          return problem(at, `${jsonValue(value)} is not a valid regular expression: ${regexProblem(value) ?? 'invalid'}`);
        default:
          return problem(at, `${jsonValue(value)} is not a valid ${String(params.format)}`);
      }
    }
    case 'minimum':
      return problem(at, `must be at least ${String(params.limit)}`);
    case 'maximum':
      return problem(at, `must be at most ${String(params.limit)}`);
    case 'exclusiveMinimum':
      return problem(at, `must be greater than ${String(params.limit)}`);
    case 'exclusiveMaximum':
      return problem(at, `must be less than ${String(params.limit)}`);
    case 'minLength':
      return problem(at, params.limit === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters long`);
    case 'maxLength':
      return problem(at, `must be at most ${String(params.limit)} characters long (got ${String(typeof data === 'string' ? data.length : '?')})`);
    case 'minItems':
      return problem(at, params.limit === 1 ? 'must list at least one item' : `must list at least ${String(params.limit)} items`);
    case 'maxItems':
      return problem(at, `must list at most ${String(params.limit)} items`);
    case 'uniqueItems': {
      const i = Number(params.i);
      const j = Number(params.j);
      const item = Array.isArray(data) ? data[i] : undefined;
      return problem(joinPath(at, Math.max(i, j)), `${jsonValue(item)} is listed twice (items ${Math.min(i, j)} and ${Math.max(i, j)})`);
    }
    case 'quantityRange':
      return problem(at, quantityRangeProblem(error.schema as { minimum?: string; maximum?: string }, String(data)) ?? 'is out of range');
    default:
      return problem(at, error.message ?? `fails ${error.keyword}`);
  }
}
