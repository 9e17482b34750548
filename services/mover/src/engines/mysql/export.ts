/**
 * MySQL and MariaDB: a selective export's rows, streamed (the connection paused while a batch waits, so a large
 * result never sits in memory) in a READ ONLY transaction with a consistent snapshot and the export's statement timeout
 * (`max_statement_time` on MariaDB, `max_execution_time` on MySQL). Values are the server's text; binary columns
 * (character set 63 on a string, blob, bit or geometry column) become `\x` and hex.
 */
import type { DatabaseAccess } from '@sigil/proto/strata-jobs';
import type { FieldPacket } from 'mysql2';
import type { Connection as CoreConnection } from 'mysql2';
import { BATCH_ROWS, bareQuery, type ExportBatch, type ExportValue } from '../csv.ts';
import { isMariadb, mysqlError, open } from './shared.ts';

const BINARY_CHARSET = 63;
/** Column types whose values are bytes when their character set is binary (numbers and times report it too, as text). */
const BYTE_TYPES = new Set([15 /* VARCHAR */, 16 /* BIT */, 249, 250, 251, 252 /* BLOBs */, 253 /* VAR_STRING */, 254 /* STRING */, 255 /* GEOMETRY */]);

type RawField = FieldPacket & { characterSet?: number; columnType?: number };

function textOf(fields: RawField[]): (value: Buffer | null, index: number) => ExportValue {
  const binary = fields.map((f) => f.characterSet === BINARY_CHARSET && BYTE_TYPES.has(f.columnType ?? 0));
  return (value, index) => (value === null ? null : binary[index] ? `\\x${value.toString('hex')}` : value.toString('utf8'));
}

type RawRow = Array<Buffer | null>;

/**
 * The rows of one query as they arrive, the connection paused while a batch waits: driven by the query's own events
 * (mysql2's row stream never ends for a statement without a result set, such as `DO 1`).
 */
async function* rowsOf(core: CoreConnection, sql: string, onFields: (fields: RawField[] | undefined) => void): AsyncGenerator<RawRow> {
  const queue: RawRow[] = [];
  const state: { done: boolean; failure?: unknown; wake?: () => void } = { done: false };
  const wake = () => {
    state.wake?.();
    state.wake = undefined;
  };
  const query = core.query({ sql, rowsAsArray: true, typeCast: (field: { buffer(): Buffer | null }) => field.buffer() });
  query.on('fields', onFields);
  query.on('result', (row: unknown) => {
    if (Array.isArray(row)) queue.push(row as RawRow);
    if (queue.length >= BATCH_ROWS) core.pause();
    wake();
  });
  query.on('error', (error: unknown) => {
    state.failure = error;
    wake();
  });
  query.on('end', () => {
    state.done = true;
    wake();
  });
  for (;;) {
    const row = queue.shift();
    if (row) {
      if (queue.length === 0) core.resume();
      yield row;
    } else if (state.failure) throw state.failure;
    else if (state.done) return;
    else await new Promise<void>((resolve) => (state.wake = resolve));
  }
}

export async function* mysqlExport(access: DatabaseAccess, database: string, sql: string, timeoutMs: number): AsyncGenerator<ExportBatch> {
  const c = await open(access, database).catch((error: unknown) => {
    throw mysqlError(access, database, error);
  });
  try {
    const seconds = Math.max(0, timeoutMs) / 1000;
    await c.query((await isMariadb(c)) ? `SET SESSION max_statement_time = ${seconds}` : `SET SESSION max_execution_time = ${Math.floor(timeoutMs)}`);
    await c.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
    const core = (c as unknown as { connection: CoreConnection }).connection;
    let columns: string[] = [];
    let text: ReturnType<typeof textOf> = () => null;
    const onFields = (fields: RawField[] | undefined) => {
      columns = (fields ?? []).map((f) => f.name);
      text = textOf(fields ?? []);
    };
    let rows: ExportValue[][] = [];
    for await (const row of rowsOf(core, bareQuery(sql), onFields)) {
      rows.push(row.map(text));
      if (rows.length === BATCH_ROWS) {
        yield { columns, rows };
        rows = [];
      }
    }
    yield { columns, rows };
    await c.query('COMMIT');
  } catch (error) {
    throw mysqlError(access, database, error);
  } finally {
    c.destroy();
  }
}
