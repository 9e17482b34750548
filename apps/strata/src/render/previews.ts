// Text rendering of a segment's masked row previews (getSegmentPreviews).
import type { Schema } from '@strata/client';

type Row = Record<string, string | null>;
interface TablePreviews {
  inserts?: Row[];
  updates?: Array<{ before: Row; after: Row }>;
  deletes?: Row[];
}

/** `id=1 email=*** name='Ann'`: NULL as NULL, text quoted (a value cut at maxValueLength ends with …). */
function row(values: Row): string {
  return Object.entries(values).map(([column, value]) => `${column}=${value === null ? 'NULL' : value === '***' ? '***' : `'${value}'`}`).join(' ');
}

/**
 * `name: 'Ann' → 'Bob'` for the columns that changed, then the others as they were. A column the old row does not
 * carry (Postgres logs the old row whole only with REPLICA IDENTITY FULL, else its key or nothing) shows `?` before.
 */
function update({ before, after }: { before: Row; after: Row }): string {
  if (Object.keys(before).length === 0) return `${row(after)}  (old row not logged; REPLICA IDENTITY FULL logs it)`;
  const columns = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  const changed = columns.filter((c) => !(c in before) || before[c] !== after[c]);
  const same = columns.filter((c) => c in before && before[c] === after[c]);
  const show = (v: string | null | undefined) => (v === undefined ? '?' : v === null ? 'NULL' : v === '***' ? '***' : `'${v}'`);
  return [...changed.map((c) => `${c}: ${show(before[c])} → ${show(after[c])}`), ...(same.length ? [`(${row(Object.fromEntries(same.map((c) => [c, after[c] ?? null])))})`] : [])].join('  ');
}

export function previews(result: Schema<'PreviewsResult'>): string {
  const tables = Object.entries((result.previews?.tables ?? {}) as Record<string, TablePreviews>);
  let out = `Previews of segment ${result.segment ?? '-'} (masked columns show ***):\n`;
  if (!tables.length) return `${out}  (no rows changed in this segment)\n`;
  for (const [name, t] of tables) {
    out += `\n${name}\n`;
    for (const r of t.inserts ?? []) out += `  insert  ${row(r)}\n`;
    for (const u of t.updates ?? []) out += `  update  ${update(u)}\n`;
    for (const r of t.deletes ?? []) out += `  delete  ${row(r)}\n`;
  }
  return out;
}
