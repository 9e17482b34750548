/**
 * Exact row counts (target `exactCounts`): the backup's inventory counts with `count(*)` each table whose estimate is
 * under `maxRows`, each count bounded by `timeout` (the drivers run them), and says how that went: how many tables were
 * counted, the seconds it took, and each table left at its estimate with why (over `maxRows`, or the count's error,
 * a timeout among them). A count that fails never fails the backup: the estimate stays.
 */
import type { BackupJob } from '@sigil/proto/strata-jobs';
import type { EngineDriver, Inventory, InventoryTable, ServerInfo } from '../engines/types.ts';

type ExactCounts = NonNullable<BackupJob['exactCounts']>;

const qualified = (database: string, table: InventoryTable): string => `${database}.${table.schema ? `${table.schema}.` : ''}${table.name}`;

function whySkipped(database: string, table: InventoryTable, exact: ExactCounts, notes: string[]): string {
  if (table.rowsEstimate >= exact.maxRows) return `estimate ${table.rowsEstimate} is not under maxRows ${exact.maxRows}`;
  const name = table.schema ? `${table.schema}.${table.name}` : table.name;
  const note = notes.find((n) => n.startsWith(`${database}: no exact row count for ${name}: `));
  return note ? note.slice(note.indexOf(`${name}: `) + name.length + 2) : `not counted (${table.kind ?? 'not a table'})`;
}

/** The inventory, with exact counts and their summary when the job asks for them. */
export async function inventoryWithCounts(driver: EngineDriver, job: BackupJob, databases: string[], server: ServerInfo): Promise<Inventory> {
  const exact = job.exactCounts;
  if (!exact) return driver.inventory(job.database, databases, { server });
  const started = performance.now();
  const inventory = await driver.inventory(job.database, databases, { server, exactCounts: exact });
  const seconds = Math.round(performance.now() - started) / 1000;
  const notes = inventory.notes ?? [];
  let tables = 0;
  const skipped: string[] = [];
  for (const db of inventory.databases) {
    for (const table of db.tables) {
      if (table.exactRows !== undefined) tables += 1;
      else skipped.push(`${qualified(db.name, table)}: ${whySkipped(db.name, table, exact, notes)}`);
    }
  }
  return { ...inventory, exactCounts: { tables, seconds, skipped } };
}
