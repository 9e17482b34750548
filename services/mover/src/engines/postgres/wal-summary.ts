/**
 * A segment's summary from the changes pg_waldump showed (wal-changes.ts) and the names of the files: rows by table
 * (TOAST chunks and catalog rows are not rows of a table), truncations, and the transactions that changed the schema.
 *
 * A committed transaction that created a new file for a table and dropped the table's old one replaced its storage:
 * a TRUNCATE when it wrote no row into the new file, a rewrite (ALTER TABLE … that rewrites, VACUUM FULL, CLUSTER:
 * a schema change, whose copied rows are not inserts) when it did.
 */
import type pg from 'pg';
import type { SegmentSummary } from '@sigil/proto/strata-jobs';
import { ChangeCounts, summaryOf } from '../change-summary.ts';
import type { RelationInfo, RelationResolver } from './relation-names.ts';
import type { FileKey, RowCounts, WalChanges, WalTransaction } from './wal-changes.ts';

const KINDS = ['inserts', 'updates', 'deletes', 'truncates'] as const;

function filesOf(changes: WalChanges): FileKey[] {
  const files = new Set(changes.rows.keys());
  for (const tx of changes.fileTransactions) for (const file of [...tx.rows.keys(), ...tx.created, ...tx.dropped]) files.add(file);
  return [...files];
}

/** What one transaction that created or dropped files did; its rows that count are added to `rows`. */
function fileTransaction(tx: WalTransaction, names: Map<FileKey, RelationInfo>, counts: ChangeCounts, rows: Map<FileKey, RowCounts>): boolean {
  const tableOf = (file: FileKey) => (names.get(file)?.kind === 'table' ? names.get(file)!.name : undefined);
  const createdFor = new Map<string, FileKey>();
  for (const file of tx.created) {
    const table = tableOf(file);
    if (table) createdFor.set(table, file);
  }
  let schemaChanged = tx.catalogRows > 0;
  let truncated = false;
  const copies = new Set<FileKey>();
  for (const file of tx.dropped) {
    const table = tableOf(file);
    const replacement = table && createdFor.get(table);
    if (!table) continue;
    if (!replacement) {
      schemaChanged = true; // dropped
    } else if ((tx.rows.get(replacement)?.inserts ?? 0) > 0) {
      schemaChanged = true; // rewritten: its rows were copied, not inserted
      copies.add(replacement);
    } else {
      counts.add(table, 'truncates', 1);
      truncated = true;
    }
  }
  if (tx.classUpdates > 0 && !truncated) schemaChanged = true;
  for (const [file, change] of tx.rows) {
    if (copies.has(file)) continue;
    const into = { ...(rows.get(file) ?? { inserts: 0, updates: 0, deletes: 0, truncates: 0 }) };
    for (const kind of KINDS) into[kind] += change[kind];
    rows.set(file, into);
  }
  return schemaChanged;
}

/** The oids of the databases a target backs up (`<database oid>/<relfilenode>` files of others are left out); undefined: all. */
export type DatabaseScope = ReadonlySet<string> | undefined;

const inScope = (scope: DatabaseScope) => (file: FileKey) => !scope || scope.has(file.split('/')[0]!);

/**
 * The summary of a segment's changes, naming the files through `resolver`: the rows of the target's databases only,
 * and the transactions that created or dropped their files or changed their system catalogs.
 */
export async function summarizeWalChanges(changes: WalChanges, resolver: RelationResolver, scope?: DatabaseScope): Promise<SegmentSummary> {
  const ours = inScope(scope);
  const names = await resolver.resolve(filesOf(changes).filter(ours));
  const counts = new ChangeCounts();
  const rows = new Map<FileKey, RowCounts>([...changes.rows].filter(([file]) => ours(file)));
  let schemaChanges = scope ? [...changes.schemaTransactionsByDatabase].reduce((n, [database, count]) => n + (scope.has(database) ? count : 0), 0) : changes.schemaTransactions;
  for (const tx of changes.fileTransactions) {
    if (![...tx.rows.keys(), ...tx.created, ...tx.dropped].some(ours)) continue;
    const scoped = { ...tx, rows: new Map([...tx.rows].filter(([file]) => ours(file))) };
    if (fileTransaction(scoped, names, counts, rows)) schemaChanges += 1;
  }
  for (const [file, change] of rows) {
    const relation = names.get(file);
    if (relation && relation.kind !== 'table') continue;
    // A file no catalog names any more (created and dropped between two looks): counted, under its number.
    const table = relation?.name ?? `relation file ${file}`;
    for (const kind of KINDS) if (change[kind] > 0) counts.add(table, kind, change[kind]);
  }
  return summaryOf(counts, [], schemaChanges);
}

/**
 * The summary to report with a segment, or why there is none: a summary that cannot be made (the source's catalog
 * unreachable) never holds the upload back; `warn` is told the cause.
 */
export async function summaryOrReason(changes: WalChanges, resolver: RelationResolver, warn: (cause: string) => void, scope?: DatabaseScope): Promise<{ summary: SegmentSummary } | { summaryError: string }> {
  try {
    return { summary: await summarizeWalChanges(changes, resolver, scope) };
  } catch (error) {
    const cause = error instanceof Error ? error.message : String(error);
    warn(cause);
    return { summaryError: `the change summary could not be made: ${cause}` };
  }
}

/** The oids of the target's databases; undefined when it backs up every database (`*`, or none named). */
export async function databaseScope(client: pg.Client, databases: string[] | undefined): Promise<DatabaseScope> {
  if (!databases?.length || databases.includes('*')) return undefined;
  const { rows } = await client.query<{ oid: string }>('SELECT oid::text AS oid FROM pg_database WHERE datname = ANY($1)', [databases]);
  return new Set(rows.map((row) => row.oid));
}
