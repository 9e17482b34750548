/**
 * PostgreSQL: `pg_dump --format=custom` per database, restored with `pg_restore` from stdin into a
 * database created beforehand with the source's encoding and locale (read from the archive's own
 * DATABASE entry); server info, positions, inventories and checksums from the catalog via `pg`.
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { DatabaseAccess } from '@sigil/proto';
import {
  canonicalHash,
  MIGRATION_TABLES,
  overallSchemaHash,
  resolveWanted,
  sha256,
  sortedTuples,
  tableChecksum,
} from './inventory.ts';
import { findExecutable, pathDirs, runDump, runRestore, toolEnv, toolVersion } from './process.ts';
import type { ToolStep } from './process.ts';
import type {
  DumpOptions,
  DumpProcess,
  EngineDriver,
  Inventory,
  InventoryDatabase,
  InventoryOptions,
  InventoryTable,
  Position,
  RestoreOptions,
  RestoreProcess,
  ServerInfo,
  TableChecksum,
} from './types.ts';

const APPLICATION_NAME = 'strata-mover';
const SYSTEM_DATABASES = new Set(['postgres', 'template0', 'template1']);
/** Databases hosting providers keep for themselves; `*` leaves them out (the maintenance database `postgres` stays in). */
const PROVIDER_DATABASES = new Set(['rdsadmin', 'azure_maintenance', 'azure_sys', 'cloudsqladmin', 'alloydbadmin', 'alloydbmetadata']);
const USER_SCHEMAS = `n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_(toast|temp_|toast_temp_)'`;

export const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;
const quoteLiteral = (value: string): string => `'${value.replaceAll("'", "''")}'`;
const where = (access: DatabaseAccess): string => `${access.host}:${access.port}`;

function pgError(access: DatabaseAccess, database: string | undefined, error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  return new Error(`postgres ${where(access)}${database ? ` database "${database}"` : ''}: ${message}`, { cause: error });
}

async function open(access: DatabaseAccess, database: string): Promise<pg.Client> {
  const client = new pg.Client({
    host: access.host,
    port: access.port,
    user: access.username,
    password: access.password,
    database,
    connectionTimeoutMillis: 15_000,
    application_name: APPLICATION_NAME,
  });
  client.on('error', () => {}); // a server going away surfaces on the next query
  try {
    await client.connect();
    return client;
  } catch (error) {
    await client.end().catch(() => {});
    throw error;
  }
}

/** Runs fn on a connection to `database`, or to a maintenance database (postgres, else template1) when undefined. */
async function withClient<T>(access: DatabaseAccess, database: string | undefined, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  let client: pg.Client;
  try {
    if (database !== undefined) client = await open(access, database);
    else {
      try {
        client = await open(access, 'postgres');
      } catch (error) {
        if ((error as { code?: string }).code !== '3D000') throw error;
        client = await open(access, 'template1');
      }
    }
  } catch (error) {
    throw pgError(access, database, error);
  }
  try {
    return await fn(client);
  } catch (error) {
    throw pgError(access, database, error);
  } finally {
    await client.end().catch(() => {});
  }
}

const num = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

// ---------------------------------------------------------------------------------------------
// Tools

/** Directories with PostgreSQL client tools, best first: STRATA_PG_BINDIR, the newest /usr/lib/postgresql/<n>/bin, PATH. */
function pgBinDirs(): string[] {
  const dirs: string[] = [];
  if (process.env.STRATA_PG_BINDIR) dirs.push(process.env.STRATA_PG_BINDIR);
  for (const root of ['/usr/lib/postgresql', '/usr/local/pgsql']) {
    let entries: string[];
    try {
      entries = fs.readdirSync(root);
    } catch {
      continue;
    }
    entries.sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
    for (const entry of entries) dirs.push(path.join(root, entry, 'bin'));
  }
  return [...dirs, ...pathDirs(), '/usr/bin', '/usr/local/bin'];
}

/** The newest pg_dump/pg_restore: a newer client reads older servers, never the reverse. */
function pgTool(name: 'pg_dump' | 'pg_restore'): string {
  return findExecutable(name, pgBinDirs()) ?? name;
}

function connectionArgs(access: DatabaseAccess): string[] {
  return ['--no-password', `--host=${access.host}`, `--port=${access.port}`, `--username=${access.username}`];
}

function toolEnvFor(access: DatabaseAccess): NodeJS.ProcessEnv {
  return toolEnv({ PGPASSWORD: access.password, PGAPPNAME: APPLICATION_NAME, PGCONNECT_TIMEOUT: '15' });
}

/** `--dbname` treats values with `=` or a URI prefix as connection strings: pass those as `dbname='...'`. */
function dbnameArg(database: string): string {
  if (!database.includes('=') && !/^postgres(ql)?:\/\//i.test(database)) return `--dbname=${database}`;
  return `--dbname=dbname='${database.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/**
 * A pg_dump table pattern for `table` (in any schema) or `schema.table`, matched exactly (quoted).
 * Names that already contain pattern characters (`*`, `?`, `"`) are passed as written.
 */
export function tablePattern(name: string): string {
  if (/[*?"]/.test(name)) return name;
  const dot = name.indexOf('.');
  return dot < 0 ? `*.${quoteIdent(name)}` : `${quoteIdent(name.slice(0, dot))}.${quoteIdent(name.slice(dot + 1))}`;
}

export function pgDumpArgs(access: DatabaseAccess, database: string, options: DumpOptions): string[] {
  return [
    '--format=custom',
    '--compress=0',
    ...connectionArgs(access),
    dbnameArg(database),
    ...options.excludeTables.map((t) => `--exclude-table=${tablePattern(t)}`),
    ...options.excludeData.map((t) => `--exclude-table-data=${tablePattern(t)}`),
  ];
}

// ---------------------------------------------------------------------------------------------
// Restore: creating the database like the source's

export interface ArchiveDatabase {
  /** Option name (ENCODING, LOCALE_PROVIDER, LOCALE, LC_COLLATE, LC_CTYPE, ICU_LOCALE, ICU_RULES, ...) to its value. */
  options: Record<string, string>;
}

/** The source database's CREATE DATABASE options, from the DATABASE entry near the head of a custom-format archive. */
export function parseArchiveDatabase(head: Buffer): ArchiveDatabase | undefined {
  const text = head.toString('latin1');
  const match = /CREATE DATABASE (?:"(?:[^"]|"")*"|[^\s;]+) WITH TEMPLATE = template0((?: [A-Z_]+ = (?:'(?:[^']|'')*'|[A-Za-z0-9_]+))*);/.exec(text);
  if (!match) return undefined;
  const options: Record<string, string> = {};
  for (const m of (match[1] ?? '').matchAll(/ ([A-Z_]+) = ('(?:[^']|'')*'|[A-Za-z0-9_]+)/g)) {
    const raw = m[2] ?? '';
    options[m[1] ?? ''] = raw.startsWith("'") ? raw.slice(1, -1).replaceAll("''", "'") : raw;
  }
  // The encoding and locale are ASCII; decode them again as UTF-8 in case a value was not.
  for (const [k, v] of Object.entries(options)) options[k] = Buffer.from(v, 'latin1').toString('utf8');
  return { options };
}

/** CREATE DATABASE options this server version understands, in pg_dump's order. */
function createOptions(options: Record<string, string>, serverVersionNum: number): Array<[string, string]> {
  const supported: Array<[string, number]> = [
    ['ENCODING', 0],
    ['LOCALE_PROVIDER', 150000],
    ['LOCALE', 130000],
    ['LC_COLLATE', 0],
    ['LC_CTYPE', 0],
    ['BUILTIN_LOCALE', 170000],
    ['ICU_LOCALE', 150000],
    ['ICU_RULES', 160000],
  ];
  const result: Array<[string, string]> = [];
  for (const [key, since] of supported) {
    const value = options[key];
    if (value !== undefined && serverVersionNum >= since) result.push([key, value]);
  }
  const provider = options.LOCALE_PROVIDER;
  if (provider && provider !== 'libc' && !result.some(([k]) => k === 'LOCALE_PROVIDER')) {
    // An ICU/builtin source on a server without providers: fall back to the server's libc default.
    return result.filter(([k]) => k === 'ENCODING');
  }
  return result;
}

function createStatement(database: string, options: Array<[string, string]>): string {
  const rendered = options.map(([k, v]) => (k === 'LOCALE_PROVIDER' ? ` ${k} = ${v}` : ` ${k} = ${quoteLiteral(v)}`)).join('');
  return `CREATE DATABASE ${quoteIdent(database)} WITH TEMPLATE = template0${rendered}`;
}

async function createDatabaseLike(
  access: DatabaseAccess,
  database: string,
  source: Record<string, string>,
  warnings: string[],
): Promise<void> {
  await withClient(access, undefined, async (client) => {
    const versionNum = num((await client.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`)).rows[0]?.v);
    const full = createOptions(source, versionNum);
    const attempts: Array<Array<[string, string]>> = [full];
    if (full.some(([k]) => k !== 'ENCODING')) attempts.push(full.filter(([k]) => k === 'ENCODING'));
    if (full.length > 0) attempts.push([]);
    let lastError: unknown;
    for (const [i, options] of attempts.entries()) {
      try {
        await client.query(createStatement(database, options));
        if (i > 0) {
          warnings.push(
            `database "${database}" was created with ${options.length ? options.map(([k, v]) => `${k} = ${v}`).join(', ') : "the server's default encoding and locale"} ` +
              `instead of the source's ${full.map(([k, v]) => `${k} = ${v}`).join(', ')}: ${(lastError as Error).message}`,
          );
        }
        return;
      } catch (error) {
        if ((error as { code?: string }).code === '42P04') {
          throw new Error(`database "${database}" already exists on ${where(access)}; restore into a new name or drop it first`, { cause: error });
        }
        lastError = error;
      }
    }
    throw lastError;
  });
}

// ---------------------------------------------------------------------------------------------
// Inventory

interface TableRow {
  oid: number;
  schema: string;
  name: string;
  qualified: string;
  relkind: string;
  reltuples: number;
  relfilenode: string;
  total: string;
  main: string;
  idx: string;
  toast: string;
  n_tup_ins: string | null;
  n_tup_upd: string | null;
  n_tup_del: string | null;
  n_live_tup: string | null;
  last_autovacuum: Date | null;
  viewdef: string | null;
}

const KIND: Record<string, string> = { r: 'table', p: 'partitioned table', m: 'materialized view', f: 'foreign table' };

async function inventoryDatabase(
  client: pg.Client,
  database: string,
  options: InventoryOptions,
  notes: string[],
  extra: Record<string, string>,
): Promise<InventoryDatabase> {
  // Every name in definitions comes out schema-qualified, the same way on the source and its restore.
  await client.query(`SET search_path = ''`);
  const db = (
    await client.query<{ oid: number; size: string; encoding: string; collate: string; ctype: string }>(
      `SELECT d.oid::int8 AS oid, pg_database_size(d.oid) AS size, pg_encoding_to_char(d.encoding) AS encoding,
              d.datcollate AS collate, d.datctype AS ctype
         FROM pg_database d WHERE d.datname = current_database()`,
    )
  ).rows[0];
  if (db) {
    extra[`${database}.encoding`] = db.encoding;
    extra[`${database}.locale`] = db.collate === db.ctype ? db.collate : `${db.collate}/${db.ctype}`;
  }
  const notExtensionMember = (classid: string, oid: string): string =>
    `NOT EXISTS (SELECT 1 FROM pg_depend dep WHERE dep.classid = '${classid}'::regclass AND dep.objid = ${oid} AND dep.deptype = 'e')`;

  const extensions = (await client.query<{ name: string; version: string }>(`SELECT extname AS name, extversion AS version FROM pg_extension ORDER BY 1`)).rows;
  const schemas = (
    await client.query<{ name: string }>(
      `SELECT n.nspname AS name FROM pg_namespace n WHERE ${USER_SCHEMAS} AND ${notExtensionMember('pg_namespace', 'n.oid')} ORDER BY 1`,
    )
  ).rows.map((r) => r.name);

  const tables = (
    await client.query<TableRow>(
      `SELECT c.oid::int8 AS oid, n.nspname AS schema, c.relname AS name, format('%I.%I', n.nspname, c.relname) AS qualified,
              c.relkind AS relkind, c.reltuples::float8 AS reltuples, c.relfilenode::int8 AS relfilenode,
              pg_total_relation_size(c.oid) AS total, pg_relation_size(c.oid) AS main, pg_indexes_size(c.oid) AS idx,
              CASE WHEN c.reltoastrelid <> 0 THEN pg_total_relation_size(c.reltoastrelid) ELSE 0 END AS toast,
              s.n_tup_ins, s.n_tup_upd, s.n_tup_del, s.n_live_tup, s.last_autovacuum,
              CASE WHEN c.relkind = 'm' THEN pg_get_viewdef(c.oid) END AS viewdef
         FROM pg_class c
         JOIN pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid
        WHERE c.relkind IN ('r', 'p', 'm', 'f') AND ${USER_SCHEMAS} AND ${notExtensionMember('pg_class', 'c.oid')}
        ORDER BY n.nspname, c.relname`,
    )
  ).rows;
  const oids = tables.map((t) => t.oid);

  const columns = (
    await client.query<{ rel: string; name: string; type: string; nullable: boolean; def: string | null; identity: string; generated: string }>(
      `SELECT a.attrelid::int8 AS rel, a.attname AS name,
              format_type(a.atttypid, a.atttypmod)
                || CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation
                        THEN ' COLLATE ' || (SELECT format('%I.%I', cn.nspname, co.collname) FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace WHERE co.oid = a.attcollation)
                        ELSE '' END AS type,
              NOT a.attnotnull AS nullable, pg_get_expr(d.adbin, d.adrelid) AS def, a.attidentity AS identity, a.attgenerated AS generated
         FROM pg_attribute a
         JOIN pg_type t ON t.oid = a.atttypid
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY a.attrelid, a.attnum`,
      [oids],
    )
  ).rows;

  const indexes = (
    await client.query<{ rel: string; name: string; unique: boolean; primary: boolean; def: string; columns: string[]; nkey: number }>(
      `SELECT i.indrelid::int8 AS rel, ic.relname AS name, i.indisunique AS unique, i.indisprimary AS primary,
              pg_get_indexdef(i.indexrelid) AS def, i.indnkeyatts AS nkey,
              ARRAY(SELECT pg_get_indexdef(i.indexrelid, k, true) FROM generate_series(1, i.indnatts) AS k ORDER BY k) AS columns
         FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
        WHERE i.indrelid = ANY($1::oid[])
        ORDER BY 1, 2`,
      [oids],
    )
  ).rows;

  const constraints = (
    await client.query<{ rel: string; name: string; type: string; def: string; columns: string[]; ref: string | null; refcolumns: string[] }>(
      `SELECT c.conrelid::int8 AS rel, c.conname AS name, c.contype AS type, pg_get_constraintdef(c.oid) AS def,
              ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY AS k(n, o)
                      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.o)::text[] AS columns,
              CASE WHEN c.confrelid <> 0 THEN fn.nspname || '.' || fc.relname END AS ref,
              ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY AS k(n, o)
                      JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.o)::text[] AS refcolumns
         FROM pg_constraint c
         LEFT JOIN pg_class fc ON fc.oid = c.confrelid
         LEFT JOIN pg_namespace fn ON fn.oid = fc.relnamespace
        WHERE c.conrelid = ANY($1::oid[]) AND c.contype IN ('p', 'f', 'u', 'c', 'x')
        ORDER BY 1, 2`,
      [oids],
    )
  ).rows;

  const triggers = (
    await client.query<{ rel: string; name: string; def: string }>(
      `SELECT t.tgrelid::int8 AS rel, t.tgname AS name, pg_get_triggerdef(t.oid) AS def
         FROM pg_trigger t WHERE t.tgrelid = ANY($1::oid[]) AND NOT t.tgisinternal ORDER BY 1, 2`,
      [oids],
    )
  ).rows;

  const views = (
    await client.query<{ name: string; def: string }>(
      `SELECT n.nspname || '.' || c.relname AS name, pg_get_viewdef(c.oid) AS def
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind = 'v' AND ${USER_SCHEMAS} AND ${notExtensionMember('pg_class', 'c.oid')}
        ORDER BY 1`,
    )
  ).rows;

  const routines = (
    await client.query<{ name: string; def: string | null }>(
      `SELECT n.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS name,
              CASE WHEN p.prokind IN ('f', 'p') THEN pg_get_functiondef(p.oid) END AS def
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE ${USER_SCHEMAS} AND ${notExtensionMember('pg_proc', 'p.oid')}
        ORDER BY 1`,
    )
  ).rows;

  const types = (
    await client.query<{ name: string; kind: string; def: string }>(
      `SELECT n.nspname || '.' || t.typname AS name, t.typtype AS kind,
              CASE t.typtype
                WHEN 'e' THEN (SELECT string_agg(quote_literal(e.enumlabel), ', ' ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid)
                WHEN 'd' THEN format_type(t.typbasetype, t.typtypmod) || CASE WHEN t.typnotnull THEN ' NOT NULL' ELSE '' END
                              || coalesce(' DEFAULT ' || t.typdefault, '')
                              || coalesce((SELECT ' ' || string_agg(pg_get_constraintdef(dc.oid), ' ' ORDER BY dc.conname) FROM pg_constraint dc WHERE dc.contypid = t.oid), '')
                WHEN 'c' THEN (SELECT string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
                                 FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped)
                WHEN 'r' THEN (SELECT format_type(r.rngsubtype, NULL) FROM pg_range r WHERE r.rngtypid = t.oid)
              END AS def
         FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
        WHERE ${USER_SCHEMAS} AND ${notExtensionMember('pg_type', 't.oid')}
          AND (t.typtype IN ('e', 'd', 'r') OR (t.typtype = 'c' AND (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c'))
        ORDER BY 1`,
    )
  ).rows;

  const sequences = (
    await client.query<{ name: string; def: string }>(
      `SELECT n.nspname || '.' || c.relname AS name,
              format_type(s.seqtypid, NULL) || ' ' || s.seqstart || ' ' || s.seqincrement || ' ' || s.seqmin || ' ' || s.seqmax || ' ' || s.seqcache || ' ' || s.seqcycle AS def
         FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE ${USER_SCHEMAS} AND ${notExtensionMember('pg_class', 'c.oid')}
        ORDER BY 1`,
    )
  ).rows;

  const byRel = <T extends { rel: string }>(rows: T[]): Map<number, T[]> => {
    const map = new Map<number, T[]>();
    for (const row of rows) {
      const key = Number(row.rel);
      const list = map.get(key) ?? [];
      list.push(row);
      map.set(key, list);
    }
    return map;
  };
  const columnsOf = byRel(columns);
  const indexesOf = byRel(indexes);
  const constraintsOf = byRel(constraints);
  const triggersOf = byRel(triggers);

  const exact = options.exactCounts;
  const result: InventoryTable[] = [];
  for (const t of tables) {
    const oid = Number(t.oid);
    // Definitions name their own table; leave it out so a renamed table keeps its fingerprint.
    const unname = (def: string): string => def.split(` ON ${t.qualified} `).join(' ON <table> ').split(` ON ONLY ${t.qualified} `).join(' ON ONLY <table> ');
    const cols = (columnsOf.get(oid) ?? []).map((c) => {
      let def = c.def ?? undefined;
      if (c.identity) def = `generated ${c.identity === 'a' ? 'always' : 'by default'} as identity`;
      else if (c.generated === 's' && def !== undefined) def = `generated always as (${def}) stored`;
      return { name: c.name, type: c.type, nullable: c.nullable, ...(def !== undefined ? { default: def } : {}) };
    });
    const cons = constraintsOf.get(oid) ?? [];
    const pk = cons.find((c) => c.type === 'p');
    const fks = cons
      .filter((c) => c.type === 'f')
      .map((c) => ({ name: c.name, columns: c.columns, refTable: c.ref ?? '', refColumns: c.refcolumns }));
    const idx = (indexesOf.get(oid) ?? []).map((i) => ({
      name: i.name,
      columns: i.columns.slice(0, i.nkey),
      unique: i.unique,
      def: i.def,
    }));
    const trg = triggersOf.get(oid) ?? [];
    const fingerprint = canonicalHash({
      kind: t.relkind,
      columns: cols.map((c) => [c.name, c.type, c.nullable, c.default ?? null]),
      indexes: sortedTuples((indexesOf.get(oid) ?? []).map((i) => [i.name, unname(i.def)])),
      constraints: sortedTuples(cons.map((c) => [c.name, c.type, c.def])),
      triggers: sortedTuples(trg.map((g) => [g.name, unname(g.def)])),
      view: t.viewdef,
    });
    const reltuples = Number(t.reltuples);
    const rowsEstimate = reltuples >= 0 ? Math.round(reltuples) : num(t.n_live_tup);
    const table: InventoryTable = {
      name: t.name,
      schema: t.schema,
      kind: KIND[t.relkind] ?? t.relkind,
      rowsEstimate,
      totalBytes: num(t.total),
      tableBytes: num(t.main),
      indexBytes: num(t.idx),
      toastBytes: num(t.toast),
      columns: cols,
      ...(pk ? { primaryKey: pk.columns } : {}),
      indexes: idx,
      foreignKeys: fks,
      ...(t.n_tup_ins !== null
        ? {
            activity: {
              inserts: num(t.n_tup_ins),
              updates: num(t.n_tup_upd),
              deletes: num(t.n_tup_del),
              ...(t.last_autovacuum ? { lastAutovacuum: t.last_autovacuum.toISOString() } : {}),
            },
          }
        : {}),
      relfilenode: num(t.relfilenode),
      oid,
      fingerprint,
    };
    if (exact && rowsEstimate < exact.maxRows && t.relkind !== 'f') {
      try {
        await client.query(`SET statement_timeout = ${Math.max(1, Math.floor(exact.timeoutMs))}`);
        const only = t.relkind === 'p' ? '' : 'ONLY ';
        const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${only}${t.qualified}`);
        table.exactRows = num(rows[0]?.n);
      } catch (error) {
        notes.push(`${database}: no exact row count for ${t.schema}.${t.name}: ${(error as Error).message}`);
      } finally {
        await client.query('SET statement_timeout = 0');
      }
    }
    result.push(table);
  }

  const schemaHash = canonicalHash({
    schemas,
    extensions: extensions.map((e) => `${e.name} ${e.version}`),
    types: types.map((t) => [t.name, t.kind, t.def]),
    sequences: sequences.map((s) => [s.name, s.def]),
    tables: sortedTuples(result.map((t) => [`${t.schema}.${t.name}`, t.fingerprint])),
    views: views.map((v) => [v.name, sha256(v.def)]),
    routines: routines.map((r) => [r.name, r.def === null ? null : sha256(r.def)]),
  });

  const entry: InventoryDatabase = {
    name: database,
    sizeBytes: num(db?.size),
    tables: result,
    schemaHash,
    ...(db ? { oid: Number(db.oid) } : {}),
    extensions: extensions.map((e) => `${e.name} ${e.version}`),
    schemas,
    views: views.map((v) => v.name),
    routines: routines.map((r) => r.name),
  };

  // The known migration table, the one in `public` (then the first schema) for the first kind found.
  for (const kind of MIGRATION_TABLES) {
    const candidates = result.filter((t) => t.name === kind.table && t.kind === 'table');
    const table = candidates.find((t) => t.schema === 'public') ?? candidates[0];
    if (!table) continue;
    entry.migrationTable = table.schema === 'public' ? table.name : `${table.schema}.${table.name}`;
    try {
      const sql = kind.latest(
        `${quoteIdent(table.schema ?? 'public')}.${quoteIdent(table.name)}`,
        quoteIdent,
        'postgres',
        table.columns.map((c) => c.name),
      );
      const { rows } = await client.query<{ version: string | null }>(sql);
      const version = rows[0]?.version;
      if (version !== null && version !== undefined) entry.migrationVersion = String(version);
    } catch (error) {
      notes.push(`${database}: could not read the latest migration from ${entry.migrationTable}: ${(error as Error).message}`);
    }
    break;
  }
  return entry;
}

// ---------------------------------------------------------------------------------------------
// The driver

const SETTINGS = [
  'server_encoding',
  'lc_collate',
  'lc_ctype',
  'TimeZone',
  'wal_level',
  'archive_mode',
  'max_connections',
  'max_wal_senders',
  'max_replication_slots',
  'shared_buffers',
  'data_checksums',
  'block_size',
  'wal_segment_size',
  'server_version_num',
];

async function serverInfo(access: DatabaseAccess): Promise<ServerInfo> {
  return await withClient(access, undefined, async (client) => {
    const { rows } = await client.query<{ version: string; num: string; size: string | null; recovery: boolean }>(
      `SELECT current_setting('server_version') AS version, current_setting('server_version_num') AS num, pg_is_in_recovery() AS recovery,
              (SELECT sum(pg_database_size(d.oid)) FROM pg_database d
                WHERE d.datallowconn AND (has_database_privilege(d.oid, 'CONNECT') OR pg_has_role('pg_read_all_stats', 'MEMBER'))) AS size`,
    );
    const row = rows[0];
    const settings: Record<string, string> = {};
    const found = await client.query<{ name: string; value: string }>(
      `SELECT name, current_setting(name) AS value FROM pg_settings WHERE name = ANY($1::text[])`,
      [SETTINGS],
    );
    for (const s of found.rows) settings[s.name] = s.value;
    settings.in_recovery = String(row?.recovery ?? false);
    let systemID = '';
    try {
      const id = await client.query<{ id: string }>(`SELECT system_identifier::text AS id FROM pg_control_system()`);
      systemID = id.rows[0]?.id ?? '';
    } catch {
      // pg_control_system() not granted to this user
    }
    return {
      version: row?.version ?? '',
      host: where(access),
      systemID,
      major: Math.floor(num(row?.num) / 10000),
      settings,
      sizeBytes: num(row?.size),
    };
  });
}

async function listDatabases(access: DatabaseAccess, wanted: string[]): Promise<string[]> {
  return await withClient(access, undefined, async (client) => {
    const { rows } = await client.query<{ name: string; listed: boolean }>(
      `SELECT datname AS name, (NOT datistemplate AND datallowconn AND datconnlimit <> -2) AS listed FROM pg_database ORDER BY datname`,
    );
    const all = rows.filter((r) => r.listed && !PROVIDER_DATABASES.has(r.name)).map((r) => r.name);
    const names = new Set(rows.map((r) => r.name));
    return resolveWanted(wanted, all, (name) => (names.has(name) ? name : undefined), `postgres ${where(access)}`);
  });
}

async function position(access: DatabaseAccess): Promise<Position> {
  return await withClient(access, undefined, async (client) => {
    const recovery = (await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]?.r ?? false;
    if (!recovery) {
      const { rows } = await client.query<{ lsn: string; wal: string }>(
        `SELECT pg_current_wal_lsn()::text AS lsn, pg_walfile_name(pg_current_wal_lsn()) AS wal`,
      );
      const wal = rows[0]?.wal ?? '';
      return { startLSN: rows[0]?.lsn ?? '', startWAL: wal, timeline: Number.parseInt(wal.slice(0, 8), 16) || 1 };
    }
    // A standby: where replay is, on the timeline of its last checkpoint.
    const { rows } = await client.query<{ lsn: string | null; tli: number | null }>(
      `SELECT pg_last_wal_replay_lsn()::text AS lsn, (SELECT timeline_id FROM pg_control_checkpoint()) AS tli`,
    );
    const result: Position = { startLSN: rows[0]?.lsn ?? '' };
    if (rows[0]?.tli) result.timeline = Number(rows[0].tli);
    return result;
  });
}

function dump(access: DatabaseAccess, database: string, options: DumpOptions): DumpProcess {
  return runDump('pg_dump', async () => {
    const step: ToolStep = { tool: 'pg_dump', command: pgTool('pg_dump'), args: pgDumpArgs(access, database, options), env: toolEnvFor(access) };
    return { steps: [step] };
  });
}

/** How much of the archive to read before creating the database: its TOC, with the DATABASE entry, comes first. */
const ARCHIVE_HEAD_BYTES = 1024 * 1024;

function restore(access: DatabaseAccess, database: string, options: RestoreOptions = {}): RestoreProcess {
  return runRestore({
    tool: 'pg_restore',
    headBytes: ARCHIVE_HEAD_BYTES,
    headComplete: (head) => parseArchiveDatabase(head) !== undefined,
    start: async (head, warnings) => {
      if (head.length < 5 || head.subarray(0, 5).toString('latin1') !== 'PGDMP') {
        throw new Error(`pg_restore: the dump is not a pg_dump custom-format archive (it starts with ${JSON.stringify(head.subarray(0, 16).toString('latin1'))})`);
      }
      const source = { ...(parseArchiveDatabase(head)?.options ?? {}) };
      if (options.charset) source.ENCODING = options.charset;
      if (options.collation) {
        for (const key of ['LOCALE_PROVIDER', 'LC_COLLATE', 'LC_CTYPE', 'ICU_LOCALE', 'ICU_RULES', 'BUILTIN_LOCALE']) delete source[key];
        source.LOCALE = options.collation;
      }
      await createDatabaseLike(access, database, source, warnings);
      return {
        step: {
          tool: 'pg_restore',
          command: pgTool('pg_restore'),
          args: [
            ...connectionArgs(access),
            dbnameArg(database),
            '--no-owner',
            '--no-acl',
            '--exit-on-error',
            '--no-tablespaces',
            // A restored copy must never start consuming its source's publications.
            '--no-subscriptions',
          ],
          env: toolEnvFor(access),
        },
        cleanup: () => dropDatabase(access, database),
        // pg_restore leaves the planner without statistics (row estimates of -1): gather them, as after any restore.
        finish: () => withClient(access, database, async (client) => void (await client.query('ANALYZE'))),
      };
    },
  });
}

async function dropDatabase(access: DatabaseAccess, database: string): Promise<void> {
  if (SYSTEM_DATABASES.has(database)) throw new Error(`refusing to drop the system database "${database}"`);
  await withClient(access, undefined, async (client) => {
    const versionNum = num((await client.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`)).rows[0]?.v);
    if (versionNum >= 130000) {
      await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(database)} WITH (FORCE)`);
      return;
    }
    await client.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [database]);
    await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(database)}`);
  });
}

async function inventory(access: DatabaseAccess, databases: string[], options: InventoryOptions = {}): Promise<Inventory> {
  const collectedAt = new Date().toISOString();
  const server = await serverInfo(access);
  const notes: string[] = [];
  const extra: Record<string, string> = {};
  const entries: InventoryDatabase[] = [];
  for (const database of databases) {
    entries.push(await withClient(access, database, (client) => inventoryDatabase(client, database, options, notes, extra)));
  }
  return {
    collectedAt,
    engine: 'postgres',
    server,
    databases: entries,
    schemaHash: overallSchemaHash(entries),
    ...(notes.length ? { notes } : {}),
    extra,
  };
}

async function tableChecksums(access: DatabaseAccess, database: string): Promise<Record<string, TableChecksum>> {
  return await withClient(access, database, async (client) => {
    // Row text depends on these; fix them so a source and its restore render rows alike.
    await client.query(
      `SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET IntervalStyle = 'postgres'; SET extra_float_digits = 1; SET bytea_output = 'hex'; SET search_path = ''`,
    );
    const { rows: tables } = await client.query<{ schema: string; name: string }>(
      `SELECT n.nspname AS schema, c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind = 'r' AND ${USER_SCHEMAS} ORDER BY 1, 2`,
    );
    const result: Record<string, TableChecksum> = {};
    for (const t of tables) {
      // A multiset hash: the sums of the two halves of every row's md5, so row order does not matter
      // and memory stays flat whatever the table's size.
      const { rows } = await client.query<{ n: string; hi: string; lo: string }>(
        `SELECT count(*) AS n,
                coalesce(sum(('x' || substr(h, 1, 16))::bit(64)::int8::numeric), 0)::text AS hi,
                coalesce(sum(('x' || substr(h, 17, 16))::bit(64)::int8::numeric), 0)::text AS lo
           FROM (SELECT md5(ROW(r.*)::text) AS h FROM ONLY ${quoteIdent(t.schema)}.${quoteIdent(t.name)} AS r) AS x`,
      );
      const row = rows[0];
      const n = num(row?.n);
      result[`${t.schema}.${t.name}`] = { rows: n, checksum: tableChecksum(n, row?.hi ?? '0', row?.lo ?? '0') };
    }
    return result;
  });
}

async function tools(): Promise<Record<string, string>> {
  const [dumpVersion, restoreVersion] = await Promise.all([toolVersion(pgTool('pg_dump')), toolVersion(pgTool('pg_restore'))]);
  return { pg_dump: dumpVersion, pg_restore: restoreVersion };
}

export const postgresDriver: EngineDriver = {
  engine: 'postgres',
  serverInfo,
  listDatabases,
  position,
  dump,
  inventory,
  restore,
  dropDatabase,
  tableChecksums,
  tools,
};
