/**
 * Masked row previews, whatever the engine: sample rows of each insert, update (before and after) and delete, at most
 * `rows` per table and kind, values cut at `maxValueLength`; then, with the tables' column names, every column whose
 * name matches one of the target's `mask` expressions becomes `***`. Rows are kept by column position until then
 * (binlog row images name no columns); nothing here logs a row.
 */
import type { PreviewRow, PreviewSettings, SegmentPreviews, TablePreviews } from '@sigil/proto/strata-jobs';

export const MASKED = '***';
/** What ends a value that was cut at `maxValueLength`. */
export const CUT_MARK = '…';

/** Column position (from 1) → value as text (cut already); SQL NULL is null. */
export type RawRow = Map<number, string | null>;
export type PreviewKind = 'inserts' | 'updates' | 'deletes';

interface RawTable {
  inserts: RawRow[];
  updates: Array<{ before: RawRow; after: RawRow }>;
  deletes: RawRow[];
}

/** A value at most `max` characters long (code points), the cut ones ending with CUT_MARK. */
export function cutValue(value: string, max: number): string {
  if (value.length <= max) return value;
  const points = Array.from(value);
  return points.length <= max ? value : `${points.slice(0, max).join('')}${CUT_MARK}`;
}

/** Sample rows being gathered, by table: the first `rows` of each kind. */
export class RowSamples {
  readonly tables = new Map<string, RawTable>();
  readonly settings: Pick<PreviewSettings, 'rows' | 'maxValueLength'>;

  constructor(settings: Pick<PreviewSettings, 'rows' | 'maxValueLength'>) {
    this.settings = { rows: settings.rows, maxValueLength: settings.maxValueLength };
  }

  /** Whether a row of this kind would still be kept (the caller need not read one that would not). */
  wants(table: string, kind: PreviewKind): boolean {
    return (this.tables.get(table)?.[kind].length ?? 0) < this.settings.rows;
  }

  add(table: string, kind: 'inserts' | 'deletes', row: RawRow): void;
  add(table: string, kind: 'updates', row: { before: RawRow; after: RawRow }): void;
  add(table: string, kind: PreviewKind, row: RawRow | { before: RawRow; after: RawRow }): void {
    if (!this.wants(table, kind)) return;
    let samples = this.tables.get(table);
    if (!samples) {
      samples = { inserts: [], updates: [], deletes: [] };
      this.tables.set(table, samples);
    }
    (samples[kind] as unknown[]).push(row);
  }

  merge(other: RowSamples): void {
    for (const [table, samples] of other.tables) {
      for (const row of samples.inserts) this.add(table, 'inserts', row);
      for (const pair of samples.updates) this.add(table, 'updates', pair);
      for (const row of samples.deletes) this.add(table, 'deletes', row);
    }
  }

  clone(): RowSamples {
    const copy = new RowSamples(this.settings);
    copy.merge(this);
    return copy;
  }

  /** Rows kept (an update's before and after count once). */
  count(): number {
    let n = 0;
    for (const samples of this.tables.values()) n += samples.inserts.length + samples.updates.length + samples.deletes.length;
    return n;
  }
}

export function compileMask(sources: string[]): RegExp[] {
  return sources.map((source) => {
    try {
      return new RegExp(source, 'i');
    } catch (error) {
      throw new Error(`mask ${JSON.stringify(source)} is not a valid regular expression: ${(error as Error).message}`, { cause: error });
    }
  });
}

/**
 * What is known of a table's columns when the previews are made: their names by position, and whether they can be
 * trusted for these rows. Unknown or untrusted (the table is gone, or its columns changed in the segment): every
 * value of the table is masked, under its position (`@3`), so a masked column is never shown under another name; so is
 * every value of a row image whose column count is not the table's (a column added or dropped since).
 */
export interface TableColumns {
  names?: string[];
  trusted: boolean;
}

/** A row by column name, every column a mask matches `***` (`image` holds only the columns it knows, by position). */
export function namedRow(names: string[], image: RawRow, masks: RegExp[]): PreviewRow {
  const out: PreviewRow = {};
  for (const [position, value] of [...image].sort(([a], [b]) => a - b)) {
    const name = names[position - 1];
    if (!name) out[`@${position}`] = MASKED;
    else out[name] = masks.some((m) => m.test(name)) ? MASKED : value;
  }
  return out;
}

/** The samples as the store keeps them: column names, masked columns `***`. */
export function maskedPreviews(samples: RowSamples, columnsOf: (table: string) => TableColumns, mask: string[]): SegmentPreviews {
  const masks = compileMask(mask);
  const tables: Record<string, TablePreviews> = {};
  for (const [table, raw] of [...samples.tables].sort(([a], [b]) => a.localeCompare(b))) {
    const columns = columnsOf(table);
    const names = columns.trusted ? columns.names : undefined;
    // A row image of every column (binlog_row_image FULL) whose count is the table's: else positions may not match.
    const row = (image: RawRow): PreviewRow =>
      namedRow(names !== undefined && image.size === names.length && Math.max(0, ...image.keys()) === names.length ? names : [], image, masks);
    tables[table] = { inserts: raw.inserts.map(row), updates: raw.updates.map(({ before, after }) => ({ before: row(before), after: row(after) })), deletes: raw.deletes.map(row) };
  }
  return { tables };
}
