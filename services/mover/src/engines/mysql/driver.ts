/** MySQL and MariaDB: The driver: server info, databases, positions, dump and restore processes. */

import type { DatabaseAccess } from '@sigil/proto/strata-jobs';
import { overallSchemaHash, resolveWanted, tableChecksum } from '../inventory.ts';
import { AlterDatabaseFilter, decodeHeader, encodeHeader, PositionSniffer } from '../mysql-stream.ts';
import { TableSectionFilter } from '../mysql-tables.ts';
import * as streams from 'node:stream';
import { runDump, runRestore, toolVersion } from '../process.ts';
import type { ToolStep } from '../process.ts';
import type { DumpOptions, DumpProcess, EngineDriver, Inventory, InventoryDatabase, InventoryOptions, Position, RestoreOptions, RestoreProcess, ServerInfo, TableChecksum } from '../types.ts';
import { inventoryDatabase } from './inventory.ts';
import { SYSTEM_DATABASES, isMariadb, num, quoteIdent, rows, str, where, withConnection } from './shared.ts';
import { CONNECT_TIMEOUT_S, connectionArgs, dumpContext, dumpFeatures, envFor, helpText, masterStatus, mysqlTool, tablesOf } from './tools.ts';

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
      // A server that answered but failed a query: the dump runs on what was read, and its record says what was not.
      const warnings = context.connected && context.error ? [`the server's settings were not all read before the dump (${context.error}); it records no binlog position`] : [];
      return { steps, header, tap: (chunk) => sniffer.push(chunk), warnings };
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
        if (!options.existing) await withConnection(access, undefined, async (c) => {
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
          filter: options.tables?.length ? composeFilters(new AlterDatabaseFilter(), new TableSectionFilter(options.tables)) : new AlterDatabaseFilter(),
          cleanup: () => (options.existing ? Promise.resolve() : dropDatabase(access, database)),
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
    const server = options.server ?? (await serverInfo(access));
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

export const mysqlDriver: EngineDriver = createMysqlDriver();

/** `stream.compose` (Node's own, typed here since @types/node leaves it out): one transform of several in a row. */
function composeFilters(...filters: streams.Transform[]): streams.Transform {
  return (streams as unknown as { compose: (...s: streams.Transform[]) => streams.Transform }).compose(...filters);
}
