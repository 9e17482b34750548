import { bytes, count } from '../../format.ts';
import { Empty, Scroller } from '../../components/Scroller.tsx';
import { TableName } from './TableName.tsx';
import { columnChangeRows, lineKind, percent, signed, type Diff } from './insight-model.ts';

/** Databases and tables added, dropped and renamed, in words. */
export function StructureChanges({ diff }: { diff: Diff }) {
  const items = [
    ...(diff.databasesAdded ?? []).map((d) => `Database added: ${d}`),
    ...(diff.databasesDropped ?? []).map((d) => `Database dropped: ${d}`),
    ...(diff.tablesAdded ?? []).map((t) => `Table added: ${t}`),
    ...(diff.tablesDropped ?? []).map((t) => `Table dropped: ${t}`),
    ...(diff.tablesRenamed ?? []).map((r) => `Table renamed: ${r.from} → ${r.to}${r.matchedBy === 'identity' ? ' (the same table by its identity)' : r.matchedBy === 'columns' ? ' (matched by identical columns)' : ''}`),
  ];
  return (
    <section aria-labelledby="diff-structure" className="target-section">
      <h2 id="diff-structure">Databases and tables</h2>
      {items.length === 0 ? (
        <p>No database or table was added, dropped or renamed.</p>
      ) : (
        <ul className="insight-list">
          {items.map((item) => (
            <li key={item}>{item}</li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Each table's column and index changes, one row per kind. */
export function ColumnChanges({ diff }: { diff: Diff }) {
  const rows = columnChangeRows(diff.columns ?? []);
  return (
    <section aria-labelledby="diff-columns" className="target-section">
      <h2 id="diff-columns">Column changes</h2>
      <Scroller label="Column changes" className="insight-table">
        <thead>
          <tr>
            <th scope="col">Table</th>
            <th scope="col">Change</th>
            <th scope="col">Columns and indexes</th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && <Empty columns={3}>No column or index changed.</Empty>}
          {rows.map((row) => (
            <tr key={`${row.table} ${row.change}`}>
              <th scope="row">
                <TableName name={row.table} />
              </th>
              <td>{row.change}</td>
              <td>{row.items.join(', ')}</td>
            </tr>
          ))}
        </tbody>
      </Scroller>
    </section>
  );
}

/** Row counts and sizes per table before and after, estimates marked as such. */
export function RowChanges({ diff }: { diff: Diff }) {
  const rows = diff.rows ?? [];
  return (
    <section aria-labelledby="diff-rows" className="target-section">
      <h2 id="diff-rows">Rows per table</h2>
      <Scroller label="Rows per table" className="insight-table">
        <thead>
          <tr>
            <th scope="col">Table</th>
            <th scope="col">Rows before</th>
            <th scope="col">Rows after</th>
            <th scope="col">Change</th>
            <th scope="col">Size before → after</th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && <Empty columns={5}>No table's rows or size changed.</Empty>}
          {rows.map((r) => {
            const before = r.rowsBefore ?? 0;
            const after = r.rowsAfter ?? 0;
            const about = r.estimated ? '≈ ' : '';
            return (
              <tr key={r.table}>
                <th scope="row">
                  <TableName name={r.table ?? ''} />
                </th>
                <td>{about + before.toLocaleString()}</td>
                <td>{about + after.toLocaleString()}</td>
                <td>
                  {percent(before, after, r.rowsPct)}
                  {r.estimated && <span className="muted small"> (estimated)</span>}
                </td>
                <td>
                  {bytes(r.sizeBefore ?? 0)} → {bytes(r.sizeAfter ?? 0)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </Scroller>
    </section>
  );
}

/** The readable unified schema diff: added and removed lines marked by their sign and by the element, not only by colour. */
export function SchemaLines({ lines }: { lines: readonly string[] }) {
  const added = lines.filter((l) => lineKind(l) === 'added').length;
  const removed = lines.filter((l) => lineKind(l) === 'removed').length;
  return (
    <section aria-labelledby="diff-schema" className="target-section">
      <h2 id="diff-schema">Schema diff</h2>
      {lines.length === 0 ? (
        <p>The schemas are the same.</p>
      ) : (
        <>
          <p className="muted small">
            {count(added, 'line')} added (marked +), {count(removed, 'line')} removed (marked -).
          </p>
          <pre className="insight-code insight-lines" tabIndex={0} role="region" aria-label="Schema diff (scrolls sideways)">
            {lines.map((line, index) => {
              const kind = lineKind(line);
              const key = `${index}`;
              if (kind === 'added') return <ins key={key} className="insight-line insight-added">{line}</ins>;
              if (kind === 'removed') return <del key={key} className="insight-line insight-removed">{line}</del>;
              return (
                <span key={key} className={`insight-line insight-${kind}`}>
                  {line}
                </span>
              );
            })}
          </pre>
        </>
      )}
    </section>
  );
}

/** Sizes before and after with the difference. */
export function sizeChange(diff: Diff): string {
  const before = diff.sizeBefore ?? 0;
  const after = diff.sizeAfter ?? 0;
  return `${bytes(before)} → ${bytes(after)} (${signed(after - before, bytes)})`;
}
