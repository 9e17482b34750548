import { useState } from 'react';
import { Button } from 'react-aria-components';
import type { components } from '@sigil/proto/api/strata';
import { FormError, Loading, SelectField } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { bytes } from '../../format.ts';
import type { Sandbox } from './detail-query.ts';
import { ResultGrid } from './ResultGrid.tsx';
import { useRead } from '../../api/useRead.ts';
import { Scroller } from '../../components/Scroller.tsx';

type BrowsedSandbox = Pick<Sandbox, 'name' | 'database' | 'databases' | 'phase' | 'observedResetGeneration'>;

/** The tables of one of the sandbox's databases, and the first 50 rows of the one picked (masked as queries are). */
export function TableBrowser({ sandbox }: { sandbox: BrowsedSandbox }) {
  const { rest } = useSession();
  const [database, setDatabase] = useState(sandbox.database);
  const [table, setTable] = useState<string>();
  const ready = sandbox.phase === 'Ready';
  const path = { name: sandbox.name };
  const listTables = () => unwrap(rest.GET('/sandboxes/{name}/tables', { params: { path, query: { database } } }));
  const browse = (shown: string) => () => unwrap(rest.GET('/sandboxes/{name}/tables/{table}', { params: { path: { ...path, table: shown }, query: { database } } }));
  // Both read again after a reset: the server is new, its tables restored anew.
  const tables = useRead(ready ? listTables : undefined, [sandbox.name, database, ready, sandbox.observedResetGeneration]);
  const rows = useRead(ready && table ? browse(table) : undefined, [sandbox.name, database, table, ready, sandbox.observedResetGeneration]);
  const databases = sandbox.databases.length > 0 ? sandbox.databases : [sandbox.database];
  return (
    <section aria-labelledby="sbx-tables" className="sbx-panel">
      <h2 id="sbx-tables">Tables</h2>
      {!ready && <p className="muted">The tables can be listed once the sandbox is Ready; it is {sandbox.phase} now.</p>}
      {databases.length > 1 && (
        <SelectField
          label="Database"
          options={databases.map((d) => ({ id: d, name: d }))}
          value={database}
          onChange={(next) => {
            setDatabase(next);
            setTable(undefined);
          }}
        />
      )}
      <FormError error={tables.error} />
      {tables.loading && !tables.data && <Loading what="the tables" />}
      {ready && tables.data && <TableList tables={tables.data.tables ?? []} shown={table} onShow={setTable} />}
      {table && (
        <div className="sbx-browse">
          <h3>First rows of {table}</h3>
          <FormError error={rows.error} />
          {rows.loading && <Loading what={`the rows of ${table}`} />}
          {rows.data && !rows.loading && <ResultGrid result={rows.data} label={`First rows of ${table}`} truncatedNote="the table has more (query it to see others)." />}
        </div>
      )}
    </section>
  );
}

type TableInfo = components['schemas']['TableInfo'];

/** Each table with its size; pressing its name shows its first rows below. */
function TableList({ tables, shown, onShow }: { tables: readonly TableInfo[]; shown: string | undefined; onShow: (table: string) => void }) {
  return (
    <Scroller label="Tables">
      <thead>
        <tr>
          <th scope="col">Table</th>
          <th scope="col">Rows (estimate)</th>
          <th scope="col">Size</th>
          <th scope="col">Columns</th>
        </tr>
      </thead>
      <tbody>
        {tables.length === 0 && (
          <tr>
            <td colSpan={4}>This database has no tables.</td>
          </tr>
        )}
        {tables.map((t) => {
          const name = t.fullName ?? `${t.schema}.${t.name}`;
          return (
            <tr key={name}>
              <th scope="row">
                <Button className="sbx-link-button" aria-label={`Show the first rows of ${name}`} aria-current={shown === name ? true : undefined} onPress={() => onShow(name)}>
                  {name}
                </Button>
              </th>
              <td>{(t.rowsEstimate ?? 0).toLocaleString()}</td>
              <td>{bytes(t.bytes ?? 0)}</td>
              <td className="small">{t.columns?.join(', ')}</td>
            </tr>
          );
        })}
      </tbody>
    </Scroller>
  );
}
