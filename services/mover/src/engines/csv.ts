/**
 * RFC 4180 CSV for selective exports: a header row of the column names, CRLF line ends, a field quoted when it holds
 * a comma, a quote, CR or LF (quotes doubled). *Decision:* SQL NULL is an empty unquoted field and the empty string
 * is `""`, the convention of Postgres' `COPY ... CSV` (and what `COPY ... FROM` reads back), so the two stay apart.
 * Values are the server's own text (binary values as `\x` and hex, as Postgres prints bytea).
 */
export type ExportValue = string | null;

export function csvField(value: ExportValue): string {
  if (value === null) return '';
  if (value === '' || /[",\r\n]/.test(value)) return `"${value.replaceAll('"', '""')}"`;
  return value;
}

export function csvLine(values: ExportValue[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

/** One batch of a query's result: the column names (the same in every batch) and rows of text values. */
export interface ExportBatch {
  columns: string[];
  rows: ExportValue[][];
}

/** A query's batches as CSV text (the header once, from the first batch), counting the rows into `counted.rows`. */
export async function* csvOf(batches: AsyncIterable<ExportBatch>, counted: { rows: number }): AsyncGenerator<Buffer> {
  let header = false;
  for await (const batch of batches) {
    const lines = header ? [] : [csvLine(batch.columns)];
    header = true;
    for (const row of batch.rows) lines.push(csvLine(row));
    counted.rows += batch.rows.length;
    if (lines.length) yield Buffer.from(lines.join(''), 'utf8');
  }
}

/** A query as written by a user: trailing semicolons and blanks would end the statement it is wrapped in. */
export function bareQuery(sql: string): string {
  return sql.replace(/[\s;]+$/, '');
}

export const BATCH_ROWS = 1000;
