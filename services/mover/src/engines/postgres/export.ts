/**
 * PostgreSQL: a selective export's rows, read through a cursor in a READ ONLY, REPEATABLE READ transaction with the
 * export's statement timeout (each FETCH is one statement), every value in the server's text form (no parsing: the
 * CSV holds what `psql` would show). *Decision:* it runs after the dumps in a snapshot of its own, not pg_dump's:
 * consistent in itself, as of when it ran.
 */
import type { DatabaseAccess } from '@sigil/proto/strata-jobs';
import { BATCH_ROWS, bareQuery, type ExportBatch, type ExportValue } from '../csv.ts';
import { open, pgError } from './shared.ts';

const TEXT = { getTypeParser: () => (value: string) => value };

export async function* postgresExport(access: DatabaseAccess, database: string, sql: string, timeoutMs: number): AsyncGenerator<ExportBatch> {
  const client = await open(access, database).catch((error: unknown) => {
    throw pgError(access, database, error);
  });
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await client.query(`SET LOCAL statement_timeout = ${Math.max(0, Math.floor(timeoutMs))}`);
    await client.query(`DECLARE strata_export NO SCROLL CURSOR FOR ${bareQuery(sql)}`);
    for (;;) {
      const result = await client.query<ExportValue[]>({ text: `FETCH FORWARD ${BATCH_ROWS} FROM strata_export`, rowMode: 'array', types: TEXT });
      yield { columns: result.fields.map((f) => f.name), rows: result.rows };
      if (result.rows.length < BATCH_ROWS) break;
    }
    await client.query('COMMIT');
  } catch (error) {
    throw pgError(access, database, error);
  } finally {
    await client.end().catch(() => {});
  }
}
