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

interface CreatedRow {
  createdAt: Date;
  id: string;
}

/**
 * Keyset pagination on (createdAt, id), the order of every list in the API: `orderBy` for the query,
 * `after(cursor)` the Prisma filter for rows past the cursor, `page` the page from `limit + 1` rows.
 */
export function createdAtKeyset(order: 'newest-first' | 'oldest-first') {
  const direction = order === 'newest-first' ? 'desc' : 'asc';
  const beyond = order === 'newest-first' ? 'lt' : 'gt';
  return {
    orderBy: [{ createdAt: direction }, { id: direction }] as Array<{ createdAt?: 'asc' | 'desc'; id?: 'asc' | 'desc' }>,
    after(cursor: string | undefined): { OR?: Array<Record<string, unknown>> } {
      if (!cursor) return {};
      const [createdAt, id] = decodeCursor(cursor, 2);
      const date = new Date(String(createdAt));
      if (typeof createdAt !== 'string' || typeof id !== 'string' || Number.isNaN(date.getTime())) {
        throw new AppError('validation-failed', 'The cursor is not valid; pass the nextCursor of a previous page.', {
          errors: [{ pointer: '/query/cursor', detail: 'Unknown or malformed cursor.' }],
        });
      }
      return { OR: [{ createdAt: { [beyond]: date } }, { createdAt: date, id: { [beyond]: id } }] };
    },
    page<Row extends CreatedRow, T>(rows: Row[], limit: number, render: (row: Row) => T): ListPage<T> {
      return toPage(rows, limit, render, (row) => [row.createdAt.toISOString(), row.id]);
    },
  };
}

export const newestFirst = createdAtKeyset('newest-first');
export const oldestFirst = createdAtKeyset('oldest-first');
