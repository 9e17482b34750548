/** Sandbox queries: checking a request against its bounds, compiling masks, and turning raw rows into the answer. */

import { DEFAULT_LIMIT, DEFAULT_TIMEOUT_MS, MAX_LIMIT, MAX_SQL_LENGTH, MAX_TIMEOUT_MS, QueryRefused } from './types.ts';
import type { QueryInput, QueryRequest, QueryResult, RawResult } from './types.ts';

export const MASKED_CELL = '***';

export function compileMasks(sources: string[]): RegExp[] {
  return sources.map((source) => {
    try {
      return new RegExp(source, 'i');
    } catch (error) {
      throw new QueryRefused(`mask ${JSON.stringify(source)} is not a valid regular expression: ${(error as Error).message}`);
    }
  });
}

export const isMasked = (name: string, masks: RegExp[]): boolean => masks.some((mask) => mask.test(name));

export function toRequest(input: QueryInput): QueryRequest {
  const { sql } = input;
  if (typeof sql !== 'string' || sql.trim() === '') throw new QueryRefused('sql is empty');
  if (sql.length > MAX_SQL_LENGTH) throw new QueryRefused(`sql is longer than ${MAX_SQL_LENGTH} characters`);
  const limit = input.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new QueryRefused(`limit must be a whole number from 1 to ${MAX_LIMIT}`);
  const timeoutMs = input.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMEOUT_MS) throw new QueryRefused(`timeoutMs must be a positive number of milliseconds up to ${MAX_TIMEOUT_MS}`);
  return { sql, write: input.write === true, limit, masks: compileMasks(input.masks ?? []), timeoutMs: Math.ceil(timeoutMs) };
}

/** The answer: masked columns show `***` in every cell, other NULLs become '' and are listed in `nulls`. */
export function finish(raw: RawResult, startedAt: number, now: number): QueryResult {
  const nulls: Array<[number, number]> = [];
  const rows = raw.rows.map((row, r) =>
    row.map((cell, c) => {
      if (raw.maskedColumns.has(c)) return MASKED_CELL;
      if (cell === null) {
        nulls.push([r, c]);
        return '';
      }
      return cell;
    }),
  );
  const masked = raw.columns.filter((_, c) => raw.maskedColumns.has(c));
  return {
    columns: raw.columns,
    rows,
    truncated: raw.truncated,
    ms: Math.max(0, Math.round(now - startedAt)),
    ...(raw.command !== undefined ? { command: raw.command } : {}),
    ...(raw.affected !== undefined ? { affected: raw.affected } : {}),
    ...(masked.length > 0 ? { masked } : {}),
    ...(nulls.length > 0 ? { nulls } : {}),
  };
}

export const revealMessage = (what: string): string =>
  `${what} could reveal a masked column; masked columns can only be selected directly, where they are shown masked`;
