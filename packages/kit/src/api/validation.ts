import { escapePointer, type FieldError } from '../errors.ts';
import { findUnstorable } from '../db/storable-text.ts';

/** The part of an ajv error the API turns into a field error. */
export interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** ajv reports `/requestBody/name`, `/query/limit`, `/path/id`, `/headers/x`; the API speaks `/body`, `/query`, `/path`, `/header`. */
export function toFieldError(error: ValidationIssue): FieldError {
  let pointer = error.instancePath.replace(/^\/requestBody/, '/body').replace(/^\/headers/, '/header');
  if (pointer === '') pointer = '/body';
  const params = error.params;
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    pointer = `${pointer}/${escapePointer(params.missingProperty)}`;
  } else if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    pointer = `${pointer}/${escapePointer(params.additionalProperty)}`;
    return { pointer, detail: 'is not a known field' };
  }
  return { pointer, detail: error.message ?? 'is invalid' };
}

/** `/body/name` → `Field name`, `/query/limit` → `Query parameter limit`, … */
export function describePointer(pointer: string): string {
  const [, part, ...rest] = pointer.split('/');
  if (!rest.length) return part === 'body' ? 'The request body' : `The ${part}`;
  const name = rest.join('.');
  if (part === 'body') return `Field ${name}`;
  return `${part === 'query' ? 'Query parameter' : part === 'path' ? 'Path parameter' : 'Header'} ${name}`;
}

/**
 * The first value (or member name) of a request that PostgreSQL could not store, as a field error, or undefined.
 * Such a value would fail its write with a 500; no field of either contract has a use for it, so it is refused with
 * the other invalid input. Bytes (file bodies) are not values and are not looked at.
 */
export function findUnstorableText(parts: Record<'path' | 'query' | 'body', unknown>): FieldError | undefined {
  for (const [part, value] of Object.entries(parts)) {
    const found = findUnstorable(value);
    if (found) return { pointer: ['', part, ...found.path.map((token) => escapePointer(String(token)))].join('/'), detail: found.reason };
  }
  return undefined;
}
