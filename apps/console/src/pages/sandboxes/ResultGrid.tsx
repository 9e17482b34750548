import { useId } from 'react';
import { count } from '../../format.ts';
import type { components } from '@sigil/proto/api/strata';

export type QueryResult = components['schemas']['QueryResult'];

/** Characters past which a cell wraps (see .sbx-long). */
const LONG_CELL = 60;

/**
 * Rows the sandbox answered (a query's or a table's first rows) as a table with column headers. Columns the target's
 * mask rules hide are marked in their header and explained above the table; SQL NULL is told apart from text.
 * Kept in the sandboxes folder: any page showing a QueryResult can use it.
 */
export function ResultGrid({ result, label, truncatedNote }: { result: QueryResult; label: string; truncatedNote: string }) {
  const noteId = useId();
  const masked = new Set(result.masked ?? []);
  const nulls = new Set((result.nulls ?? []).map(([row, column]) => `${row}:${column}`));
  return (
    <div className="sbx-result">
      <ResultSummary result={result} truncatedNote={truncatedNote} />
      {masked.size > 0 && (
        <p id={noteId} className="small">
          Columns marked <span className="badge sbx-masked">masked</span> come from table columns the target’s mask rules match: every value shows as <code>***</code>. A query that could reveal them
          in another way is refused.
        </p>
      )}
      {result.columns.length > 0 && (
        <div className="table-wrap sbx-grid-wrap" role="region" aria-label={`${label} (scrolls)`} tabIndex={0}>
          <table className="table sbx-grid" aria-label={label} aria-describedby={masked.size > 0 ? noteId : undefined}>
            <thead>
              <tr>
                {result.columns.map((column, index) => (
                  <th scope="col" key={index}>
                    {column}
                    {masked.has(column) && <span className="badge sbx-masked">masked</span>}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {result.rows.length === 0 && (
                <tr>
                  <td colSpan={result.columns.length}>No rows.</td>
                </tr>
              )}
              {result.rows.map((row, r) => (
                <tr key={r}>
                  {row.map((cell, c) => (
                    <td key={c} className={cell.length > LONG_CELL ? 'sbx-long' : undefined}>
                      {nulls.has(`${r}:${c}`) ? <NullCell /> : cell}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

/** SQL NULL: in the rows it is an empty string, so it is drawn apart from the text "NULL" and from "". */
function NullCell() {
  return (
    <span className="sbx-null">
      <span className="visually-hidden">SQL </span>null
    </span>
  );
}

/** Statements that only read: their `affected` is the rows they returned, not rows changed. */
const READS = new Set(['SELECT', 'SHOW', 'EXPLAIN', 'VALUES', 'TABLE', 'DESCRIBE']);

/** How many rows, whether there were more, how long it took; what a write changed. Announced when it changes. */
function ResultSummary({ result, truncatedNote }: { result: QueryResult; truncatedNote: string }) {
  const command = result.command ?? '';
  const changed = command !== '' && !READS.has(command.toUpperCase());
  const parts = [result.columns.length > 0 && count(result.rows.length, 'row'), changed && `${count(result.affected ?? 0, 'row')} affected`].filter(Boolean);
  return (
    <p role="status" className="sbx-summary">
      {parts.join(', ') || 'Done'}
      {result.truncated && <strong>{` — showing the first ${count(result.rows.length, 'row')}; ${truncatedNote}`}</strong>}
      <span className="muted">{` · ${command ? `${command} in ` : ''}${result.ms} ms`}</span>
    </p>
  );
}
