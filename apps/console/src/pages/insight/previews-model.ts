/**
 * A segment's masked row previews as the console shows them. The API types `previews.tables` as an open object
 * (proto/jobs/segment.previews.schema.json gives its shape), so it is read here value by value: what is not a row is
 * left out rather than trusted.
 */

/** Column → value as text; SQL NULL is null. */
export type PreviewRow = Readonly<Record<string, string | null>>;

export interface PreviewUpdate {
  before: PreviewRow;
  after: PreviewRow;
}

/** One table's sample rows: its name (`database.table`), inserted, updated (before and after) and deleted rows. */
export interface TablePreviews {
  table: string;
  inserts: PreviewRow[];
  updates: PreviewUpdate[];
  deletes: PreviewRow[];
}

/** What the mover writes in place of a value whose column the target's `mask` matches. */
export const MASKED = '***';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A row: its text and null values (anything else is not a value the mover writes, and is dropped). */
function rowOf(value: unknown): PreviewRow | undefined {
  if (!isObject(value)) return undefined;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => typeof v === 'string' || v === null)) as PreviewRow;
}

const rowsOf = (value: unknown): PreviewRow[] => (Array.isArray(value) ? value.map(rowOf).filter((r): r is PreviewRow => r !== undefined) : []);

function updatesOf(value: unknown): PreviewUpdate[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((u) => {
    const before = isObject(u) ? rowOf(u.before) : undefined;
    const after = isObject(u) ? rowOf(u.after) : undefined;
    return before && after ? [{ before, after }] : [];
  });
}

/** The previews' tables, by name, each with its rows of each kind. */
export function tablePreviewsOf(tables: unknown): TablePreviews[] {
  if (!isObject(tables)) return [];
  return Object.entries(tables)
    .map(([table, t]) => ({ table, inserts: rowsOf(isObject(t) ? t.inserts : undefined), updates: updatesOf(isObject(t) ? t.updates : undefined), deletes: rowsOf(isObject(t) ? t.deletes : undefined) }))
    .sort((a, b) => a.table.localeCompare(b.table));
}

/** How many sample rows a table has (an update counts once). */
export const rowCount = (t: TablePreviews): number => t.inserts.length + t.updates.length + t.deletes.length;

/** The columns of some rows in the order they first appear (rows of one table normally share them). */
export function columnsOf(rows: readonly PreviewRow[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const column of Object.keys(row)) seen.add(column);
  return [...seen];
}

/**
 * Whether some rows leave columns out: Postgres logs an update's or a delete's old row whole only for a table with
 * REPLICA IDENTITY FULL (else its key, or nothing), so such a value is not known, and never shown as NULL or changed.
 */
export function leavesColumnsOut(rows: readonly PreviewRow[], columns: readonly string[]): boolean {
  return rows.some((row) => columns.some((column) => !(column in row)));
}

/**
 * Whether an update changed a column (a column one side does not carry is not known to have changed). A masked value hides whether it changed: it counts as unchanged unless the
 * column is masked on one side only (the mask cannot change between the two images of one row, so this is rare).
 */
export function changed(update: PreviewUpdate, column: string): boolean {
  if (!(column in update.before) || !(column in update.after)) return false;
  const before = update.before[column];
  const after = update.after[column];
  if (before === MASKED && after === MASKED) return false;
  return before !== after;
}

/** The address of a segment's sample rows; `since` and `until` (RFC 3339 or `24h`) say which changes lead back. */
export function previewsPath(namespace: string, name: string, segment: string, back: { since?: string; until?: string } = {}): string {
  const query = new URLSearchParams();
  if (back.since) query.set('since', back.since);
  if (back.until) query.set('until', back.until);
  const search = query.toString();
  return `/targets/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/segments/${encodeURIComponent(segment)}/previews${search ? `?${search}` : ''}`;
}
