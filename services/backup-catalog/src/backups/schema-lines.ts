/**
 * The `lines` of a Diff: a unified diff (the `diff` library's) of the two schemas written as text, one block per
 * table under its full name. Only what changed is written on either side (tables added, dropped, renamed or whose
 * definition changed; a database added or dropped, or its extensions, schemas, views and routines when their lists
 * differ), so the text of two inventories of thousands of tables stays as short as the change.
 */
import { formatPatch, structuredPatch, type StructuredPatchHunk } from 'diff';
import type { DiffLabels, Inventory, InventoryDatabase, InventoryTable, Located, TableMatch, TablePair } from './inventory-diff.ts';

type Side = 'before' | 'after';

/** How one table reads in the schema text. */
export function tableBlock(key: string, table: InventoryTable): string[] {
  const lines = [`  ${table.kind && table.kind !== 'table' && table.kind !== 'BASE TABLE' ? table.kind : 'table'} ${key}`];
  for (const c of table.columns ?? []) {
    lines.push(`    ${c.name} ${c.type ?? ''}${c.nullable === false ? ' NOT NULL' : ''}${c.default !== undefined ? ` DEFAULT ${c.default}` : ''}`);
  }
  if (table.primaryKey?.length) lines.push(`    primary key (${table.primaryKey.join(', ')})`);
  for (const i of table.indexes ?? []) lines.push(`    ${i.unique ? 'unique index' : 'index'} ${i.name} (${(i.columns ?? []).join(', ')})`);
  for (const f of table.foreignKeys ?? []) lines.push(`    foreign key ${f.name} (${(f.columns ?? []).join(', ')}) references ${f.refTable} (${(f.refColumns ?? []).join(', ')})`);
  return lines;
}

const LISTS = ['extensions', 'schemas', 'views', 'routines'] as const;
const SINGULAR: Record<(typeof LISTS)[number], string> = { extensions: 'extension', schemas: 'schema', views: 'view', routines: 'routine' };

/** The database-level lists that differ between the two sides, written on each side. */
function listLines(old: InventoryDatabase | undefined, now: InventoryDatabase | undefined, side: Side): string[] {
  const mine = side === 'before' ? old : now;
  if (!mine) return [];
  return LISTS.flatMap((list) => {
    const same = old && now && JSON.stringify(old[list] ?? []) === JSON.stringify(now[list] ?? []);
    return same ? [] : (mine[list] ?? []).map((item) => `  ${SINGULAR[list]} ${item}`);
  });
}

/** A stretch of the two schema texts: the lines of one table (or one database's lists) on each side. */
interface Chunk {
  key: string;
  old: string[];
  now: string[];
}

/** The tables written: those whose definition or name changed, and those on one side only. */
function tableChunks(match: TableMatch): Chunk[] {
  const differs = (p: TablePair) => Boolean(p.matchedBy) || p.before.table.fingerprint !== p.after.table.fingerprint;
  const block = (t: Located) => tableBlock(t.key, t.table);
  return [
    ...match.pairs.filter(differs).map((p) => ({ key: p.after.key, old: block(p.before), now: block(p.after) })),
    ...match.dropped.map((t) => ({ key: t.key, old: block(t), now: [] })),
    ...match.added.map((t) => ({ key: t.key, old: [], now: block(t) })),
  ];
}

/** Databases added or dropped, and the database-level lists that differ, each database's before its tables. */
function databaseChunks(before: Inventory, after: Inventory): Chunk[] {
  const old = new Map(before.databases.map((d) => [d.name, d]));
  const now = new Map(after.databases.map((d) => [d.name, d]));
  return [...new Set([...old.keys(), ...now.keys()])].flatMap((name) => {
    const [a, b] = [old.get(name), now.get(name)];
    const chunk = { key: name, old: a ? [`database ${name}`, ...listLines(a, b, 'before')] : [], now: b ? [`database ${name}`, ...listLines(a, b, 'after')] : [] };
    return a && b && chunk.old.length === 1 && chunk.now.length === 1 ? [] : [chunk];
  });
}

/** Appends a hunk, merged into the last one when it starts where that one ends on both sides (adjacent chunks). */
function addHunk(hunks: StructuredPatchHunk[], hunk: StructuredPatchHunk): void {
  const last = hunks.at(-1);
  if (last && last.oldStart + last.oldLines === hunk.oldStart && last.newStart + last.newLines === hunk.newStart) {
    hunks[hunks.length - 1] = { ...last, oldLines: last.oldLines + hunk.oldLines, newLines: last.newLines + hunk.newLines, lines: [...last.lines, ...hunk.lines] };
  } else hunks.push(hunk);
}

/**
 * The unified diff of the two schemas, line by line; empty when nothing the text shows changed. Each chunk is
 * diffed on its own (a table's block against its counterpart's) and the hunks are placed where the chunk stands in
 * the whole text: one diff of the whole texts would cost the product of their length and the number of changes.
 */
export function schemaLines(before: Inventory, after: Inventory, match: TableMatch, labels: DiffLabels): string[] {
  const chunks = [...databaseChunks(before, after), ...tableChunks(match)].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  const hunks: StructuredPatchHunk[] = [];
  let oldAt = 0;
  let newAt = 0;
  for (const chunk of chunks) {
    const text = (lines: string[]) => (lines.length ? `${lines.join('\n')}\n` : '');
    for (const hunk of structuredPatch('', '', text(chunk.old), text(chunk.now), undefined, undefined, { context: 3 }).hunks) {
      addHunk(hunks, { ...hunk, oldStart: hunk.oldStart + oldAt, newStart: hunk.newStart + newAt });
    }
    oldAt += chunk.old.length;
    newAt += chunk.now.length;
  }
  if (hunks.length === 0) return [];
  const patch = formatPatch({ oldFileName: labels.before, newFileName: labels.after, oldHeader: undefined, newHeader: undefined, hunks });
  return patch.split('\n').filter((line) => line !== '' && !/^=+$/.test(line) && !line.startsWith('\\ '));
}
