import type { DatabaseAccess } from '@sigil/proto/strata-jobs';
import { quoteIdent, withClient } from '../engines/postgres/shared.ts';

/** A foreign key of a table being restored that references a table left behind. */
export interface DanglingKey {
  constraint: string;
  table: string;
  references: string;
}

const FOREIGN_KEYS = `SELECT c.conname AS constraint, tn.nspname AS schema, t.relname AS name, rn.nspname AS ref_schema, r.relname AS ref_name
  FROM pg_constraint c
  JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace tn ON tn.oid = t.relnamespace
  JOIN pg_class r ON r.oid = c.confrelid JOIN pg_namespace rn ON rn.oid = r.relnamespace
  WHERE c.contype = 'f'`;

/** Whether `schema.name` is one of the tables asked for (`table` in any schema, or `schema.table`; `*` and `?` as in pg_dump). */
export function isAskedFor(tables: string[], schema: string, name: string): boolean {
  const glob = (pattern: string) => new RegExp(`^${pattern.replace(/"/g, '').replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  return tables.some((table) => {
    const dot = table.indexOf('.');
    if (dot < 0) return glob(table).test(name);
    return glob(table.slice(0, dot)).test(schema) && glob(table.slice(dot + 1)).test(name);
  });
}

/**
 * Some tables restored into a new database cannot keep a foreign key to a table that is not restored with them: the
 * table it references is not there, and pg_restore would fail the whole restore on it. Such keys are dropped from the
 * source before the copy (the source is the restore's own: a scratch database, or the private server a physical
 * backup was recovered into), and named in the restore's message. In place, the referenced tables are there: nothing
 * is dropped.
 */
export async function dropDanglingKeys(source: DatabaseAccess, database: string, tables: string[]): Promise<DanglingKey[]> {
  return await withClient(source, database, async (client) => {
    const { rows } = await client.query<{ constraint: string; schema: string; name: string; ref_schema: string; ref_name: string }>(FOREIGN_KEYS);
    const dangling = rows.filter((row) => isAskedFor(tables, row.schema, row.name) && !isAskedFor(tables, row.ref_schema, row.ref_name));
    for (const key of dangling) {
      await client.query(`ALTER TABLE ${quoteIdent(key.schema)}.${quoteIdent(key.name)} DROP CONSTRAINT ${quoteIdent(key.constraint)}`);
    }
    return dangling.map((key) => ({ constraint: key.constraint, table: `${key.schema}.${key.name}`, references: `${key.ref_schema}.${key.ref_name}` }));
  });
}

/** The words of the restore's message for the keys left out. */
export function danglingKeysNote(keys: DanglingKey[]): string {
  if (keys.length === 0) return '';
  const each = keys.map((k) => `${k.constraint} of ${k.table} (references ${k.references})`).join(', ');
  return `left out ${keys.length === 1 ? 'a foreign key' : `${keys.length} foreign keys`} to tables not restored: ${each}`;
}
