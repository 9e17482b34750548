/**
 * MySQL and MariaDB: `mariadb-dump` (or `mysqldump`) per database, without `--databases`, so the
 * dump restores into a database of any name; restored with the `mariadb` (or `mysql`) client into
 * a database created beforehand with the source's default character set and collation, which the
 * dump carries on its first line (`-- strata-dump: {...}`, an SQL comment).
 *
 * Position: when the server has binlog on, the dump itself records its consistent position
 * (`--master-data=2`, plus `--gtid` on MariaDB, which reads it from the snapshot without a global
 * lock); DumpProcess.position parses it from the stream. `position()` queries it (SHOW MASTER STATUS)
 * for callers that want it before the dump.
 *
 * excludeData: `--ignore-table-data=db.t` when the tool has it (MariaDB); otherwise a second,
 * schema-only run for those tables (`--no-data`), put before the main run so that views and
 * foreign keys of the main run find them.
 */
import { spawn } from 'node:child_process';
import mysql from 'mysql2/promise';
import type { RowDataPacket } from 'mysql2/promise';
import type { DatabaseAccess } from '@sigil/proto';
import { canonicalHash, MIGRATION_TABLES, overallSchemaHash, resolveWanted, sha256, sortedTuples, tableChecksum } from './inventory.ts';
import { AlterDatabaseFilter, decodeHeader, encodeHeader, PositionSniffer } from './mysql-stream.ts';
import { findExecutable, pathDirs, runDump, runRestore, toolEnv, toolVersion } from './process.ts';
import type { ToolStep } from './process.ts';
import type {
  DumpOptions,
  DumpProcess,
  EngineDriver,
  Inventory,
  InventoryColumn,
  InventoryDatabase,
  InventoryOptions,
  InventoryTable,
  Position,
  RestoreOptions,
  RestoreProcess,
  ServerInfo,
  TableChecksum,
} from './types.ts';

export const SYSTEM_DATABASES = new Set(['information_schema', 'performance_schema', 'mysql', 'sys']);

export const quoteIdent = (name: string): string => `\`${name.replaceAll('`', '``')}\``;
const where = (access: DatabaseAccess): string => `${access.host}:${access.port}`;

type Row = RowDataPacket & Record<string, unknown>;

function mysqlError(access: DatabaseAccess, database: string | undefined, error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  return new Error(`mysql ${where(access)}${database ? ` database "${database}"` : ''}: ${message}`, { cause: error });
}

async function open(access: DatabaseAccess, database: string | undefined): Promise<mysql.Connection> {
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

async function withConnection<T>(access: DatabaseAccess, database: string | undefined, fn: (c: mysql.Connection) => Promise<T>): Promise<T> {
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

async function rows(c: mysql.Connection, sql: string, params: unknown[] = []): Promise<Row[]> {
  const [result] = await c.query<Row[]>(sql, params);
  return result;
}

const str = (value: unknown): string => (value === null || value === undefined ? '' : Buffer.isBuffer(value) ? value.toString('utf8') : String(value));
const num = (value: unknown): number => (value === null || value === undefined || value === '' ? 0 : Number(value));

async function isMariadb(c: mysql.Connection): Promise<boolean> {
  const r = await rows(c, 'SELECT VERSION() AS v, @@version_comment AS vc');
  return /mariadb/i.test(`${str(r[0]?.v)} ${str(r[0]?.vc)}`);
}

// ---------------------------------------------------------------------------------------------
// Tools

const TOOL_DIRS = (): string[] => [...(process.env.STRATA_MYSQL_BINDIR ? [process.env.STRATA_MYSQL_BINDIR] : []), ...pathDirs(), '/usr/bin', '/usr/local/bin', '/usr/local/mysql/bin'];

function mysqlTool(kind: 'dump' | 'client'): { command: string; tool: string } {
  const names = kind === 'dump' ? ['mariadb-dump', 'mysqldump'] : ['mariadb', 'mysql'];
  for (const name of names) {
    const found = findExecutable(name, TOOL_DIRS());
    if (found) return { command: found, tool: name };
  }
  return { command: names[0] as string, tool: names[0] as string };
}

interface DumpFeatures {
  connectTimeout: boolean;
  ignoreTableData: boolean;
  gtid: boolean;
  sourceData: boolean;
  setGtidPurged: boolean;
  /** MySQL 8's mysqldump: `--set-gtid-purged=COMMENTED`. */
  gtidPurgedCommented: boolean;
}

const helpCache = new Map<string, Promise<string>>();

/** A tool's --help text (what options it has), once per command. */
function helpText(command: string): Promise<string> {
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
async function dumpFeatures(command: string): Promise<DumpFeatures> {
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

function connectionArgs(access: DatabaseAccess): string[] {
  // --no-defaults must come first: no option file may add to or change what we run.
  return ['--no-defaults', `--host=${access.host}`, `--port=${access.port}`, `--user=${access.username}`, '--protocol=TCP'];
}

const CONNECT_TIMEOUT_S = 15;

const envFor = (access: DatabaseAccess): NodeJS.ProcessEnv => toolEnv({ MYSQL_PWD: access.password });

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

interface DumpContext {
  connected: boolean;
  mariadb: boolean;
  binlog: boolean;
  /** The user may read the binlog position (MySQL's --source-data needs it; MariaDB reads it from the snapshot). */
  canReadPosition: boolean;
  charset?: string;
  collation?: string;
  version?: string;
  tables?: Set<string>;
}

/** What the dump needs to know first; a server we cannot reach yields an empty context, and the tool reports the error. */
async function dumpContext(access: DatabaseAccess, database: string): Promise<DumpContext> {
  let c: mysql.Connection;
  try {
    c = await open(access, undefined);
  } catch {
    return { connected: false, mariadb: false, binlog: false, canReadPosition: false };
  }
  try {
    const v = (await rows(c, 'SELECT VERSION() AS v, @@version_comment AS vc, @@log_bin AS log_bin'))[0];
    const context: DumpContext = {
      connected: true,
      mariadb: /mariadb/i.test(`${str(v?.v)} ${str(v?.vc)}`),
      binlog: num(v?.log_bin) === 1,
      canReadPosition: false,
      version: str(v?.v),
    };
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
  } catch {
    return { connected: false, mariadb: false, binlog: false, canReadPosition: false };
  } finally {
    await c.end().catch(() => {});
  }
}

/** SHOW MASTER STATUS (SHOW BINARY LOG STATUS on MySQL 8.4+); undefined when binlog is off or not permitted. */
async function masterStatus(c: mysql.Connection): Promise<Row | undefined> {
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

export interface MysqlDriverOptions {
  /** Use the tool's --ignore-table-data when it has it (default true); false forces the two-run fallback. */
  ignoreTableData?: boolean;
}

export function createMysqlDriver(driverOptions: MysqlDriverOptions = {}): EngineDriver {
  async function serverInfo(access: DatabaseAccess): Promise<ServerInfo> {
    return await withConnection(access, undefined, async (c) => {
      const base = (
        await rows(
          c,
          'SELECT VERSION() AS version, @@version_comment AS comment, @@hostname AS hostname, @@port AS port, @@server_id AS server_id',
        )
      )[0];
      const version = str(base?.version);
      const mariadb = /mariadb/i.test(`${version} ${str(base?.comment)}`);
      let uuid = '';
      if (!mariadb) {
        try {
          uuid = str((await rows(c, 'SELECT @@server_uuid AS u'))[0]?.u);
        } catch {
          // not MySQL after all
        }
      }
      const names = [
        'version_comment',
        'character_set_server',
        'collation_server',
        'log_bin',
        'binlog_format',
        'binlog_row_image',
        'gtid_mode',
        'gtid_strict_mode',
        'gtid_domain_id',
        'server_id',
        'innodb_buffer_pool_size',
        'max_allowed_packet',
        'time_zone',
        'system_time_zone',
        'lower_case_table_names',
        'sql_mode',
        'read_only',
        'default_storage_engine',
      ];
      const settings: Record<string, string> = { flavor: mariadb ? 'mariadb' : 'mysql' };
      const vars = await rows(c, `SHOW GLOBAL VARIABLES WHERE Variable_name IN (${names.map(() => '?').join(', ')})`, names);
      for (const v of vars) settings[str(v.Variable_name)] = str(v.Value);
      const size = (await rows(c, 'SELECT COALESCE(SUM(DATA_LENGTH + INDEX_LENGTH), 0) AS size FROM information_schema.TABLES'))[0];
      return {
        version,
        host: where(access),
        systemID: uuid || `${str(base?.hostname)}:${str(base?.port)}/${str(base?.server_id)}`,
        major: Number.parseInt(version, 10) || 0,
        settings,
        sizeBytes: num(size?.size),
      };
    });
  }

  async function listDatabases(access: DatabaseAccess, wanted: string[]): Promise<string[]> {
    return await withConnection(access, undefined, async (c) => {
      const lower = num((await rows(c, 'SELECT @@lower_case_table_names AS l'))[0]?.l) !== 0;
      const names = (await rows(c, 'SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME')).map((r) => str(r.name));
      const all = names.filter((n) => !SYSTEM_DATABASES.has(n.toLowerCase()) && !n.startsWith('#mysql50#'));
      const find = (name: string): string | undefined => names.find((n) => n === name) ?? (lower ? names.find((n) => n.toLowerCase() === name.toLowerCase()) : undefined);
      return resolveWanted(wanted, all, find, `mysql ${where(access)}`);
    });
  }

  async function position(access: DatabaseAccess): Promise<Position> {
    return await withConnection(access, undefined, async (c) => {
      const v = (await rows(c, 'SELECT @@log_bin AS log_bin'))[0];
      if (num(v?.log_bin) !== 1) return {};
      const status = await masterStatus(c);
      if (!status) return {};
      const result: Position = { binlogFile: str(status.File), binlogPos: num(status.Position) };
      let gtid = str(status.Executed_Gtid_Set);
      if (await isMariadb(c)) gtid = str((await rows(c, 'SELECT @@gtid_binlog_pos AS g'))[0]?.g);
      gtid = gtid.replace(/\s+/g, '');
      if (gtid) result.gtidSet = gtid;
      return result;
    });
  }

  function dump(access: DatabaseAccess, database: string, options: DumpOptions): DumpProcess {
    const sniffer = new PositionSniffer();
    let recordsPosition = false;
    const { command, tool } = mysqlTool('dump');
    const run = runDump(tool, async () => {
      const [features, context] = await Promise.all([dumpFeatures(command), dumpContext(access, database)]);
      const env = envFor(access);
      const common = [
        ...connectionArgs(access),
        ...(features.connectTimeout ? [`--connect-timeout=${CONNECT_TIMEOUT_S}`] : []),
        '--default-character-set=utf8mb4',
        '--single-transaction',
        '--skip-lock-tables',
        '--quick',
        '--hex-blob',
        '--no-tablespaces',
        '--max-allowed-packet=1G',
      ];
      const excluded = tablesOf(database, options.excludeTables);
      const noData = tablesOf(database, options.excludeData).filter((t) => !excluded.includes(t));
      const main = [...common, '--routines', '--triggers', '--events'];
      if (context.binlog && context.canReadPosition) {
        recordsPosition = true;
        main.push(features.sourceData ? '--source-data=2' : '--master-data=2');
        if (features.gtid && context.mariadb) main.push('--gtid');
      }
      if (features.setGtidPurged) main.push(features.gtidPurgedCommented ? '--set-gtid-purged=COMMENTED' : '--set-gtid-purged=OFF');
      for (const t of excluded) main.push(`--ignore-table=${database}.${t}`);
      const steps: ToolStep[] = [];
      const useIgnoreTableData = features.ignoreTableData && driverOptions.ignoreTableData !== false;
      if (useIgnoreTableData) {
        for (const t of noData) main.push(`--ignore-table-data=${database}.${t}`);
      } else if (noData.length > 0) {
        for (const t of noData) main.push(`--ignore-table=${database}.${t}`);
        // Only tables that exist: the tool fails on a missing one (a filter naming nothing is no error).
        const present = context.tables ? noData.filter((t) => context.tables?.has(t)) : [];
        if (present.length > 0) {
          const schemaOnly = [...common, '--no-data', '--triggers', '--skip-routines', '--skip-events'];
          if (features.setGtidPurged) schemaOnly.push('--set-gtid-purged=OFF');
          steps.push({ tool, command, args: [...schemaOnly, '--', database, ...present], env });
        }
      }
      steps.push({ tool, command, args: [...main, '--', database], env });
      const header = encodeHeader({
        v: 1,
        engine: 'mysql',
        database,
        ...(context.charset ? { charset: context.charset } : {}),
        ...(context.collation ? { collation: context.collation } : {}),
        ...(context.version ? { server: context.version } : {}),
      });
      return { steps, header, tap: (chunk) => sniffer.push(chunk) };
    });
    return {
      ...run,
      position: run.done.then(
        () => (recordsPosition ? sniffer.position() : undefined),
        () => undefined,
      ),
    };
  }

  function restore(access: DatabaseAccess, database: string, options: RestoreOptions = {}): RestoreProcess {
    const { command, tool } = mysqlTool('client');
    return runRestore({
      tool,
      headBytes: 64 * 1024,
      headComplete: (head) => head.includes(0x0a),
      start: async (head, warnings) => {
        const header = decodeHeader(head);
        const charset = options.charset ?? header?.charset;
        const collation = options.collation ?? (options.charset ? undefined : header?.collation);
        await withConnection(access, undefined, async (c) => {
          const create = (cs: string | undefined, co: string | undefined): string =>
            `CREATE DATABASE ${quoteIdent(database)}${cs ? ` CHARACTER SET ${cs}` : ''}${co ? ` COLLATE ${co}` : ''}`;
          const valid = (name: string | undefined): string | undefined => (name && /^\w+$/.test(name) ? name : undefined);
          try {
            await c.query(create(valid(charset), valid(collation)));
          } catch (error) {
            const code = (error as { errno?: number }).errno;
            if (code === 1007) {
              throw new Error(`database "${database}" already exists on ${where(access)}; restore into a new name or drop it first`, { cause: error });
            }
            // 1115 unknown character set, 1273 unknown collation, 1253 collation not valid for the charset.
            if ((code === 1115 || code === 1273 || code === 1253) && (charset || collation)) {
              await c.query(create(undefined, undefined));
              warnings.push(
                `database "${database}" was created with the server's default character set instead of the source's ${charset ?? ''} ${collation ?? ''}: ${(error as Error).message}`,
              );
              return;
            }
            throw error;
          }
        });
        // MariaDB's client prints a failing statement whole: rows of data must not end up in error messages.
        const help = await helpText(command);
        const quiet = help.includes('print-query-on-error') ? ['--skip-print-query-on-error'] : [];
        const timeout = help.includes('--connect-timeout') ? [`--connect-timeout=${CONNECT_TIMEOUT_S}`] : [];
        return {
          step: {
            tool,
            command,
            args: [
              ...connectionArgs(access),
              ...timeout,
              `--database=${database}`,
              '--default-character-set=utf8mb4',
              '--max-allowed-packet=1G',
              '--batch',
              ...quiet,
            ],
            env: envFor(access),
          },
          filter: new AlterDatabaseFilter(),
          cleanup: () => dropDatabase(access, database),
        };
      },
    });
  }

  async function dropDatabase(access: DatabaseAccess, database: string): Promise<void> {
    if (SYSTEM_DATABASES.has(database.toLowerCase())) throw new Error(`refusing to drop the system database "${database}"`);
    await withConnection(access, undefined, async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${quoteIdent(database)}`);
    });
  }

  async function inventory(access: DatabaseAccess, databases: string[], options: InventoryOptions = {}): Promise<Inventory> {
    const collectedAt = new Date().toISOString();
    const server = await serverInfo(access);
    const notes: string[] = [];
    const extra: Record<string, string> = {};
    const entries: InventoryDatabase[] = [];
    await withConnection(access, undefined, async (c) => {
      const mariadb = server.settings.flavor === 'mariadb';
      try {
        await c.query('SET SESSION information_schema_stats_expiry = 0'); // MySQL 8 caches TABLE_ROWS for a day otherwise
      } catch {
        // MariaDB has no such cache
      }
      for (const database of databases) entries.push(await inventoryDatabase(c, database, mariadb, options, notes, extra));
    });
    return {
      collectedAt,
      engine: 'mysql',
      server,
      databases: entries,
      schemaHash: overallSchemaHash(entries),
      ...(notes.length ? { notes } : {}),
      extra,
    };
  }

  async function tableChecksums(access: DatabaseAccess, database: string): Promise<Record<string, TableChecksum>> {
    return await withConnection(access, database, async (c) => {
      await c.query(`SET SESSION time_zone = '+00:00'`);
      const tables = await rows(
        c,
        `SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED') ORDER BY TABLE_NAME`,
        [database],
      );
      const columns = await rows(
        c,
        `SELECT TABLE_NAME AS t, COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, ORDINAL_POSITION`,
        [database],
      );
      const result: Record<string, TableChecksum> = {};
      for (const t of tables) {
        const table = str(t.t);
        const cols = columns.filter((c) => str(c.t) === table).map((c) => str(c.c));
        // Every value hashed as its bytes (MD5 of a BLOB never goes through HEX(), whose result max_allowed_packet caps);
        // '-' marks NULL. The table's checksum sums the two halves of every row's MD5: order-independent, memory-flat.
        const row = cols.length ? `MD5(CONCAT_WS(',', ${cols.map((col) => `IFNULL(MD5(${quoteIdent(col)}), '-')`).join(', ')}))` : `MD5('')`;
        const result1 = (
          await rows(
            c,
            `SELECT COUNT(*) AS n,
                    CAST(COALESCE(SUM(CAST(CONV(SUBSTRING(h, 1, 16), 16, 10) AS DECIMAL(20, 0))), 0) AS CHAR) AS hi,
                    CAST(COALESCE(SUM(CAST(CONV(SUBSTRING(h, 17, 16), 16, 10) AS DECIMAL(20, 0))), 0) AS CHAR) AS lo
               FROM (SELECT ${row} AS h FROM ${quoteIdent(database)}.${quoteIdent(table)}) AS x`,
          )
        )[0];
        const n = num(result1?.n);
        result[table] = { rows: n, checksum: tableChecksum(n, str(result1?.hi) || '0', str(result1?.lo) || '0') };
      }
      return result;
    });
  }

  async function tools(): Promise<Record<string, string>> {
    const dumpTool = mysqlTool('dump');
    const client = mysqlTool('client');
    const [d, c] = await Promise.all([toolVersion(dumpTool.command), toolVersion(client.command)]);
    return { [dumpTool.tool]: d, [client.tool]: c };
  }

  return { engine: 'mysql', serverInfo, listDatabases, position, dump, inventory, restore, dropDatabase, tableChecksums, tools };
}

// ---------------------------------------------------------------------------------------------
// Inventory

/** Definitions name their own database (`db`.`t`): leave it out, so a restore under another name describes alike. */
function unqualify(text: string, database: string): string {
  return text.split(`${quoteIdent(database)}.`).join('');
}

async function inventoryDatabase(
  c: mysql.Connection,
  database: string,
  mariadb: boolean,
  options: InventoryOptions,
  notes: string[],
  extra: Record<string, string>,
): Promise<InventoryDatabase> {
  const schema = (
    await rows(c, 'SELECT DEFAULT_CHARACTER_SET_NAME AS cs, DEFAULT_COLLATION_NAME AS co FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [database])
  )[0];
  if (!schema) throw new Error(`database "${database}" does not exist`);
  extra[`${database}.charset`] = str(schema.cs);
  extra[`${database}.collation`] = str(schema.co);

  const tables = await rows(
    c,
    `SELECT TABLE_NAME AS name, TABLE_TYPE AS type, ENGINE AS engine, TABLE_ROWS AS tableRows, DATA_LENGTH AS dataLength,
            INDEX_LENGTH AS indexLength, TABLE_COLLATION AS collation
       FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE <> 'VIEW' ORDER BY TABLE_NAME`,
    [database],
  );
  const columns = await rows(
    c,
    `SELECT TABLE_NAME AS t, COLUMN_NAME AS name, COLUMN_TYPE AS type, IS_NULLABLE AS nullable, COLUMN_DEFAULT AS def, EXTRA AS extra,
            COLLATION_NAME AS collation, GENERATION_EXPRESSION AS generation
       FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, ORDINAL_POSITION`,
    [database],
  );
  const stats = await rows(c, `SELECT * FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`, [database]);
  const fks = await rows(
    c,
    `SELECT k.TABLE_NAME AS t, k.CONSTRAINT_NAME AS name, k.COLUMN_NAME AS col, k.REFERENCED_TABLE_SCHEMA AS refSchema,
            k.REFERENCED_TABLE_NAME AS refTable, k.REFERENCED_COLUMN_NAME AS refCol, r.UPDATE_RULE AS onUpdate, r.DELETE_RULE AS onDelete
       FROM information_schema.KEY_COLUMN_USAGE k
       JOIN information_schema.REFERENTIAL_CONSTRAINTS r
         ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME AND r.TABLE_NAME = k.TABLE_NAME
      WHERE k.TABLE_SCHEMA = ? AND k.REFERENCED_TABLE_NAME IS NOT NULL
      ORDER BY k.TABLE_NAME, k.CONSTRAINT_NAME, k.ORDINAL_POSITION`,
    [database],
  );
  let checks: Row[] = [];
  try {
    checks = mariadb
      ? await rows(c, `SELECT TABLE_NAME AS t, CONSTRAINT_NAME AS name, CHECK_CLAUSE AS clause FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = ?`, [database])
      : await rows(
          c,
          `SELECT tc.TABLE_NAME AS t, tc.CONSTRAINT_NAME AS name, cc.CHECK_CLAUSE AS clause
             FROM information_schema.TABLE_CONSTRAINTS tc
             JOIN information_schema.CHECK_CONSTRAINTS cc ON cc.CONSTRAINT_SCHEMA = tc.CONSTRAINT_SCHEMA AND cc.CONSTRAINT_NAME = tc.CONSTRAINT_NAME
            WHERE tc.TABLE_SCHEMA = ? AND tc.CONSTRAINT_TYPE = 'CHECK'`,
          [database],
        );
  } catch (error) {
    notes.push(`${database}: check constraints not read: ${(error as Error).message}`);
  }
  const triggers = await rows(
    c,
    `SELECT EVENT_OBJECT_TABLE AS t, TRIGGER_NAME AS name, ACTION_TIMING AS timing, EVENT_MANIPULATION AS manipulation, ACTION_ORDER AS ord,
            ACTION_STATEMENT AS body
       FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ? ORDER BY TRIGGER_NAME`,
    [database],
  );
  const views = await rows(
    c,
    `SELECT TABLE_NAME AS name, VIEW_DEFINITION AS def, CHECK_OPTION AS checkOption, SECURITY_TYPE AS sec
       FROM information_schema.VIEWS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME`,
    [database],
  );
  const routines = await rows(
    c,
    `SELECT SPECIFIC_NAME AS spec, ROUTINE_NAME AS name, ROUTINE_TYPE AS type, DTD_IDENTIFIER AS ret, ROUTINE_DEFINITION AS def,
            IS_DETERMINISTIC AS det, SQL_DATA_ACCESS AS dataAccess, SECURITY_TYPE AS sec
       FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ? ORDER BY ROUTINE_TYPE, ROUTINE_NAME`,
    [database],
  );
  const parameters = await rows(
    c,
    `SELECT SPECIFIC_NAME AS spec, ROUTINE_TYPE AS type, ORDINAL_POSITION AS pos, PARAMETER_MODE AS pmode, PARAMETER_NAME AS name, DTD_IDENTIFIER AS dtd
       FROM information_schema.PARAMETERS WHERE SPECIFIC_SCHEMA = ? AND ORDINAL_POSITION > 0 ORDER BY SPECIFIC_NAME, ORDINAL_POSITION`,
    [database],
  );
  const events = await rows(
    c,
    `SELECT EVENT_NAME AS name, EVENT_DEFINITION AS def, INTERVAL_VALUE AS iv, INTERVAL_FIELD AS field, EVENT_TYPE AS type
       FROM information_schema.EVENTS WHERE EVENT_SCHEMA = ? ORDER BY EVENT_NAME`,
    [database],
  );

  const group = <T extends Row>(list: T[], key: string): Map<string, T[]> => {
    const map = new Map<string, T[]>();
    for (const r of list) {
      const k = str(r[key]);
      const l = map.get(k) ?? [];
      l.push(r);
      map.set(k, l);
    }
    return map;
  };
  const columnsOf = group(columns, 't');
  const statsOf = group(stats, 'TABLE_NAME');
  const fksOf = group(fks, 't');
  const checksOf = group(checks, 't');
  const triggersOf = group(triggers, 't');

  const result: InventoryTable[] = [];
  for (const t of tables) {
    const name = str(t.name);
    const tableCollation = str(t.collation);
    const cols: InventoryColumn[] = (columnsOf.get(name) ?? []).map((col) => {
      const collation = str(col.collation);
      const type = `${str(col.type)}${collation && collation !== tableCollation ? ` COLLATE ${collation}` : ''}`;
      // MariaDB reports a missing default as the text NULL; a string default comes quoted.
      const raw = col.def === null || col.def === undefined || str(col.def) === 'NULL' ? '' : str(col.def);
      const extraText = str(col.extra).trim();
      const generation = str(col.generation);
      const parts = [raw, extraText && generation ? `${extraText} (${generation})` : extraText].filter(Boolean);
      return { name: str(col.name), type, nullable: str(col.nullable) === 'YES', ...(parts.length ? { default: parts.join(' ') } : {}) };
    });
    const indexMap = new Map<string, { unique: boolean; type: string; columns: string[]; parts: string[] }>();
    for (const s of statsOf.get(name) ?? []) {
      const indexName = str(s.INDEX_NAME);
      const entry = indexMap.get(indexName) ?? { unique: num(s.NON_UNIQUE) === 0, type: str(s.INDEX_TYPE), columns: [], parts: [] };
      const column = s.COLUMN_NAME === null || s.COLUMN_NAME === undefined ? `(${str(s.EXPRESSION)})` : str(s.COLUMN_NAME);
      entry.columns.push(column);
      entry.parts.push(`${column}${s.SUB_PART !== null && s.SUB_PART !== undefined ? `(${str(s.SUB_PART)})` : ''}${str(s.COLLATION) === 'D' ? ' DESC' : ''}`);
      indexMap.set(indexName, entry);
    }
    const indexes = [...indexMap.entries()].map(([indexName, i]) => ({
      name: indexName,
      columns: i.columns,
      unique: i.unique,
      def: `${indexName === 'PRIMARY' ? 'PRIMARY KEY' : `${i.unique ? 'UNIQUE ' : ''}KEY ${quoteIdent(indexName)}`} USING ${i.type} (${i.parts.join(', ')})`,
    }));
    const fkMap = new Map<string, { columns: string[]; refTable: string; refColumns: string[]; rules: string }>();
    for (const f of fksOf.get(name) ?? []) {
      const fkName = str(f.name);
      const refSchema = str(f.refSchema);
      const entry = fkMap.get(fkName) ?? {
        columns: [],
        refTable: refSchema === database ? str(f.refTable) : `${refSchema}.${str(f.refTable)}`,
        refColumns: [],
        rules: `ON UPDATE ${str(f.onUpdate)} ON DELETE ${str(f.onDelete)}`,
      };
      entry.columns.push(str(f.col));
      entry.refColumns.push(str(f.refCol));
      fkMap.set(fkName, entry);
    }
    const foreignKeys = [...fkMap.entries()].map(([fkName, f]) => ({ name: fkName, columns: f.columns, refTable: f.refTable, refColumns: f.refColumns }));
    const primary = indexMap.get('PRIMARY');
    const fingerprint = canonicalHash({
      type: str(t.type),
      engine: str(t.engine),
      collation: tableCollation,
      columns: cols.map((col) => [col.name, col.type, col.nullable, col.default ?? null]),
      indexes: sortedTuples(indexes.map((i) => [i.name, i.def])),
      foreignKeys: sortedTuples([...fkMap.entries()].map(([fkName, f]) => [fkName, f.columns, f.refTable, f.refColumns, f.rules])),
      checks: sortedTuples((checksOf.get(name) ?? []).map((k) => [str(k.name), str(k.clause)])),
      triggers: sortedTuples((triggersOf.get(name) ?? []).map((g) => [str(g.name), str(g.timing), str(g.manipulation), num(g.ord), unqualify(str(g.body), database)])),
    });
    const dataLength = num(t.dataLength);
    const indexLength = num(t.indexLength);
    const table: InventoryTable = {
      name,
      kind: str(t.type),
      rowsEstimate: num(t.tableRows),
      totalBytes: dataLength + indexLength,
      tableBytes: dataLength,
      indexBytes: indexLength,
      columns: cols,
      ...(primary ? { primaryKey: primary.columns } : {}),
      indexes,
      foreignKeys,
      fingerprint,
    };
    const exact = options.exactCounts;
    if (exact && table.rowsEstimate < exact.maxRows && str(t.type) !== 'SEQUENCE') {
      const target = `${quoteIdent(database)}.${quoteIdent(name)}`;
      const ms = Math.max(1, Math.floor(exact.timeoutMs));
      const sql = mariadb
        ? `SET STATEMENT max_statement_time = ${ms / 1000} FOR SELECT COUNT(*) AS n FROM ${target}`
        : `SELECT /*+ MAX_EXECUTION_TIME(${ms}) */ COUNT(*) AS n FROM ${target}`;
      try {
        table.exactRows = num((await rows(c, sql))[0]?.n);
      } catch (error) {
        notes.push(`${database}: no exact row count for ${name}: ${(error as Error).message}`);
      }
    }
    result.push(table);
  }

  const paramsOf = group(parameters, 'spec');
  const routineNames = routines.map((r) => {
    const params = (paramsOf.get(str(r.spec)) ?? [])
      .filter((p) => str(p.type) === str(r.type))
      .map((p) => `${str(r.type) === 'PROCEDURE' ? `${str(p.pmode)} ` : ''}${str(p.name)} ${str(p.dtd)}`);
    return `${str(r.name)}(${params.join(', ')})${str(r.type) === 'FUNCTION' ? ` RETURNS ${str(r.ret)}` : ''}`;
  });
  const schemaHash = canonicalHash({
    charset: str(schema.cs),
    collation: str(schema.co),
    tables: sortedTuples(result.map((t) => [t.name, t.fingerprint])),
    views: views.map((v) => [str(v.name), sha256(unqualify(str(v.def), database)), str(v.checkOption), str(v.sec)]),
    routines: routines.map((r, i) => [
      routineNames[i],
      str(r.type),
      str(r.det),
      str(r.dataAccess),
      str(r.sec),
      sha256(unqualify(str(r.def), database)),
    ]),
    events: events.map((e) => [str(e.name), str(e.type), str(e.iv), str(e.field), sha256(unqualify(str(e.def), database))]),
  });

  const entry: InventoryDatabase = {
    name: database,
    sizeBytes: result.reduce((n, t) => n + t.totalBytes, 0),
    tables: result,
    schemaHash,
    views: views.map((v) => str(v.name)),
    routines: routineNames,
  };

  for (const kind of MIGRATION_TABLES) {
    const table = result.find((t) => t.name === kind.table) ?? result.find((t) => t.name.toLowerCase() === kind.table.toLowerCase());
    if (!table) continue;
    entry.migrationTable = table.name;
    try {
      const sql = kind.latest(
        `${quoteIdent(database)}.${quoteIdent(table.name)}`,
        quoteIdent,
        'mysql',
        table.columns.map((col) => col.name),
      );
      const version = (await rows(c, sql))[0]?.version;
      if (version !== null && version !== undefined) entry.migrationVersion = str(version);
    } catch (error) {
      notes.push(`${database}: could not read the latest migration from ${table.name}: ${(error as Error).message}`);
    }
    break;
  }
  return entry;
}

export const mysqlDriver: EngineDriver = createMysqlDriver();
