import { useState } from 'react';
import { Button } from 'react-aria-components';
import { useQuery } from 'urql';
import { FormError, Loading } from '@sigil/web-ui';
import { refusalOf } from '../../api/graphql-refusal.ts';
import { bytes, count } from '../../format.ts';
import { graphql } from '../../gql';
import { ScrollRegion } from '../../components/Scroller.tsx';

const InventoryQuery = graphql(`
  query ConsoleInventory($id: ID!) {
    strataBackup(id: $id) {
      id
      time
      inventory {
        collectedAt
        engine
        serverVersion
        notes
        databases {
          name
          sizeBytes
          tables {
            schema
            name
            kind
            rowsEstimate
            exactRows
            totalBytes
          }
        }
      }
    }
  }
`);

/**
 * What the database held at the newest backup: databases, tables, sizes and row counts. Read from the store on
 * demand (the catalog decrypts the manifest's inventory), not with the page.
 */
export function InventoryView({ backupId }: { backupId: string }) {
  const [open, setOpen] = useState(false);
  return (
    <section aria-labelledby="inventory-heading" className="target-section">
      <h2 id="inventory-heading">Inventory</h2>
      {open ? (
        <InventoryTables backupId={backupId} />
      ) : (
        <Button className="button" onPress={() => setOpen(true)}>
          Show the newest backup's inventory
        </Button>
      )}
    </section>
  );
}

function InventoryTables({ backupId }: { backupId: string }) {
  const [{ data, fetching, error }] = useQuery({ query: InventoryQuery, variables: { id: backupId } });
  const inventory = data?.strataBackup?.inventory;
  if (fetching && !data) return <Loading what="the inventory" />;
  if (error) return <FormError error={refusalOf(error)} />;
  if (!inventory) return <p className="muted">This backup holds no inventory.</p>;
  return (
    <>
      <p className="muted small">
        {inventory.engine} {inventory.serverVersion}, collected {new Date(inventory.collectedAt).toLocaleString()}
        {inventory.notes.length > 0 && ` · ${inventory.notes.join(' · ')}`}
      </p>
      {inventory.databases.map((db) => (
        <ScrollRegion key={db.name} label={`Tables of ${db.name}`}>
          <table className="table">
            <caption>
              Database <strong>{db.name}</strong>, {bytes(db.sizeBytes)}, {count(db.tables.length, 'table')}
            </caption>
            <thead>
              <tr>
                <th scope="col">Table</th>
                <th scope="col">Rows</th>
                <th scope="col">Size</th>
              </tr>
            </thead>
            <tbody>
              {db.tables.map((t) => (
                <tr key={`${t.schema ?? ''}.${t.name}`}>
                  <th scope="row">
                    {t.schema ? `${t.schema}.` : ''}
                    {t.name} {t.kind && t.kind !== 'table' && <span className="muted small">({t.kind})</span>}
                  </th>
                  <td>{t.exactRows ?? `≈ ${Math.round(t.rowsEstimate)}`}</td>
                  <td>{bytes(t.totalBytes)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      ))}
    </>
  );
}
