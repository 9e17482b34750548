import { Writable } from 'node:stream';
import { AppError } from '@sigil/kit/errors';
import { createS3Client, runDownloadPipeline } from '@strata/stream';
import { BACKUP_PHASES, type BackupDeps } from './backups.ts';
import { findStore, storeAccess, storeIdentity } from '../resources/stores.ts';

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
  const identity = await storeIdentity(deps.db, deps.secrets, store, store.spec.encryption.catalogIdentitySecret ? 'catalogIdentitySecret' : 'identitySecret');
  const access = await storeAccess(deps.db, deps.secrets, store);
  const chunks: Buffer[] = [];
  let size = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > MAX_INVENTORY_BYTES) return callback(new Error('inventory is too large'));
      chunks.push(chunk);
      callback();
    },
  });
  try {
    await runDownloadPipeline({
      client: createS3Client(access),
      bucket: access.bucket,
      key: object.key,
      expectedSha256: object.sha256,
      identity,
      compression: object.compression === 'zstd' ? 'zstd' : 'none',
      sink,
      bandwidthBytesPerSecond: 0,
      stallTimeoutMs: 60_000,
    });
  } catch (error) {
    throw new AppError('unprocessable', `The inventory of backup ${id} could not be read: ${(error as Error).message}`);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}
