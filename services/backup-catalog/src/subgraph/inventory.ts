import { isAppError } from '@sigil/kit/errors';
import type { components } from '@sigil/proto/api/strata';
import type { Inventory } from '../gen/graphql.ts';

type StoredInventory = components['schemas']['Inventory'];

/**
 * The inventory the store holds, or null when there is none to read: a backup that has not succeeded (409 in
 * GET /backups/{id}/inventory) or was taken without one (404). A store that cannot open it (its catalog identity is
 * missing, the object is unreadable: 422) is an error, as in the console API.
 */
export async function inventoryOrNull(read: () => Promise<unknown>): Promise<Inventory | null> {
  try {
    return inventoryNode((await read()) as StoredInventory);
  } catch (error) {
    if (isAppError(error) && (error.code === 'not-found' || error.code === 'conflict')) return null;
    throw error;
  }
}

function inventoryNode(inventory: StoredInventory): Inventory {
  const counts = inventory.exactCounts;
  return {
    collectedAt: inventory.collectedAt,
    engine: inventory.engine,
    serverVersion: inventory.server?.version ?? '',
    schemaHash: inventory.schemaHash ?? '',
    notes: inventory.notes ?? [],
    exactCounts: counts ? { tables: counts.tables ?? 0, seconds: counts.seconds ?? 0, skipped: counts.skipped ?? [] } : null,
    databases: (inventory.databases ?? []).map((database) => ({
      name: database.name,
      sizeBytes: database.sizeBytes,
      schemaHash: database.schemaHash ?? '',
      migrationVersion: database.migrationVersion ?? null,
      tables: (database.tables ?? []).map((table) => ({
        schema: table.schema ?? null,
        name: table.name,
        kind: table.kind ?? null,
        rowsEstimate: table.rowsEstimate,
        exactRows: table.exactRows ?? null,
        totalBytes: table.totalBytes,
        tableBytes: table.tableBytes ?? null,
        indexBytes: table.indexBytes ?? null,
        columns: table.columns?.length ?? 0,
      })),
    })),
  };
}
