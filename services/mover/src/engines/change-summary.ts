/**
 * What the committed transactions of one change-log segment did, whatever the engine: rows inserted, updated and
 * deleted and truncations by table, schema statements in order, and the sentence a person reads.
 */
import type { SegmentSummary, SegmentTableChange } from '@sigil/proto/strata-jobs';

export type TableCounts = SegmentTableChange;
export type ChangeKind = keyof TableCounts;

/** Counts being gathered: by table, then merged in when (and only if) their transaction commits. */
export class ChangeCounts {
  readonly tables = new Map<string, TableCounts>();

  add(table: string, kind: ChangeKind, rows: number): void {
    let counts = this.tables.get(table);
    if (!counts) {
      counts = { inserts: 0, updates: 0, deletes: 0, truncates: 0 };
      this.tables.set(table, counts);
    }
    counts[kind] += rows;
  }

  merge(other: ChangeCounts): void {
    for (const [table, counts] of other.tables) for (const kind of KINDS) if (counts[kind]) this.add(table, kind, counts[kind]);
  }

  clone(): ChangeCounts {
    const copy = new ChangeCounts();
    copy.merge(this);
    return copy;
  }

  record(): Record<string, TableCounts> {
    return Object.fromEntries([...this.tables].sort(([a], [b]) => a.localeCompare(b)).map(([table, counts]) => [table, { ...counts }]));
  }
}

const KINDS: ChangeKind[] = ['inserts', 'updates', 'deletes', 'truncates'];

const number = new Intl.NumberFormat('en-US');
const PHRASES: Record<ChangeKind, [string, string, string]> = {
  inserts: ['insert', 'inserts', 'into'],
  updates: ['update', 'updates', 'to'],
  deletes: ['delete', 'deletes', 'from'],
  truncates: ['truncate', 'truncates', 'of'],
};

/** Postgres tables named without the default schema a reader does not need (`shop.public.orders` → `shop.orders`). */
function shortName(table: string): string {
  return table.replace(/^([^.]+)\.public\./, '$1.');
}

/**
 * "ALTER TABLE customers ADD COLUMN tier; 1,204 updates to customers; 12 inserts into orders": the statements,
 * then each table's changes, largest first; "no changes" when nothing was committed.
 */
export function explain(summary: { tables: Record<string, TableCounts>; ddl: string[]; schemaChanges?: number }): string {
  const parts: string[] = summary.ddl.map((statement) => oneLine(statement));
  if (summary.schemaChanges) parts.push(`schema changed in ${number.format(summary.schemaChanges)} transaction${summary.schemaChanges === 1 ? '' : 's'}`);
  const changes = Object.entries(summary.tables).flatMap(([table, counts]) => KINDS.filter((kind) => counts[kind] > 0).map((kind) => ({ table, kind, rows: counts[kind] })));
  changes.sort((a, b) => b.rows - a.rows || a.table.localeCompare(b.table) || KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind));
  for (const { table, kind, rows } of changes) {
    const [one, many, preposition] = PHRASES[kind];
    parts.push(`${number.format(rows)} ${rows === 1 ? one : many} ${preposition} ${shortName(table)}`);
  }
  return parts.length ? parts.join('; ') : 'no changes';
}

/** A statement on one line, cut short for the sentence (the `ddl` list keeps it whole). */
function oneLine(statement: string): string {
  const line = statement.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

export function summaryOf(counts: ChangeCounts, ddl: string[], schemaChanges?: number): SegmentSummary {
  const tables = counts.record();
  return { tables, ddl: [...ddl], ...(schemaChanges !== undefined ? { schemaChanges } : {}), explanation: explain({ tables, ddl, ...(schemaChanges !== undefined ? { schemaChanges } : {}) }) };
}
