/** Sandbox queries: a result as an aligned text table, the way psql prints one, for `Accept: text/plain`. */

import type { QueryResult } from './types.ts';

// A line break inside a cell would break the alignment of every column after it.
const oneLine = (cell: string): string => cell.replace(/\r?\n/g, '\\n').replace(/\t/g, '\\t');

function footer(result: QueryResult): string[] {
  const count = result.rows.length;
  const lines = [`(${count} ${count === 1 ? 'row' : 'rows'})`];
  if (result.truncated) lines.push(`(truncated at ${count} rows)`);
  return lines;
}

function commandLine(result: QueryResult): string {
  return [result.command ?? '', result.affected !== undefined ? String(result.affected) : ''].filter(Boolean).join(' ');
}

export function renderTextTable(result: QueryResult): string {
  if (result.columns.length === 0) return `${commandLine(result)}\n`;
  const rows = result.rows.map((row) => result.columns.map((_, c) => oneLine(row[c] ?? '')));
  const header = result.columns.map(oneLine);
  const widths = header.map((name, c) => Math.max(name.length, ...rows.map((row) => (row[c] ?? '').length)));
  const line = (cells: string[]): string => ` ${cells.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join(' | ')}`.trimEnd();
  const separator = widths.map((w) => '-'.repeat(w + 2)).join('+');
  return [line(header), separator, ...rows.map(line), ...footer(result)].join('\n') + '\n';
}
