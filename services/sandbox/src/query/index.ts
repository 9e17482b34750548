/**
 * The query engine of database sandboxes: one statement at a time on a restored backup, bounded, read-only unless
 * asked, with masked columns shown as `***` and queries that could reveal them otherwise refused.
 */

import { finish, toRequest } from './masks.ts';
import { listTablesMysql, mysqlBrowseSql, runMysql } from './mysql.ts';
import { listTablesPostgres, postgresBrowseSql, runPostgres } from './postgres.ts';
import { BROWSE_ROWS, QueryRefused } from './types.ts';
import type { QueryInput, QueryResult, SandboxConnection, TableInfo } from './types.ts';

export { QueryRefused } from './types.ts';
export type { QueryInput, QueryResult, SandboxConnection, TableInfo } from './types.ts';
export { renderTextTable } from './text-table.ts';
export { closeQueryPools } from './pools.ts';

export async function runQuery(conn: SandboxConnection, input: QueryInput): Promise<QueryResult> {
  const request = toRequest(input);
  const startedAt = performance.now();
  const raw = conn.engine === 'postgres' ? await runPostgres(conn, request) : await runMysql(conn, request);
  return finish(raw, startedAt, performance.now());
}

/** The sandbox's tables (and materialised views), sorted by `schema.name`. */
export async function listTables(conn: SandboxConnection): Promise<TableInfo[]> {
  const tables = conn.engine === 'postgres' ? await listTablesPostgres(conn) : await listTablesMysql(conn);
  return tables.sort((a, b) => (a.fullName < b.fullName ? -1 : a.fullName > b.fullName ? 1 : 0));
}

/** The first 50 rows of `[schema.]table` (default schema: `public`, or the connected MySQL database), masked. */
export async function browseTable(conn: SandboxConnection, table: string, masks: string[]): Promise<QueryResult> {
  const tables = await listTables(conn);
  const defaultSchema = conn.engine === 'postgres' ? 'public' : conn.database;
  const found = tables.find((t) => t.fullName === table) ?? tables.find((t) => t.schema === defaultSchema && t.name === table);
  if (!found) throw new QueryRefused(`no table ${JSON.stringify(table)} in this sandbox`);
  // One row past the page tells whether the table has more.
  const sql = conn.engine === 'postgres' ? postgresBrowseSql(found, BROWSE_ROWS + 1) : mysqlBrowseSql(found, BROWSE_ROWS + 1);
  return await runQuery(conn, { sql, limit: BROWSE_ROWS, masks });
}
