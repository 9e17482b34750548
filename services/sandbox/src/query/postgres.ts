/** PostgreSQL: running one statement of a sandbox request in its own transaction, guarded and masked. */

import pg from 'pg';
import { attribute, listPostgresTables, loadMaskCatalog, quoteIdent } from './pg-catalog.ts';
import type { MaskCatalog } from './pg-catalog.ts';
import { PlanGuard, planText, refuseHiddenReads } from './pg-plan.ts';
import { describeStatement, executeStatement, isDatabaseError, parseTag } from './pg-wire.ts';
import type { WireResult } from './pg-wire.ts';
import { POSTGRES_PLAN, isPunct, isWord, tokenize } from './tokens.ts';
import { PoolRegistry, SESSION_IDLE_MS, SESSIONS_PER_SANDBOX } from './pools.ts';
import { QueryRefused, refuseOnDatabaseError } from './types.ts';
import type { QueryRequest, RawResult, SandboxConnection, TableInfo } from './types.ts';

const APPLICATION_NAME = 'strata-sandbox';
const SELECT_WORDS = ['SELECT', 'WITH', 'VALUES', 'TABLE'];
// Not-explainable statements fail EXPLAIN with a syntax error; the statement itself parsed, so that is the reason.
const SYNTAX_ERROR = '42601';

const pools = new PoolRegistry<pg.Pool>(
  (conn) => {
    const pool = new pg.Pool({
      host: conn.host,
      port: conn.port,
      user: conn.username,
      password: conn.password,
      database: conn.database,
      connectionTimeoutMillis: 15_000,
      application_name: APPLICATION_NAME,
      max: SESSIONS_PER_SANDBOX,
      idleTimeoutMillis: SESSION_IDLE_MS,
      allowExitOnIdle: true,
    });
    pool.on('error', () => {}); // an idle session the server closed (a restart, a reset) is dropped by the pool
    return pool;
  },
  (pool) => pool.end(),
);

/** Runs `fn` on a pooled session; the session is reset for the next request, or closed when anything went wrong. */
async function withClient<T>(conn: SandboxConnection, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pools.for(conn).connect();
  } catch (error) {
    throw new Error(`postgres ${conn.host}:${conn.port} database "${conn.database}": ${(error as Error).message}`, { cause: error });
  }
  let reusable = false;
  // A checked-out session has no pool listener: the server ending it between two statements is an error event that
  // would otherwise end the process. The next statement fails instead, and the session is not reused.
  const onLost = () => {};
  client.on('error', onLost);
  try {
    // A pool's sessions are pg.Client instances (the wire helpers drive the client's connection).
    const result = await fn(client as unknown as pg.Client);
    reusable = await reset(client);
    return result;
  } catch (error) {
    reusable = await reset(client);
    throw error;
  } finally {
    client.removeListener('error', onLost);
    client.release(!reusable);
  }
}

/** Ends whatever transaction is open and forgets every setting, prepared statement, temporary table and lock. */
async function reset(client: pg.PoolClient): Promise<boolean> {
  try {
    await client.query('ROLLBACK');
    await client.query('DISCARD ALL');
    return true;
  } catch {
    return false;
  }
}

const userStep = <T>(step: () => Promise<T>): Promise<T> => refuseOnDatabaseError(step, isDatabaseError);

/** The first keyword, past any opening parentheses. */
function firstWord(sql: string): string {
  const tokens = tokenize(sql, POSTGRES_PLAN);
  const first = tokens.find((t) => !isPunct(t, '('));
  return first?.kind === 'word' ? first.value.toUpperCase() : '';
}

function isPlainSelect(sql: string, plan: string): boolean {
  const tokens = tokenize(sql, POSTGRES_PLAN);
  return SELECT_WORDS.includes(firstWord(sql)) && !tokens.some((t) => isWord(t, 'INTO')) && !plan.includes('ModifyTable');
}

async function explain(client: pg.Client, sql: string): Promise<unknown> {
  try {
    const result = await executeStatement(client, `EXPLAIN (VERBOSE, FORMAT JSON) ${sql}`, 0);
    return JSON.parse(result.rows[0]?.[0] ?? 'null');
  } catch (error) {
    if (isDatabaseError(error) && error.code === SYNTAX_ERROR) {
      throw new QueryRefused('this kind of statement cannot be checked for masked columns and is refused while masks apply');
    }
    if (isDatabaseError(error)) throw new QueryRefused(error.message);
    throw error;
  }
}

async function guard(client: pg.Client, sql: string, catalog: MaskCatalog, masks: RegExp[]): Promise<void> {
  const described = await userStep(() => describeStatement(client, sql));
  const plan = await explain(client, sql);
  const text = planText(plan);
  refuseHiddenReads(sql, text, catalog.userFunctions, catalog.userOperators);
  const attributions = await attribute(client, described.fields, masks);
  const fields = described.fields.map((f, i) => ({ name: f.name, attributed: attributions[i]?.attributed ?? false }));
  new PlanGuard({ plan, catalog, fields, isSelect: isPlainSelect(sql, text) }).enforce();
}

function commandOf(sql: string, result: WireResult): { command?: string; affected?: number } {
  if (result.tag !== undefined) return parseTag(result.tag);
  const word = firstWord(sql);
  return word ? { command: SELECT_WORDS.includes(word) ? 'SELECT' : word } : {};
}

/** Runs the request's statement in a transaction (read-only unless `write`), reading at most limit + 1 rows. */
export async function runPostgres(conn: SandboxConnection, request: QueryRequest): Promise<RawResult> {
  return await withClient(conn, async (client) => {
    await client.query(request.write ? 'BEGIN' : 'BEGIN READ ONLY');
    await client.query(`SET LOCAL statement_timeout = ${request.timeoutMs}`);
    const catalog = await loadMaskCatalog(client, request.masks);
    if (catalog) await guard(client, request.sql, catalog, request.masks);
    const result = await userStep(() => executeStatement(client, request.sql, request.limit + 1));
    const attributions = request.masks.length > 0 ? await attribute(client, result.fields, request.masks) : [];
    await userStep(() => client.query(request.write ? 'COMMIT' : 'ROLLBACK'));
    const truncated = result.suspended || result.rows.length > request.limit;
    return {
      columns: result.fields.map((f) => f.name),
      rows: result.rows.slice(0, request.limit),
      truncated,
      ...commandOf(request.sql, result),
      maskedColumns: new Set(attributions.flatMap((a, i) => (a.masked ? [i] : []))),
    };
  });
}

export async function listTablesPostgres(conn: SandboxConnection): Promise<TableInfo[]> {
  return await withClient(conn, (client) => listPostgresTables(client));
}

export const postgresBrowseSql = (table: TableInfo, rows: number): string => `SELECT * FROM ${quoteIdent(table.schema)}.${quoteIdent(table.name)} LIMIT ${rows}`;
