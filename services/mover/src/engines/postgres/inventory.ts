/** PostgreSQL: Inventories and checksums read from the catalog: schemas, tables, row estimates, migration versions. */

import type pg from 'pg';
import type { DatabaseAccess } from '@sigil/proto/strata-jobs';
import { appliedOldestFirst, canonicalHash, MIGRATION_TABLES, overallSchemaHash, sha256, sortedTuples, tableChecksum } from '../inventory.ts';
import type { Inventory, InventoryDatabase, InventoryOptions, InventoryTable, TableChecksum } from '../types.ts';
import { serverInfo } from './server.ts';
import { USER_SCHEMAS, num, quoteIdent, withClient } from './shared.ts';

export interface TableRow {
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

export const KIND: Record<string, string> = { r: 'table', p: 'partitioned table', m: 'materialized view', f: 'foreign table' };

export async function inventoryDatabase(
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
    const name = `${quoteIdent(table.schema ?? 'public')}.${quoteIdent(table.name)}`;
    const columns = table.columns.map((c) => c.name);
    try {
      const { rows } = await client.query<{ version: string | null }>(kind.latest(name, quoteIdent, 'postgres', columns));
      const version = rows[0]?.version;
      if (version !== null && version !== undefined) entry.migrationVersion = String(version);
      const applied = await client.query<{ version: string | null }>(kind.applied(name, quoteIdent, 'postgres', columns));
      entry.migrations = appliedOldestFirst(applied.rows);
    } catch (error) {
      notes.push(`${database}: could not read the latest migration from ${entry.migrationTable}: ${(error as Error).message}`);
    }
    break;
  }
  return entry;
}

export async function inventory(access: DatabaseAccess, databases: string[], options: InventoryOptions = {}): Promise<Inventory> {
  const collectedAt = new Date().toISOString();
  const server = options.server ?? (await serverInfo(access));
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

export async function tableChecksums(access: DatabaseAccess, database: string): Promise<Record<string, TableChecksum>> {
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
