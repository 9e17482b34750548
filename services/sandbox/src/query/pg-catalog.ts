/** PostgreSQL: what the catalog says about masked columns, result-column origins and the tables a sandbox lists. */

import type pg from 'pg';
import { isMasked } from './masks.ts';
import type { MaskedRelation, PlanCatalog } from './pg-plan.ts';
import { POSTGRES_PLAN, isIdentifier, tokenize } from './tokens.ts';
import type { TableInfo } from './types.ts';
import type { WireField } from './pg-wire.ts';

export const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;

const USER_SCHEMAS = `n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_(toast|temp_|toast_temp_)'`;
// Relations holding rows of their own; a view's rows come from the relations the plan shows.
const STORED_KINDS = `('r', 'p', 'f', 'm')`;
const ATTRIBUTED_KINDS = new Set(['r', 'p', 'f']);

export interface MaskCatalog extends PlanCatalog {
  /** Names of functions and non-C operators in the database's own schemas: they can read any column unseen. */
  userFunctions: string[];
  userOperators: string[];
}

interface ColumnRow {
  oid: number;
  schema: string;
  relation: string;
  kind: string;
  column: string;
}

const mentions = (definition: string, names: Set<string>): boolean =>
  tokenize(definition, POSTGRES_PLAN).some((token) => isIdentifier(token) && names.has(token.value));

/** The masked columns of this database, or undefined when no column of a user table matches a mask (masks do not apply). */
export async function loadMaskCatalog(client: pg.Client, masks: RegExp[]): Promise<MaskCatalog | undefined> {
  if (masks.length === 0) return undefined;
  const { rows } = await client.query<ColumnRow>(
    `SELECT c.oid::int AS oid, n.nspname AS schema, c.relname AS relation, c.relkind::text AS kind, a.attname AS column
       FROM pg_catalog.pg_class c
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE c.relkind IN ${STORED_KINDS} AND ${USER_SCHEMAS}
      ORDER BY c.oid, a.attnum`,
  );
  const byOid = new Map<number, { key: string; kind: string; columns: string[]; masked: Set<string> }>();
  for (const row of rows) {
    const entry = byOid.get(row.oid) ?? { key: `${row.schema}.${row.relation}`, kind: row.kind, columns: [], masked: new Set<string>() };
    entry.columns.push(row.column);
    if (isMasked(row.column, masks)) entry.masked.add(row.column);
    byOid.set(row.oid, entry);
  }
  const maskedOids = [...byOid].filter(([, e]) => e.masked.size > 0).map(([oid]) => oid);
  if (maskedOids.length === 0) return undefined;
  const maskedNames = new Set([...byOid.values()].flatMap((e) => [...e.masked]));
  const columns = new Map([...byOid.values()].map((e) => [e.key, e.columns]));
  const userFunctions = await names(client, `SELECT DISTINCT p.proname AS name FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace WHERE ${USER_SCHEMAS}`);
  const userOperators = await names(
    client,
    `SELECT DISTINCT o.oprname AS name FROM pg_catalog.pg_operator o
       JOIN pg_catalog.pg_namespace n ON n.oid = o.oprnamespace
       JOIN pg_catalog.pg_proc p ON p.oid = o.oprcode
       JOIN pg_catalog.pg_language l ON l.oid = p.prolang
      WHERE ${USER_SCHEMAS} AND l.lanname NOT IN ('c', 'internal')`,
  );
  const maskedIndexes = await indexesOver(client, maskedOids, byOid);
  const taintedViews = await materializedViewsOver(client, maskedNames, userFunctions, columns);
  const relations = new Map<string, MaskedRelation>();
  for (const entry of byOid.values()) {
    if (entry.masked.size > 0) relations.set(entry.key, { masked: entry.masked, columns: entry.columns });
    if (taintedViews.has(entry.key)) relations.set(entry.key, { masked: 'all', columns: entry.columns });
  }
  return { relations, maskedIndexes, userFunctions, userOperators };
}

async function names(client: pg.Client, sql: string): Promise<string[]> {
  return (await client.query<{ name: string }>(sql)).rows.map((r) => r.name);
}

async function indexesOver(client: pg.Client, oids: number[], byOid: Map<number, { masked: Set<string> }>): Promise<Set<string>> {
  const { rows } = await client.query<{ name: string; definition: string; table: number }>(
    `SELECT i.relname AS name, pg_catalog.pg_get_indexdef(x.indexrelid) AS definition, x.indrelid::int AS table
       FROM pg_catalog.pg_index x JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid
      WHERE x.indrelid = ANY($1::oid[])`,
    [oids],
  );
  return new Set(rows.filter((r) => mentions(r.definition, byOid.get(r.table)?.masked ?? new Set())).map((r) => r.name));
}

/**
 * A materialised view stores what its query computed: one built from masked columns (or from such a view, or with a
 * function of the database's own) holds masked values under any name.
 */
async function materializedViewsOver(client: pg.Client, maskedNames: Set<string>, userFunctions: string[], columns: Map<string, string[]>): Promise<Set<string>> {
  const { rows } = await client.query<{ key: string; definition: string }>(
    `SELECT n.nspname || '.' || c.relname AS key, pg_catalog.pg_get_viewdef(c.oid) AS definition
       FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'm' AND ${USER_SCHEMAS}`,
  );
  const names = new Set([...maskedNames, ...userFunctions]);
  const tainted = new Set<string>();
  for (let changed = true; changed; ) {
    changed = false;
    for (const row of rows) {
      if (tainted.has(row.key) || !mentions(row.definition, names)) continue;
      tainted.add(row.key);
      for (const column of columns.get(row.key) ?? []) names.add(column);
      changed = true;
    }
  }
  return tainted;
}

export interface Attribution {
  /** The column comes straight from a stored table column (not a view, not a materialised view, not an expression). */
  attributed: boolean;
  masked: boolean;
}

/** Which result columns come from table columns, and which of those are masked. */
export async function attribute(client: pg.Client, fields: WireField[], masks: RegExp[]): Promise<Attribution[]> {
  const oids = [...new Set(fields.filter((f) => f.tableID !== 0).map((f) => f.tableID))];
  const origins = new Map<string, { kind: string; column: string }>();
  if (oids.length > 0) {
    const { rows } = await client.query<{ oid: number; attnum: number; kind: string; column: string }>(
      `SELECT c.oid::int AS oid, a.attnum::int AS attnum, c.relkind::text AS kind, a.attname AS column
         FROM pg_catalog.pg_class c JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
        WHERE c.oid = ANY($1::oid[])`,
      [oids],
    );
    for (const row of rows) origins.set(`${row.oid}:${row.attnum}`, { kind: row.kind, column: row.column });
  }
  return fields.map((field) => {
    const origin = origins.get(`${field.tableID}:${field.columnID}`);
    const attributed = origin !== undefined && ATTRIBUTED_KINDS.has(origin.kind);
    return { attributed, masked: attributed && isMasked(origin.column, masks) };
  });
}

/** Base tables, partitioned tables and materialised views outside the system schemas. */
export async function listPostgresTables(client: pg.Client): Promise<TableInfo[]> {
  const { rows } = await client.query<{ schema: string; name: string; rows: string; bytes: string; columns: string[] }>(
    `SELECT n.nspname AS schema, c.relname AS name, GREATEST(c.reltuples, 0)::bigint::text AS rows,
            pg_catalog.pg_total_relation_size(c.oid)::text AS bytes,
            COALESCE((SELECT json_agg(a.attname ORDER BY a.attnum) FROM pg_catalog.pg_attribute a
                       WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '[]'::json) AS columns
       FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p', 'm') AND ${USER_SCHEMAS}`,
  );
  return rows.map((r) => ({ schema: r.schema, name: r.name, fullName: `${r.schema}.${r.name}`, rowsEstimate: Number(r.rows), bytes: Number(r.bytes), columns: r.columns }));
}
