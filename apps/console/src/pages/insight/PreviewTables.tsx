import { useId } from 'react';
import { count } from '../../format.ts';
import { Scroller } from '../../components/Scroller.tsx';
import { TableName } from './TableName.tsx';
import { changed, columnsOf, leavesColumnsOut, MASKED, type PreviewRow, type PreviewUpdate, type TablePreviews } from './previews-model.ts';

/**
 * One value of a sample row. A masked value, SQL NULL, empty text and a value the row does not carry (undefined) are
 * drawn apart from any text a row may hold (a value may well be the text "NULL" or "masked"), and named for screen
 * readers.
 */
export function PreviewValue({ value }: { value: string | null | undefined }) {
  if (value === undefined) {
    return (
      <span className="preview-unknown">
        not logged<span className="visually-hidden"> (the server logs the old row whole only with REPLICA IDENTITY FULL)</span>
      </span>
    );
  }
  if (value === null) {
    return (
      <span className="preview-null">
        <span className="visually-hidden">SQL </span>NULL
      </span>
    );
  }
  if (value === MASKED) {
    return (
      <span className="preview-masked">
        masked<span className="visually-hidden"> (hidden by the target's mask)</span>
      </span>
    );
  }
  if (value === '') {
    return (
      <span className="preview-empty">
        <span aria-hidden="true">""</span>
        <span className="visually-hidden">empty text</span>
      </span>
    );
  }
  return <span className="preview-text">{value}</span>;
}

/** The header row of a preview table: the table's columns, after a heading for the row labels when there is one. */
function ColumnHeads({ columns, first }: { columns: readonly string[]; first?: string }) {
  return (
    <thead>
      <tr>
        {first && <th scope="col">{first}</th>}
        {columns.map((c) => (
          <th key={c} scope="col">
            {c}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** Inserted or deleted rows: one row of the table each, under the table's columns. */
function RowsTable({ rows, label }: { rows: readonly PreviewRow[]; label: string }) {
  const columns = columnsOf(rows);
  return (
    <Scroller label={label} className="insight-table preview-table">
      <ColumnHeads columns={columns} />
      <tbody>
        {rows.map((row, index) => (
          <tr key={index}>
            {columns.map((c) => (
              <td key={c}>
                <PreviewValue value={row[c]} />
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </Scroller>
  );
}

/**
 * Updated rows: each one as two lines, the row before and the row after. A value the update changed is struck
 * through before (del) and bold after (ins), and said in words; the others are the same on both lines.
 */
function UpdatesTable({ updates, label }: { updates: readonly PreviewUpdate[]; label: string }) {
  const columns = columnsOf(updates.flatMap((u) => [u.before, u.after]));
  return (
    <Scroller label={label} className="insight-table preview-table">
      <ColumnHeads columns={columns} first="Update" />
      {updates.map((update, index) => (
        <tbody key={index} className="preview-update">
          {(['before', 'after'] as const).map((side) => (
            <tr key={side}>
              <th scope="row">
                {index + 1} {side}
              </th>
              {columns.map((c) => {
                const value = <PreviewValue value={update[side][c]} />;
                if (!changed(update, c)) return <td key={c}>{value}</td>;
                return (
                  <td key={c} className={`preview-changed preview-${side}`}>
                    {side === 'before' ? <del>{value}</del> : <ins>{value}</ins>}
                    <span className="visually-hidden">{side === 'before' ? ' (changed by the update)' : ' (the new value)'}</span>
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      ))}
    </Scroller>
  );
}

/** Why some old values show as "not logged". */
function NotLoggedNote() {
  return <p className="muted small">Postgres logs the old row whole only for a table with REPLICA IDENTITY FULL (otherwise its key, or nothing): the values it left out show as “not logged”.</p>;
}

/** One table's sample rows: a heading with its name, then its inserted, updated and deleted rows (the kinds it has). */
export function TablePreviewsSection({ previews }: { previews: TablePreviews }) {
  const id = useId();
  const { table, inserts, updates, deletes } = previews;
  return (
    <section aria-labelledby={id} className="target-section preview-section">
      <h2 id={id}>
        <TableName name={table} />
      </h2>
      <p className="muted small">
        Sampled: {count(inserts.length, 'inserted row')}, {count(updates.length, 'updated row')}, {count(deletes.length, 'deleted row')}.
      </p>
      {inserts.length > 0 && (
        <>
          <h3>Inserted rows</h3>
          <RowsTable rows={inserts} label={`Inserted rows of ${table}`} />
        </>
      )}
      {updates.length > 0 && (
        <>
          <h3>Updated rows</h3>
          <p className="muted small">Each update shows the row before and after it; a changed value is struck through before and bold after.</p>
          {leavesColumnsOut(updates.map((u) => u.before), columnsOf(updates.flatMap((u) => [u.before, u.after]))) && <NotLoggedNote />}
          <UpdatesTable updates={updates} label={`Updated rows of ${table}`} />
        </>
      )}
      {deletes.length > 0 && (
        <>
          <h3>Deleted rows</h3>
          {leavesColumnsOut(deletes, columnsOf(deletes)) && <NotLoggedNote />}
          <RowsTable rows={deletes} label={`Deleted rows of ${table}`} />
        </>
      )}
    </section>
  );
}
