// Text rendering of a DiffResult (`strata diff`): a summary of what changed between two backups, then the schema diff.
import type { Schema } from '@strata/client';
import { humanBytes, keyValues, table, time } from '../format.ts';

type Diff = Schema<'Diff'>;

const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;

function sizeText(before: number | undefined, after: number | undefined): string {
  const delta = (after ?? 0) - (before ?? 0);
  return `${humanBytes(before)} → ${humanBytes(after)} (${delta >= 0 ? '+' : ''}${humanBytes(delta)})`;
}

/** The tables and databases that came, went or were renamed, one line each. */
function structureLines(d: Diff): string[] {
  return [
    ...(d.databasesAdded ?? []).map((name) => `+ database ${name}`),
    ...(d.databasesDropped ?? []).map((name) => `- database ${name}`),
    ...(d.tablesAdded ?? []).map((name) => `+ table ${name}`),
    ...(d.tablesDropped ?? []).map((name) => `- table ${name}`),
    ...(d.tablesRenamed ?? []).map((r) => `~ table ${r.from} → ${r.to}${r.matchedBy ? ` (matched by ${r.matchedBy})` : ''}`),
  ];
}

function columnLines(d: Diff): string[] {
  return (d.columns ?? []).flatMap((c) => {
    const parts: Array<[string, string[] | undefined]> = [
      ['added', c.added],
      ['removed', c.removed],
      ['type', c.typeChanged],
      ['nullability', c.nullabilityChanged],
      ['default', c.defaultChanged],
      ['index added', c.indexAdded],
      ['index dropped', c.indexDropped],
    ];
    return [`  ${c.table}`, ...parts.filter(([, list]) => list?.length).map(([what, list]) => `    ${what}: ${list!.join('; ')}`)];
  });
}

export function backupDiff(r: Schema<'DiffResult'>): string {
  const d = r.diff ?? {};
  const rows = d.rows ?? [];
  let out = keyValues([
    ['from', r.from ? `${r.from.id} (${time(r.from.time)})` : undefined],
    ['to', r.to ? `${r.to.id} (${time(r.to.time)})` : undefined],
    ['schema', d.schemaChanged ? 'changed' : 'unchanged'],
    ['migration', d.migrationBefore || d.migrationAfter ? `${d.migrationBefore || '-'} → ${d.migrationAfter || '-'}` : undefined],
    ['migrations applied', d.migrationsApplied?.length ? d.migrationsApplied.join(', ') : undefined],
    ['size', sizeText(d.sizeBefore, d.sizeAfter)],
    ['segments between', r.segments ? count(r.segments.length, 'segment') : undefined],
  ]);
  const structure = structureLines(d);
  if (structure.length) out += `\n${structure.join('\n')}\n`;
  const columns = columnLines(d);
  if (columns.length) out += `\ncolumns:\n${columns.join('\n')}\n`;
  if (rows.length) {
    const delta = (n: number) => (n >= 0 ? `+${n}` : String(n));
    out += `\n${table(
      ['table', 'rows before', 'rows after', 'change', 'size before', 'size after', 'counted'],
      rows.map((row) => [row.table, row.rowsBefore, row.rowsAfter, `${delta((row.rowsAfter ?? 0) - (row.rowsBefore ?? 0))} (${row.rowsPct ?? 0}%)`, humanBytes(row.sizeBefore), humanBytes(row.sizeAfter), row.estimated ? 'estimate' : 'exact']),
    )}`;
  }
  out += d.lines?.length ? `\n${d.lines.join('\n')}\n` : '\nNo schema changes.\n';
  return out;
}
