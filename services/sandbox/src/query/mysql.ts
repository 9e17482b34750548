/** MySQL and MariaDB: running one statement of a sandbox request in its own transaction, guarded and masked. */

import mysql from 'mysql2';
import type { Connection, FieldPacket, Pool, PoolConnection, QueryError } from 'mysql2';
import { isMasked } from './masks.ts';
import { PoolRegistry, SESSION_IDLE_MS, SESSIONS_PER_SANDBOX } from './pools.ts';
import { loadMysqlMaskCatalog, listMysqlTables, rows } from './mysql-catalog.ts';
import { analyzeStatement, maskedFields, refuseSeveralStatements, unattributedRefusal } from './mysql-guard.ts';
import type { MysqlField, StatementAnalysis } from './mysql-guard.ts';
import { streamStatement } from './mysql-stream.ts';
import { isPunct, isWord, mysqlDialect, tokenize } from './tokens.ts';
import type { Token } from './tokens.ts';
import { refuseOnDatabaseError } from './types.ts';
import type { QueryRefused, QueryRequest, RawResult, SandboxConnection, TableInfo } from './types.ts';

export const quoteIdent = (name: string): string => `\`${name.replaceAll('`', '``')}\``;

const pools = new PoolRegistry<Pool>(
  (conn) => {
    const pool = mysql.createPool({
      host: conn.host,
      port: conn.port,
      user: conn.username,
      password: conn.password,
      database: conn.database,
      charset: 'UTF8MB4_GENERAL_CI',
      connectTimeout: 15_000,
      supportBigNumbers: true,
      bigNumberStrings: true,
      dateStrings: true,
      multipleStatements: false,
      connectionLimit: SESSIONS_PER_SANDBOX,
      maxIdle: SESSIONS_PER_SANDBOX,
      idleTimeout: SESSION_IDLE_MS,
    });
    pool.on('connection', (connection) => connection.on('error', () => {})); // surfaces on the next query
    return pool;
  },
  (pool) => new Promise<void>((resolve) => pool.end(() => resolve())),
);

/** Runs `fn` on a pooled session; the session is reset for the next request, or closed when anything went wrong. */
async function withConnection<T>(conn: SandboxConnection, fn: (connection: Connection) => Promise<T>): Promise<T> {
  let connection: PoolConnection;
  try {
    connection = await new Promise<PoolConnection>((resolve, reject) => pools.for(conn).getConnection((error, c) => (error ? reject(error) : resolve(c))));
  } catch (error) {
    throw new Error(`mysql ${conn.host}:${conn.port} database "${conn.database}": ${(error as Error).message}`, { cause: error });
  }
  let reusable = false;
  try {
    const result = await fn(connection);
    reusable = await reset(connection, conn);
    return result;
  } catch (error) {
    reusable = await reset(connection, conn);
    throw error;
  } finally {
    if (reusable) connection.release();
    else connection.destroy();
  }
}

/** COM_CHANGE_USER: the server ends the transaction and forgets the session's variables, temporary tables and locks. */
async function reset(connection: PoolConnection, conn: SandboxConnection): Promise<boolean> {
  try {
    await new Promise<void>((resolve, reject) => connection.changeUser({ user: conn.username, password: conn.password, database: conn.database }, (error) => (error ? reject(error) : resolve())));
    return true;
  } catch {
    return false;
  }
}

// Errors the server reports about the statement carry its SQL state; socket and protocol errors do not.
const isServerError = (error: unknown): error is QueryError => typeof (error as { sqlState?: unknown } | undefined)?.sqlState === 'string';

const userStep = <T>(step: () => Promise<T>): Promise<T> => refuseOnDatabaseError(step, isServerError);

async function begin(connection: Connection, request: QueryRequest): Promise<StatementContext> {
  const [server] = await rows(connection, 'SELECT VERSION() AS version, @@SESSION.sql_mode AS mode');
  const mariadb = /mariadb/i.test(String(server?.version ?? ''));
  // MariaDB bounds every statement (in seconds); MySQL bounds SELECT only (in milliseconds).
  const timeout = mariadb ? `SET SESSION max_statement_time = ${request.timeoutMs / 1000}` : `SET SESSION max_execution_time = ${request.timeoutMs}`;
  await rows(connection, timeout);
  // The session setting too: DDL commits the transaction it runs in, and would then run read-write.
  if (!request.write) await rows(connection, 'SET SESSION TRANSACTION READ ONLY');
  await rows(connection, request.write ? 'START TRANSACTION' : 'START TRANSACTION READ ONLY');
  return { tokens: tokenize(request.sql, mysqlDialect(String(server?.mode ?? ''))) };
}

interface StatementContext {
  tokens: Token[];
}

const OBJECT_WORDS = ['TABLE', 'VIEW', 'INDEX', 'DATABASE', 'SCHEMA', 'FUNCTION', 'PROCEDURE', 'TRIGGER', 'EVENT', 'USER', 'SEQUENCE', 'ROLE'];

/** The statement's command, from its first keyword(s): SELECT, INSERT, CREATE TABLE... */
function commandOf(tokens: Token[]): string | undefined {
  const start = tokens.findIndex((t) => !isPunct(t, '('));
  const first = tokens[start];
  if (first?.kind !== 'word') return undefined;
  const word = first.value.toUpperCase();
  if (isWord(first, 'WITH', 'VALUES', 'TABLE')) return 'SELECT';
  if (!isWord(first, 'CREATE', 'DROP', 'ALTER')) return word;
  const object = tokens.slice(start + 1, start + 8).find((t) => isWord(t, ...OBJECT_WORDS));
  return object ? `${word} ${object.value.toUpperCase()}` : word;
}

const toField = (f: FieldPacket): MysqlField => ({ name: f.name, orgTable: f.orgTable ?? '', orgName: f.orgName ?? '', schema: f.schema ?? f.db ?? '' });

async function finishTransaction(connection: Connection, request: QueryRequest, refused: QueryRefused | undefined, alive: boolean): Promise<void> {
  if (!alive) return;
  if (refused || !request.write) await rows(connection, 'ROLLBACK').catch(() => {});
  else await userStep(() => rows(connection, 'COMMIT'));
}

/** Runs the request's statement in a transaction (read-only unless `write`), reading at most limit + 1 rows. */
export async function runMysql(conn: SandboxConnection, request: QueryRequest): Promise<RawResult> {
  return await withConnection(conn, async (connection) => {
    const { tokens } = await begin(connection, request);
    refuseSeveralStatements(tokens);
    const catalog = await loadMysqlMaskCatalog(connection, request.masks);
    const analysis: StatementAnalysis = catalog ? analyzeStatement(tokens, catalog) : { tainted: new Set(), reachesMasked: false };
    const streamed = await userStep(() => streamStatement(connection, request, (fields) => unattributedRefusal(fields.map(toField), analysis)));
    await finishTransaction(connection, request, streamed.refused, streamed.alive);
    if (streamed.refused) throw streamed.refused;
    const fields = streamed.fields.map(toField);
    const baseMasked = (field: MysqlField): boolean => field.orgTable !== '' && isMasked(field.orgName, request.masks);
    const command = commandOf(tokens);
    return {
      columns: fields.map((f) => f.name),
      rows: streamed.rows.slice(0, request.limit),
      truncated: streamed.rows.length > request.limit,
      ...(command ? { command } : {}),
      ...(streamed.affected !== undefined ? { affected: streamed.affected } : {}),
      maskedColumns: request.masks.length > 0 ? maskedFields(fields, analysis, baseMasked) : new Set(),
    };
  });
}

export async function listTablesMysql(conn: SandboxConnection): Promise<TableInfo[]> {
  return await withConnection(conn, (connection) => listMysqlTables(connection));
}

export const mysqlBrowseSql = (table: TableInfo, rowCount: number): string => `SELECT * FROM ${quoteIdent(table.schema)}.${quoteIdent(table.name)} LIMIT ${rowCount}`;
