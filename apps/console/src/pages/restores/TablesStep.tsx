import { Checkbox, CheckboxGroup, Label, Text } from 'react-aria-components';
import { ApiError, FormError, Loading } from '@sigil/web-ui';
import { count } from '../../format.ts';
import { pointerOf } from './refusal.ts';
import type { BaseBackup } from './wizard-queries.ts';

type Inventory = NonNullable<BaseBackup['inventory']>;
type InventoryTable = Inventory['databases'][number]['tables'][number];

/** How the API names a table: `schema.table`, or `table` where the engine has no schemas (MariaDB). */
export const tableId = (t: Pick<InventoryTable, 'schema' | 'name'>) => (t.schema ? `${t.schema}.${t.name}` : t.name);

/**
 * Step 4, tables (optional): all of them, or some, picked from the base backup's inventory with a group of
 * checkboxes per database. The base follows the moment, so the list does too.
 */
export function TablesStep({ backup, loading, readError, value, onChange, error }: {
  backup: BaseBackup | undefined;
  loading: boolean;
  readError: unknown;
  value: readonly string[] | 'all';
  onChange(value: readonly string[] | 'all'): void;
  /** The API's refusal, when it is about the tables. */
  error: unknown;
}) {
  const problem = error instanceof ApiError ? error.fieldError(pointerOf('tables')) : undefined;
  const inventory = backup?.inventory;
  return (
    <div data-rst-field="tables">
      <Checkbox className="checkbox rst-checkbox" isSelected={value === 'all'} onChange={(all) => onChange(all ? 'all' : [])}>
        <span className="rst-box" aria-hidden="true" />
        All tables
      </Checkbox>
      {problem && (
        <p className="rst-field-error" role="alert">
          {problem}
        </p>
      )}
      {value !== 'all' && (
        <>
          <p className="muted small">Only the tables ticked are restored, with their indexes, constraints and triggers: tick the tables their foreign keys refer to as well, or the restore fails. The list is the base backup’s ({backup?.id ?? 'not chosen yet'}).</p>
          <FormError error={readError} />
          {loading && !inventory && <Loading what="the backup’s tables" />}
          {backup && !inventory && !loading && <p>This backup has no inventory to pick tables from: restore all its tables, or pick another moment.</p>}
          {inventory?.databases.map((database) => (
            <DatabaseTables key={database.name} name={database.name} tables={database.tables} value={value} onChange={onChange} />
          ))}
          {value.length === 0 && inventory && <p className="rst-warn small">No table ticked yet: tick some, or All tables.</p>}
        </>
      )}
    </div>
  );
}

function DatabaseTables({ name, tables, value, onChange }: { name: string; tables: readonly InventoryTable[]; value: readonly string[]; onChange(value: readonly string[]): void }) {
  const ids = new Set(tables.map(tableId));
  return (
    <CheckboxGroup
      className="rst-table-group"
      value={value.filter((id) => ids.has(id))}
      onChange={(picked) => onChange([...value.filter((id) => !ids.has(id)), ...picked])}
    >
      <Label>Database {name}</Label>
      {tables.length === 0 && <Text slot="description">No tables.</Text>}
      <div className="rst-table-list">
        {tables.map((t) => (
          <Checkbox key={tableId(t)} value={tableId(t)} className="checkbox rst-checkbox">
            <span className="rst-box" aria-hidden="true" />
            <span>
              {tableId(t)} <span className="muted small">{t.kind && t.kind !== 'table' ? `${t.kind}, ` : ''}about {count(Math.round(t.rowsEstimate), 'row')}</span>
            </span>
          </Checkbox>
        ))}
      </div>
    </CheckboxGroup>
  );
}
