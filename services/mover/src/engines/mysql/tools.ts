/** MySQL and MariaDB: Finding `mariadb-dump`/`mysqldump` and the client, what the installed tools support, and the context of a dump (character set, position). */
import { spawn } from 'node:child_process';
import type mysql from 'mysql2/promise';
import type { DatabaseAccess } from '@sigil/proto/strata-jobs';
import { findExecutable, pathDirs, toolEnv } from '../process.ts';
import type { Row} from './shared.ts';
import { num, open, rows, str } from './shared.ts';

export const TOOL_DIRS = (): string[] => [...(process.env.STRATA_MYSQL_BINDIR ? [process.env.STRATA_MYSQL_BINDIR] : []), ...pathDirs(), '/usr/bin', '/usr/local/bin', '/usr/local/mysql/bin'];

export function mysqlTool(kind: 'dump' | 'client'): { command: string; tool: string } {
  const names = kind === 'dump' ? ['mariadb-dump', 'mysqldump'] : ['mariadb', 'mysql'];
  for (const name of names) {
    const found = findExecutable(name, TOOL_DIRS());
    if (found) return { command: found, tool: name };
  }
  return { command: names[0] as string, tool: names[0] as string };
}

export interface DumpFeatures {
  connectTimeout: boolean;
  ignoreTableData: boolean;
  gtid: boolean;
  sourceData: boolean;
  setGtidPurged: boolean;
  /** MySQL 8's mysqldump: `--set-gtid-purged=COMMENTED`. */
  gtidPurgedCommented: boolean;
}

export const helpCache = new Map<string, Promise<string>>();

/** A tool's --help text (what options it has), once per command. */
export function helpText(command: string): Promise<string> {
  let cached = helpCache.get(command);
  if (!cached) {
    cached = new Promise<string>((resolve) => {
      const child = spawn(command, ['--no-defaults', '--help'], { stdio: ['ignore', 'pipe', 'ignore'], env: toolEnv({}) });
      let help = '';
      child.stdout.on('data', (chunk: Buffer) => (help += chunk.toString('utf8')));
      child.once('error', () => resolve(help));
      child.once('close', () => resolve(help));
    });
    helpCache.set(command, cached);
  }
  return cached;
}

/** What this dump tool supports. */
export async function dumpFeatures(command: string): Promise<DumpFeatures> {
  const help = await helpText(command);
  return {
    connectTimeout: help.includes('--connect-timeout'),
    ignoreTableData: help.includes('--ignore-table-data'),
    gtid: /^\s*--gtid\b/m.test(help),
    sourceData: help.includes('--source-data'),
    setGtidPurged: help.includes('--set-gtid-purged'),
    gtidPurgedCommented: help.includes('COMMENTED'),
  };
}

export function connectionArgs(access: DatabaseAccess): string[] {
  // --no-defaults must come first: no option file may add to or change what we run.
  return ['--no-defaults', `--host=${access.host}`, `--port=${access.port}`, `--user=${access.username}`, '--protocol=TCP'];
}

export const CONNECT_TIMEOUT_S = 15;

export const envFor = (access: DatabaseAccess): NodeJS.ProcessEnv => toolEnv({ MYSQL_PWD: access.password });

/** Splits `table` / `schema.table` names into the tables of `database` they name. */
export function tablesOf(database: string, names: string[]): string[] {
  const result: string[] = [];
  for (const name of names) {
    const dot = name.indexOf('.');
    const table = dot < 0 ? name : name.slice(0, dot) === database ? name.slice(dot + 1) : undefined;
    if (table && !result.includes(table)) result.push(table);
  }
  return result;
}

export interface DumpContext {
  /** The server accepted the connection (a query failing afterwards leaves it true, with `error`). */
  connected: boolean;
  /** Why the context is incomplete: the connection's error, or the first query the server failed. */
  error?: string;
  mariadb: boolean;
  binlog: boolean;
  /** The user may read the binlog position (MySQL's --source-data needs it; MariaDB reads it from the snapshot). */
  canReadPosition: boolean;
  charset?: string;
  collation?: string;
  version?: string;
  tables?: Set<string>;
}

/**
 * What the dump needs to know first. A server we cannot reach yields an empty context (the tool reports the error);
 * one that accepted the connection but failed a query is connected, with what was read before and the query's error.
 */
export async function dumpContext(access: DatabaseAccess, database: string): Promise<DumpContext> {
  let c: mysql.Connection;
  try {
    c = await open(access, undefined);
  } catch (error) {
    return { connected: false, error: (error as Error).message, mariadb: false, binlog: false, canReadPosition: false };
  }
  const context: DumpContext = { connected: true, mariadb: false, binlog: false, canReadPosition: false };
  try {
    const v = (await rows(c, 'SELECT VERSION() AS v, @@version_comment AS vc, @@log_bin AS log_bin'))[0];
    Object.assign(context, { mariadb: /mariadb/i.test(`${str(v?.v)} ${str(v?.vc)}`), binlog: num(v?.log_bin) === 1, version: str(v?.v) });
    const schema = (
      await rows(c, 'SELECT DEFAULT_CHARACTER_SET_NAME AS cs, DEFAULT_COLLATION_NAME AS co FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [database])
    )[0];
    if (schema) {
      context.charset = str(schema.cs);
      context.collation = str(schema.co);
      const tables = await rows(c, 'SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?', [database]);
      context.tables = new Set(tables.map((t) => str(t.t)));
    }
    if (context.binlog) {
      if (context.mariadb) context.canReadPosition = true;
      else context.canReadPosition = (await masterStatus(c)) !== undefined;
    }
    return context;
  } catch (error) {
    return { ...context, error: (error as Error).message };
  } finally {
    await c.end().catch(() => {});
  }
}

/** SHOW MASTER STATUS (SHOW BINARY LOG STATUS on MySQL 8.4+); undefined when binlog is off or not permitted. */
export async function masterStatus(c: mysql.Connection): Promise<Row | undefined> {
  for (const sql of ['SHOW MASTER STATUS', 'SHOW BINARY LOG STATUS']) {
    try {
      const result = await rows(c, sql);
      return result[0];
    } catch {
      // try the other spelling; then give up
    }
  }
  return undefined;
}
