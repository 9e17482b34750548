/**
 * MySQL and MariaDB: one statement's rows, read as they arrive and never more than limit + 1 of them: once those are
 * in, a read-only statement's connection is cut (the server stops at its next write), a write's rows are drained
 * unread so that it can commit.
 */

import type { Connection, FieldPacket, ResultSetHeader } from 'mysql2';
import type { QueryRefused, QueryRequest } from './types.ts';

export interface Streamed {
  fields: FieldPacket[];
  rows: Array<Array<string | null>>;
  affected?: number;
  /** Set when the fields showed the statement must be refused; its rows were not kept. */
  refused?: QueryRefused;
  /** False when the connection was cut before the statement ended. */
  alive: boolean;
}

const BINARY_CHARSET = 63;
// Column types that hold bytes when their character set is binary (numbers and dates report it too, as text).
const BYTE_TYPES = new Set([15, 16, 249, 250, 251, 252, 253, 254, 255]);

function cellDecoder(field: FieldPacket): (cell: Buffer | null) => string | null {
  const bytes = field.characterSet === BINARY_CHARSET && BYTE_TYPES.has(field.columnType ?? -1);
  return (cell) => (cell === null ? null : bytes ? `0x${cell.toString('hex').toUpperCase()}` : cell.toString('utf8'));
}

function cut(connection: Connection): void {
  connection.pause();
  (connection as unknown as { stream?: { destroy(): void } }).stream?.destroy();
}

/** Streams the statement; `inspect` sees the result columns before any row and may refuse the statement. */
export function streamStatement(connection: Connection, request: QueryRequest, inspect: (fields: FieldPacket[]) => QueryRefused | undefined): Promise<Streamed> {
  return new Promise((resolve, reject) => {
    const result: Streamed = { fields: [], rows: [], alive: true };
    let decoders: Array<(cell: Buffer | null) => string | null> = [];
    let settled = false;
    let rowCount = 0;
    const settle = (error?: Error): void => {
      if (settled) return;
      settled = true;
      if (error) reject(error);
      else resolve(result);
    };
    const stop = (): void => {
      result.alive = false;
      cut(connection);
      settle();
    };
    const query = connection.query({ sql: request.sql, rowsAsArray: true, typeCast: false });
    query.on('fields', (fields: FieldPacket[] | undefined) => {
      if (settled || !fields || result.fields.length > 0 || rowCount > 0) return;
      result.fields = fields;
      decoders = fields.map(cellDecoder);
      const refused = inspect(fields);
      if (refused) result.refused = refused;
      if (refused && !request.write) stop();
    });
    query.on('result', (row: Array<Buffer | null> | ResultSetHeader, index: number | undefined) => {
      if (settled || (index ?? 0) !== 0) return;
      if (!Array.isArray(row)) {
        result.affected = row.affectedRows;
        return;
      }
      rowCount += 1;
      if (result.refused || result.rows.length > request.limit) return;
      result.rows.push(row.map((cell, c) => decoders[c]?.(cell) ?? null));
      if (result.rows.length > request.limit && !request.write) stop();
    });
    query.on('error', (error: Error) => settle(error));
    query.on('end', () => {
      if (result.affected === undefined && result.fields.length > 0 && !result.refused) result.affected = rowCount;
      settle();
    });
  });
}
