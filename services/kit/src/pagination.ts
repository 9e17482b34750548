import { AppError } from './errors.ts';

export const DEFAULT_LIMIT = 20;

export interface ListPage<T> {
  object: 'list';
  data: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

/** Opaque cursors: base64url JSON of the sort key of the last row seen. */
export function encodeCursor(key: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

export function decodeCursor(cursor: string, arity: number): (string | number)[] {
  const invalid = () =>
    new AppError('validation-failed', 'The cursor is not valid; pass the nextCursor of a previous page.', {
      errors: [{ pointer: '/query/cursor', detail: 'Unknown or malformed cursor.' }],
    });
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(key) || key.length !== arity || !key.every((v) => typeof v === 'string' || typeof v === 'number')) {
    throw invalid();
  }
  return key;
}

/** Turns `limit + 1` fetched rows into a page. */
export function toPage<Row, T>(rows: Row[], limit: number, render: (row: Row) => T, cursorOf: (row: Row) => (string | number)[]): ListPage<T> {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows.at(-1);
  return {
    object: 'list',
    data: pageRows.map(render),
    hasMore,
    nextCursor: hasMore && last !== undefined ? encodeCursor(cursorOf(last)) : null,
  };
}

export function listLimit(query: Record<string, unknown>): number {
  const limit = query.limit;
  return typeof limit === 'number' ? limit : DEFAULT_LIMIT;
}
