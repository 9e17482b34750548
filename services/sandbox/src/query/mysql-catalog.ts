/** MySQL and MariaDB: what information_schema says about masked columns, views, routines and the tables a sandbox lists. */

import type { Connection, RowDataPacket } from 'mysql2';
import { isMasked } from './masks.ts';
import type { MysqlMaskCatalog } from './mysql-guard.ts';
import { isIdentifier, mysqlDialect, tokenize } from './tokens.ts';
import type { TableInfo } from './types.ts';

const SYSTEM_DATABASES = `('information_schema', 'performance_schema', 'mysql', 'sys')`;
const BASE_TABLE_TYPES = `('BASE TABLE', 'SYSTEM VERSIONED')`;

type Row = RowDataPacket & Record<string, unknown>;

export function rows(connection: Connection, sql: string, values: unknown[] = []): Promise<Row[]> {
  return new Promise((resolve, reject) => {
    connection.query<Row[]>(sql, values, (error, result) => (error ? reject(error) : resolve(Array.isArray(result) ? result : [])));
  });
}

const text = (value: unknown): string => (value === null || value === undefined ? '' : Buffer.isBuffer(value) ? value.toString('utf8') : String(value));

async function lowerNames(connection: Connection, sql: string): Promise<Set<string>> {
  return new Set((await rows(connection, sql)).map((r) => text(r.name).toLowerCase()));
}

/**
 * Views whose definition names a masked column, a routine, or such a view: their columns carry masked values under
 * other names. A definition the user may not read counts as one of them.
 */
async function taintedViews(connection: Connection, names: Set<string>): Promise<Set<string>> {
  const views = (await rows(connection, `SELECT TABLE_NAME AS name, VIEW_DEFINITION AS definition FROM information_schema.VIEWS WHERE TABLE_SCHEMA NOT IN ${SYSTEM_DATABASES}`)).map(
    (r) => ({ name: text(r.name).toLowerCase(), tokens: tokenize(text(r.definition), mysqlDialect('')) }),
  );
  const tainted = new Set<string>();
  const known = new Set(names);
  for (let changed = true; changed; ) {
    changed = false;
    for (const view of views) {
      if (tainted.has(view.name)) continue;
      if (view.tokens.length > 0 && !view.tokens.some((t) => isIdentifier(t) && known.has(t.value.toLowerCase()))) continue;
      tainted.add(view.name);
      known.add(view.name);
      changed = true;
    }
  }
  return tainted;
}

/** The masked columns of the server's user databases, or undefined when no column of a base table matches a mask. */
export async function loadMysqlMaskCatalog(connection: Connection, masks: RegExp[]): Promise<MysqlMaskCatalog | undefined> {
  if (masks.length === 0) return undefined;
  const columns = await rows(
    connection,
    `SELECT c.TABLE_NAME AS tableName, c.COLUMN_NAME AS columnName
       FROM information_schema.COLUMNS c
       JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME
      WHERE c.TABLE_SCHEMA NOT IN ${SYSTEM_DATABASES} AND t.TABLE_TYPE IN ${BASE_TABLE_TYPES}`,
  );
  const maskedColumns = new Set<string>();
  const maskedTables = new Set<string>();
  for (const row of columns) {
    const column = text(row.columnName);
    if (!isMasked(column, masks)) continue;
    maskedColumns.add(column.toLowerCase());
    maskedTables.add(text(row.tableName).toLowerCase());
  }
  if (maskedColumns.size === 0) return undefined;
  const routines = await lowerNames(connection, `SELECT DISTINCT ROUTINE_NAME AS name FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA NOT IN ${SYSTEM_DATABASES}`);
  const views = await taintedViews(connection, new Set([...maskedColumns, ...routines]));
  return { maskedColumns, maskedTables, taintedViews: views, routines };
}

/** The base tables of the connected database, with their columns in order. */
export async function listMysqlTables(connection: Connection): Promise<TableInfo[]> {
  const tables = await rows(
    connection,
    `SELECT TABLE_SCHEMA AS tableSchema, TABLE_NAME AS tableName, COALESCE(TABLE_ROWS, 0) AS rowCount,
            COALESCE(DATA_LENGTH, 0) + COALESCE(INDEX_LENGTH, 0) AS bytes
       FROM information_schema.TABLES
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE IN ${BASE_TABLE_TYPES}`,
  );
  const columns = await rows(
    connection,
    `SELECT TABLE_NAME AS tableName, COLUMN_NAME AS columnName FROM information_schema.COLUMNS
      WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, ORDINAL_POSITION`,
  );
  const byTable = new Map<string, string[]>();
  for (const row of columns) {
    const list = byTable.get(text(row.tableName)) ?? [];
    list.push(text(row.columnName));
    byTable.set(text(row.tableName), list);
  }
  return tables.map((r) => {
    const schema = text(r.tableSchema);
    const name = text(r.tableName);
    return { schema, name, fullName: `${schema}.${name}`, rowsEstimate: Number(r.rowCount), bytes: Number(r.bytes), columns: byTable.get(name) ?? [] };
  });
}
