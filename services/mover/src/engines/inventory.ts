/** What both engines' inventories share: canonical hashing, migration tables, the manifest summary. */
import { createHash } from 'node:crypto';
import type { Inventory, InventoryDatabase } from './types.ts';

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** JSON with object keys sorted at every level, so equal descriptions hash equally. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const sorted: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
      return sorted;
    }
    return v;
  });
}

export const canonicalHash = (value: unknown): string => sha256(canonicalJson(value));

/** Sorts tuples by their first member (then the rest), for canonical lists. */
export function sortedTuples<T extends unknown[]>(rows: T[]): T[] {
  return [...rows].sort((a, b) => {
    const x = JSON.stringify(a);
    const y = JSON.stringify(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/** Overall schemaHash: sha256 over the sorted `name schemaHash` lines of the databases. */
export function overallSchemaHash(databases: Array<Pick<InventoryDatabase, 'name' | 'schemaHash'>>): string {
  return sha256(
    databases
      .map((d) => `${d.name} ${d.schemaHash}\n`)
      .sort()
      .join(''),
  );
}

type Quote = (name: string) => string;
type Engine = 'postgres' | 'mysql';

/**
 * Known migration tables, most specific first. `latest` is SQL selecting one row with one column
 * `version` (the latest applied migration) from the table named by `{t}`, in the engine's quoting.
 */
export interface MigrationTableKind {
  table: string;
  latest(t: string, q: Quote, engine: Engine, columns: string[]): string;
  /** SQL selecting the applied migrations, one column `version` in the words of `latest`, newest first. */
  applied(t: string, q: Quote, engine: Engine, columns: string[]): string;
}

/** How many applied migrations an inventory records (the newest ones): enough to name what ran between two backups. */
export const MIGRATIONS_KEPT = 500;

/** A kind whose `latest` is the first row of its `applied` list, unless it says otherwise. */
function kind(table: string, newestFirst: (t: string, q: Quote, engine: Engine, columns: string[], limit: number) => string, latest?: MigrationTableKind['latest']): MigrationTableKind {
  return {
    table,
    latest: latest ?? ((t, q, engine, columns) => newestFirst(t, q, engine, columns, 1)),
    applied: (t, q, engine, columns) => newestFirst(t, q, engine, columns, MIGRATIONS_KEPT),
  };
}

const asText = (column: string, engine: Engine): string => (engine === 'postgres' ? `${column}::text` : `CAST(${column} AS CHAR)`);
const joined = (a: string, b: string, engine: Engine): string => (engine === 'postgres' ? `${a} || '.' || ${b}` : `CONCAT(${a}, '.', ${b})`);

export const MIGRATION_TABLES: MigrationTableKind[] = [
  kind(
    '_prisma_migrations',
    (t, q, _engine, _columns, limit) =>
      `SELECT ${q('migration_name')} AS version FROM ${t} WHERE ${q('finished_at')} IS NOT NULL AND ${q('rolled_back_at')} IS NULL ` +
      `ORDER BY ${q('migration_name')} DESC LIMIT ${limit}`,
  ),
  kind(
    'flyway_schema_history',
    (t, q, _engine, _columns, limit) =>
      `SELECT ${q('version')} AS version FROM ${t} WHERE ${q('success')} AND ${q('version')} IS NOT NULL ORDER BY ${q('installed_rank')} DESC LIMIT ${limit}`,
  ),
  // Rails and dbmate keep one row per applied version; golang-migrate one row (version, dirty).
  kind('schema_migrations', (t, q, engine, columns, limit) => {
    const text = asText(q('version'), engine);
    if (columns.includes('dirty')) {
      const dirty = engine === 'postgres' ? `${text} || ' (dirty)'` : `CONCAT(${text}, ' (dirty)')`;
      return `SELECT CASE WHEN ${q('dirty')} THEN ${dirty} ELSE ${text} END AS version FROM ${t} ORDER BY ${q('version')} DESC LIMIT ${limit}`;
    }
    return `SELECT ${text} AS version FROM ${t} ORDER BY length(${text}) DESC, ${text} DESC LIMIT ${limit}`;
  }),
  kind('knex_migrations', (t, q, _engine, _columns, limit) => `SELECT ${q('name')} AS version FROM ${t} ORDER BY ${q('id')} DESC LIMIT ${limit}`),
  // Alembic keeps only its heads (the revisions passed through are not recorded); the latest is all of them.
  kind(
    'alembic_version',
    (t, q, _engine, _columns, limit) => `SELECT ${q('version_num')} AS version FROM ${t} ORDER BY ${q('version_num')} DESC LIMIT ${limit}`,
    (t, q, engine) =>
      engine === 'postgres'
        ? `SELECT string_agg(${q('version_num')}, ',' ORDER BY ${q('version_num')}) AS version FROM ${t}`
        : `SELECT GROUP_CONCAT(${q('version_num')} ORDER BY ${q('version_num')} SEPARATOR ',') AS version FROM ${t}`,
  ),
  kind(
    'django_migrations',
    (t, q, engine, _columns, limit) => `SELECT ${joined(q('app'), q('name'), engine)} AS version FROM ${t} ORDER BY ${q('applied')} DESC, ${q('id')} DESC LIMIT ${limit}`,
  ),
  kind('__EFMigrationsHistory', (t, q, _engine, _columns, limit) => `SELECT ${q('MigrationId')} AS version FROM ${t} ORDER BY ${q('MigrationId')} DESC LIMIT ${limit}`),
];

/** The rows of a kind's `applied` (newest first) as the inventory's `migrations`: oldest first, as text. */
export function appliedOldestFirst(rows: Array<Record<string, unknown>>): string[] {
  return rows.flatMap((row) => (row.version === null || row.version === undefined ? [] : [String(row.version)])).reverse();
}

/** The Manifest's `inventory` member (spec 2.1). */
export interface InventorySummary {
  databases: number;
  tables: number;
  rowsEstimate: number;
  bytes: number;
  schemaHash: string;
  migrationVersion: string;
}

/** The manifest summary; migrationVersion is the one database's version, or `db:version` pairs when several have one. */
export function summarizeInventory(inventory: Inventory): InventorySummary {
  const withVersion = inventory.databases.filter((d) => d.migrationVersion);
  return {
    databases: inventory.databases.length,
    tables: inventory.databases.reduce((n, d) => n + d.tables.length, 0),
    rowsEstimate: inventory.databases.reduce((n, d) => n + d.tables.reduce((m, t) => m + t.rowsEstimate, 0), 0),
    bytes: inventory.databases.reduce((n, d) => n + d.sizeBytes, 0),
    schemaHash: inventory.schemaHash,
    migrationVersion:
      withVersion.length === 1
        ? (withVersion[0]?.migrationVersion ?? '')
        : withVersion.map((d) => `${d.name}:${d.migrationVersion}`).join(', '),
  };
}

/** The checksum of a table from its row count and the two sums of its rows' hash halves. */
export function tableChecksum(rows: number, sumHigh: string, sumLow: string): string {
  return createHash('md5').update(`${rows}:${sumHigh}:${sumLow}`).digest('hex');
}

/** `database "a" does not exist` / `databases "a", "b" do not exist`. */
export function missingDatabasesError(missing: string[], where: string): Error {
  const names = missing.map((m) => `"${m}"`).join(', ');
  return new Error(missing.length === 1 ? `database ${names} does not exist on ${where}` : `databases ${names} do not exist on ${where}`);
}

/** Expands `*` into `all` and checks that named databases exist; keeps the order asked for, without duplicates. */
export function resolveWanted(wanted: string[], all: string[], exists: (name: string) => string | undefined, where: string): string[] {
  const result: string[] = [];
  const missing: string[] = [];
  for (const name of wanted.length === 0 ? ['*'] : wanted) {
    if (name === '*') {
      for (const db of all) if (!result.includes(db)) result.push(db);
      continue;
    }
    const found = exists(name);
    if (found === undefined) missing.push(name);
    else if (!result.includes(found)) result.push(found);
  }
  if (missing.length > 0) throw missingDatabasesError(missing, where);
  return result;
}
