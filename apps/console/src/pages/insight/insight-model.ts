import type { components } from '@sigil/proto/api/strata';

export type DiffResult = components['schemas']['DiffResult'];
export type Diff = components['schemas']['Diff'];
export type Segment = components['schemas']['Segment'];
export type ColumnChange = components['schemas']['ColumnChange'];
export type TableChange = components['schemas']['TableChange'];

/** One table's counts in a segment: a Segment's `tables` is an open object keyed by `schema.table`. */
export interface TableCounts {
  table: string;
  inserts: number;
  updates: number;
  deletes: number;
  truncates: number;
}

const countOf = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** The per-table counts of a segment's open `tables` object, by table name. */
export function tableCountsOf(tables: unknown): TableCounts[] {
  if (!tables || typeof tables !== 'object') return [];
  return Object.entries(tables as Record<string, Partial<Record<keyof TableChange, unknown>> | null>)
    .map(([table, change]) => ({ table, inserts: countOf(change?.inserts), updates: countOf(change?.updates), deletes: countOf(change?.deletes), truncates: countOf(change?.truncates) }))
    .sort((a, b) => a.table.localeCompare(b.table));
}

export type LineKind = 'header' | 'added' | 'removed' | 'same';

/** What one line of a unified schema diff is: its file header, an added or removed line, or context. */
export function lineKind(line: string): LineKind {
  if (line.startsWith('+++ ') || line.startsWith('--- ') || line.startsWith('@@')) return 'header';
  if (line.startsWith('+')) return 'added';
  if (line.startsWith('-')) return 'removed';
  return 'same';
}

/** One kind of change to one table's columns or indexes, as a row of the column changes table. */
export interface ColumnChangeRow {
  table: string;
  change: string;
  items: string[];
}

const COLUMN_CHANGE_KINDS = [
  ['added', 'Columns added'],
  ['removed', 'Columns dropped'],
  ['typeChanged', 'Type changed'],
  ['nullabilityChanged', 'Nullability changed'],
  ['defaultChanged', 'Default changed'],
  ['indexAdded', 'Indexes added'],
  ['indexDropped', 'Indexes dropped'],
] as const satisfies ReadonlyArray<readonly [keyof ColumnChange, string]>;

/** Each table's column and index changes, one row per kind of change that happened. */
export function columnChangeRows(columns: readonly ColumnChange[]): ColumnChangeRow[] {
  return columns.flatMap((c) => COLUMN_CHANGE_KINDS.flatMap(([key, change]) => (c[key]?.length ? [{ table: c.table ?? '', change, items: c[key] }] : [])));
}

/** A row count's change in percent as people read it: "+33.3 %", "−50 %", "0 %"; "new" when there were no rows before. */
export function percent(before: number, after: number, pct: number | undefined): string {
  if (before === 0) return after === 0 ? '0 %' : 'new';
  const value = pct ?? ((after - before) / before) * 100;
  const rounded = Math.round(value * 10) / 10;
  return `${rounded > 0 ? '+' : rounded < 0 ? '−' : ''}${Math.abs(rounded).toLocaleString()} %`;
}

/** A signed size or count change: "+1.2 MB" style, with the formatter of the unit. */
export function signed(delta: number, format: (n: number) => string): string {
  if (delta === 0) return 'no change';
  return `${delta > 0 ? '+' : '−'}${format(Math.abs(delta))}`;
}

const localTime = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const localDay = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'numeric', day: 'numeric' });

/** A time of day in the person's time zone with its UTC form: "14:03:07 (13:03:07 UTC)". */
export function timeOfDay(at: number): string {
  return `${localTime.format(at)} (${new Date(at).toISOString().slice(11, 19)} UTC)`;
}

/** Whether two moments fall on the same day in the person's time zone. */
export function sameDay(a: number, b: number): boolean {
  return localDay.format(a) === localDay.format(b);
}

/** The address of the diff of two backups of a target (either order: the API orders them). */
export function diffPath(namespace: string, name: string, a: string, b: string): string {
  return `/targets/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/diff/${encodeURIComponent(a)}/${encodeURIComponent(b)}`;
}

/** The address of a target's change summaries between two times (RFC 3339). */
export function changesPath(namespace: string, name: string, since: string, until: string): string {
  return `/targets/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/changes?since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}`;
}
