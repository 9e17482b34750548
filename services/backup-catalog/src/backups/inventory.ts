import { AppError } from '@sigil/kit/errors';
import { BACKUP_PHASES, type BackupDeps } from './backups.ts';
import { readCatalogJson } from './catalog-objects.ts';
import { findStore } from '../resources/stores.ts';

const MAX_INVENTORY_BYTES = 64 * 1024 * 1024;

/** The inventory of a backup: a catalog object encrypted to the store's recipients and catalog recipients. */
export async function readInventory(deps: BackupDeps, id: string): Promise<unknown> {
  const backup = await deps.db.backup.findUnique({ where: { id } });
  if (!backup) throw new AppError('not-found', `Backup ${id} was not found.`);
  if (backup.phase !== BACKUP_PHASES.succeeded) throw new AppError('conflict', `Backup ${id} is ${backup.phase}; its inventory exists once it succeeds.`);
  const manifest = (backup.manifest ?? {}) as { objects?: Array<{ key: string; sha256: string; role: string; compression?: string }> };
  const object = manifest.objects?.find((o) => o.role === 'inventory');
  if (!object) throw new AppError('not-found', `Backup ${id} has no inventory.`);
  const store = await findStore(deps.db, deps.resources, backup.namespace, backup.store);
  if (!store) throw new AppError('unprocessable', `Store ${backup.store} of backup ${id} is not configured.`);
  return readCatalogJson(deps, store, object, MAX_INVENTORY_BYTES, `The inventory of backup ${id}`);
}
