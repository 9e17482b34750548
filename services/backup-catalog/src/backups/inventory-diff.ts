/**
 * The diff of two inventories of one target (spec 2.1 Diff): what changed in its schema, rows and sizes between two
 * backups, computed from what the mover recorded and never from the data. Pure: the catalog reads the inventories.
 */
import type { components } from '@sigil/proto/api/strata';
import { schemaLines } from './schema-lines.ts';

export type Inventory = components['schemas']['Inventory'];
export type InventoryDatabase = components['schemas']['InventoryDatabase'];
export type InventoryTable = components['schemas']['InventoryTable'];
export type Diff = components['schemas']['Diff'];
type ColumnChange = components['schemas']['ColumnChange'];
type RowDelta = components['schemas']['RowDelta'];
type TableRename = components['schemas']['TableRename'];
type Column = components['schemas']['InventoryColumn'];

/** A table of one side, under its name in the diff: `database.schema.table` (Postgres) or `database.table` (MySQL). */
export interface Located {
  database: string;
  key: string;
  table: InventoryTable;
}

/** Two tables taken for one: same name, or renamed (matched by the engine's identity or by identical columns). */
export interface TablePair {
  before: Located;
  after: Located;
  matchedBy?: 'identity' | 'columns';
}

export interface TableMatch {
  pairs: TablePair[];
  dropped: Located[];
  added: Located[];
}

export const tableKey = (database: string, table: InventoryTable): string =>
  table.schema ? `${database}.${table.schema}.${table.name}` : `${database}.${table.name}`;

const locate = (database: InventoryDatabase): Located[] => database.tables.map((table) => ({ database: database.name, key: tableKey(database.name, table), table }));

/** Column names and types in order: two tables with the same list are taken for one renamed when nothing else matches. */
const columnSignature = (table: InventoryTable): string => JSON.stringify((table.columns ?? []).map((c) => [c.name ?? '', c.type ?? '']));

/**
 * Matches the tables of one database: by name first; then a dropped and an added table with the same identity
 * (`oid`), when both inventories come from one server's history (same systemID); then a dropped and an added table
 * whose column lists are identical, when exactly one of each has that list.
 */
export function matchTables(before: InventoryDatabase, after: InventoryDatabase, sameHistory: boolean): TableMatch {
  const afterByKey = new Map(locate(after).map((t) => [t.key, t]));
  const pairs: TablePair[] = [];
  let dropped: Located[] = [];
  for (const old of locate(before)) {
    const same = afterByKey.get(old.key);
    if (same) {
      pairs.push({ before: old, after: same });
      afterByKey.delete(old.key);
    } else dropped.push(old);
  }
  let added = [...afterByKey.values()];
  if (sameHistory) {
    const byOid = new Map(added.filter((t) => t.table.oid !== undefined).map((t) => [t.table.oid, t]));
    const renamed = dropped.flatMap((old) => {
      const now = old.table.oid === undefined ? undefined : byOid.get(old.table.oid);
      return now ? [{ before: old, after: now, matchedBy: 'identity' as const }] : [];
    });
    ({ dropped, added } = take(renamed, dropped, added));
    pairs.push(...renamed);
  }
  const bySignature = (list: Located[]) => Map.groupBy(list, (t) => columnSignature(t.table));
  const droppedBy = bySignature(dropped);
  const addedBy = bySignature(added);
  const renamed: TablePair[] = [];
  for (const [signature, olds] of droppedBy) {
    const news = addedBy.get(signature);
    if (olds.length === 1 && news?.length === 1 && (olds[0]!.table.columns ?? []).length > 0) renamed.push({ before: olds[0]!, after: news[0]!, matchedBy: 'columns' });
  }
  ({ dropped, added } = take(renamed, dropped, added));
  pairs.push(...renamed);
  return { pairs, dropped, added };
}

function take(renamed: TablePair[], dropped: Located[], added: Located[]): { dropped: Located[]; added: Located[] } {
  const gone = new Set(renamed.flatMap((p) => [p.before, p.after]));
  return { dropped: dropped.filter((t) => !gone.has(t)), added: added.filter((t) => !gone.has(t)) };
}

const columnText = (c: Column): string => `${c.type ?? ''}`;
const nullText = (nullable: boolean | undefined): string => (nullable === false ? 'NOT NULL' : 'NULL');
const defaultText = (c: Column): string => c.default ?? 'none';

/** Column and index changes of a table present on both sides; undefined when there are none. */
export function columnChange(pair: TablePair): ColumnChange | undefined {
  const old = new Map((pair.before.table.columns ?? []).map((c) => [c.name ?? '', c]));
  const now = new Map((pair.after.table.columns ?? []).map((c) => [c.name ?? '', c]));
  const both = [...now.keys()].filter((name) => old.has(name));
  const changed = (test: (a: Column, b: Column) => boolean, text: (c: Column) => string) =>
    both.filter((name) => test(old.get(name)!, now.get(name)!)).map((name) => `${name}: ${text(old.get(name)!)} → ${text(now.get(name)!)}`);
  const indexes = (t: InventoryTable) => new Map((t.indexes ?? []).map((i) => [i.name ?? '', JSON.stringify([i.columns ?? [], i.unique ?? false])]));
  const oldIndexes = indexes(pair.before.table);
  const newIndexes = indexes(pair.after.table);
  const change: ColumnChange = {
    table: pair.after.key,
    added: [...now.keys()].filter((name) => !old.has(name)),
    removed: [...old.keys()].filter((name) => !now.has(name)),
    typeChanged: changed((a, b) => (a.type ?? '') !== (b.type ?? ''), columnText),
    nullabilityChanged: changed((a, b) => nullText(a.nullable) !== nullText(b.nullable), (c) => nullText(c.nullable)),
    defaultChanged: changed((a, b) => defaultText(a) !== defaultText(b), defaultText),
    indexAdded: [...newIndexes.keys()].filter((name) => oldIndexes.get(name) !== newIndexes.get(name)),
    indexDropped: [...oldIndexes.keys()].filter((name) => oldIndexes.get(name) !== newIndexes.get(name)),
  };
  const lists = [change.added, change.removed, change.typeChanged, change.nullabilityChanged, change.defaultChanged, change.indexAdded, change.indexDropped];
  return lists.some((list) => list!.length > 0) ? change : undefined;
}

/** Rows counted exactly when both sides counted them (`exactRows`), else the engine's estimates. */
export function rowDelta(key: string, before: InventoryTable | undefined, after: InventoryTable | undefined): RowDelta | undefined {
  const exact = (before === undefined || before.exactRows !== undefined) && (after === undefined || after.exactRows !== undefined);
  const rows = (t: InventoryTable | undefined) => (t === undefined ? 0 : exact ? (t.exactRows as number) : t.rowsEstimate);
  const rowsBefore = rows(before);
  const rowsAfter = rows(after);
  const sizeBefore = before?.totalBytes ?? 0;
  const sizeAfter = after?.totalBytes ?? 0;
  if (before && after && rowsBefore === rowsAfter && sizeBefore === sizeAfter) return undefined;
  const rowsPct = rowsBefore === 0 ? (rowsAfter === 0 ? 0 : 100) : Math.round(((rowsAfter - rowsBefore) / rowsBefore) * 10_000) / 100;
  return { table: key, rowsBefore, rowsAfter, sizeBefore, sizeAfter, rowsPct, estimated: !exact };
}

/** The migration version as the manifest summary words it: the one database's, or `database:version` pairs. */
export function migrationOf(inventory: Inventory): string {
  const withVersion = inventory.databases.filter((d) => d.migrationVersion);
  if (withVersion.length === 1) return withVersion[0]!.migrationVersion!;
  return withVersion.map((d) => `${d.name}:${d.migrationVersion}`).join(', ');
}

/**
 * The migrations the newer inventory records and the older one does not, oldest first. A database whose older
 * inventory had its migration table but no list (recorded before inventories kept one) says nothing.
 */
export function migrationsApplied(before: Inventory, after: Inventory): string[] {
  const old = new Map(before.databases.map((d) => [d.name, d]));
  const withTable = after.databases.filter((d) => d.migrations !== undefined);
  return withTable.flatMap((database) => {
    const previous = old.get(database.name);
    if (previous?.migrationTable && previous.migrations === undefined) return [];
    const known = new Set(previous?.migrations ?? []);
    const fresh = (database.migrations ?? []).filter((name) => !known.has(name));
    return withTable.length > 1 ? fresh.map((name) => `${database.name}: ${name}`) : fresh;
  });
}

const byTable = <T extends { table?: string }>(list: T[]): T[] => list.sort((a, b) => ((a.table ?? '') < (b.table ?? '') ? -1 : 1));
const sizeOf = (inventory: Inventory): number => inventory.databases.reduce((sum, d) => sum + d.sizeBytes, 0);

/** The labels of the two sides in `lines` (`--- backup <id>`). */
export interface DiffLabels {
  before: string;
  after: string;
}

/** Spec 2.1 Diff from the inventory of the older backup to the newer one's. */
export function diffInventories(before: Inventory, after: Inventory, labels: DiffLabels = { before: 'before', after: 'after' }): Diff {
  const sameHistory = Boolean(before.server.systemID) && before.server.systemID === after.server.systemID;
  const oldDatabases = new Map(before.databases.map((d) => [d.name, d]));
  const newDatabases = new Map(after.databases.map((d) => [d.name, d]));
  const matches: TableMatch[] = [];
  for (const database of after.databases) {
    const previous = oldDatabases.get(database.name);
    matches.push(previous ? matchTables(previous, database, sameHistory) : { pairs: [], dropped: [], added: locate(database) });
  }
  for (const database of before.databases) if (!newDatabases.has(database.name)) matches.push({ pairs: [], dropped: locate(database), added: [] });
  const pairs = matches.flatMap((m) => m.pairs);
  const dropped = matches.flatMap((m) => m.dropped);
  const added = matches.flatMap((m) => m.added);
  const renamed = pairs.filter((p) => p.matchedBy);
  const rows = [
    ...pairs.map((p) => rowDelta(p.after.key, p.before.table, p.after.table)),
    ...dropped.map((t) => rowDelta(t.key, t.table, undefined)),
    ...added.map((t) => rowDelta(t.key, undefined, t.table)),
  ].filter((delta) => delta !== undefined);
  return {
    schemaChanged: before.schemaHash !== after.schemaHash,
    databasesAdded: after.databases.filter((d) => !oldDatabases.has(d.name)).map((d) => d.name),
    databasesDropped: before.databases.filter((d) => !newDatabases.has(d.name)).map((d) => d.name),
    tablesAdded: added.map((t) => t.key).sort(),
    tablesDropped: dropped.map((t) => t.key).sort(),
    tablesRenamed: renamed.map((p): TableRename => ({ from: p.before.key, to: p.after.key, matchedBy: p.matchedBy! })),
    columns: byTable(pairs.map(columnChange).filter((change) => change !== undefined)),
    rows: byTable(rows),
    sizeBefore: sizeOf(before),
    sizeAfter: sizeOf(after),
    migrationBefore: migrationOf(before),
    migrationAfter: migrationOf(after),
    migrationsApplied: migrationsApplied(before, after),
    lines: schemaLines(before, after, { pairs, dropped, added }, labels),
  };
}
