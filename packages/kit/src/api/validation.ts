import type { FieldError } from '../errors.ts';

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

function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** `/body/name` → `Field name`, `/query/limit` → `Query parameter limit`, … */
export function describePointer(pointer: string): string {
  const [, part, ...rest] = pointer.split('/');
  if (!rest.length) return part === 'body' ? 'The request body' : `The ${part}`;
  const name = rest.join('.');
  if (part === 'body') return `Field ${name}`;
  return `${part === 'query' ? 'Query parameter' : part === 'path' ? 'Path parameter' : 'Header'} ${name}`;
}
