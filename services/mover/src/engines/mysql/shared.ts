/** MySQL and MariaDB: Connections (`mysql2`), quoting and the helpers every part of the driver uses. */

import mysql from 'mysql2/promise';
import type { RowDataPacket } from 'mysql2/promise';
import type { DatabaseAccess } from '@sigil/proto/strata-jobs';

export const SYSTEM_DATABASES = new Set(['information_schema', 'performance_schema', 'mysql', 'sys']);

export const quoteIdent = (name: string): string => `\`${name.replaceAll('`', '``')}\``;
export const where = (access: DatabaseAccess): string => `${access.host}:${access.port}`;

export type Row = RowDataPacket & Record<string, unknown>;

export function mysqlError(access: DatabaseAccess, database: string | undefined, error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  return new Error(`mysql ${where(access)}${database ? ` database "${database}"` : ''}: ${message}`, { cause: error });
}

export async function open(access: DatabaseAccess, database: string | undefined): Promise<mysql.Connection> {
  const connection = await mysql.createConnection({
    host: access.host,
    port: access.port,
    user: access.username,
    password: access.password,
    ...(database !== undefined ? { database } : {}),
    charset: 'UTF8MB4_GENERAL_CI',
    connectTimeout: 15_000,
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
    multipleStatements: false,
  });
  connection.on('error', () => {}); // surfaces on the next query
  return connection;
}

export async function withConnection<T>(access: DatabaseAccess, database: string | undefined, fn: (c: mysql.Connection) => Promise<T>): Promise<T> {
  let connection: mysql.Connection;
  try {
    connection = await open(access, database);
  } catch (error) {
    throw mysqlError(access, database, error);
  }
  try {
    return await fn(connection);
  } catch (error) {
    throw mysqlError(access, database, error);
  } finally {
    await connection.end().catch(() => {});
  }
}

export async function rows(c: mysql.Connection, sql: string, params: unknown[] = []): Promise<Row[]> {
  const [result] = await c.query<Row[]>(sql, params);
  return result;
}

export const str = (value: unknown): string => (value === null || value === undefined ? '' : Buffer.isBuffer(value) ? value.toString('utf8') : String(value));
export const num = (value: unknown): number => (value === null || value === undefined || value === '' ? 0 : Number(value));

export async function isMariadb(c: mysql.Connection): Promise<boolean> {
  const r = await rows(c, 'SELECT VERSION() AS v, @@version_comment AS vc');
  return /mariadb/i.test(`${str(r[0]?.v)} ${str(r[0]?.vc)}`);
}
