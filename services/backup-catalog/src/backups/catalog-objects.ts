/**
 * Catalog objects: what the mover encrypts to the store's recipients and its catalog recipients (an inventory, a
 * segment's previews) so the catalog can read them with its own identity (`catalogIdentitySecret`, else the store's
 * `identitySecret`). Read whole into memory, up to a limit.
 */
import { Writable } from 'node:stream';
import { AppError } from '@sigil/kit/errors';
import type { BackupStoreSpec as StoreSpec } from '@sigil/proto/resources';
import { createS3Client, runDownloadPipeline } from '@strata/stream';
import type { StoredResource } from '../resources/resources.ts';
import { storeAccess, storeIdentity } from '../resources/stores.ts';
import type { BackupDeps } from './backups.ts';

/** The object decrypted (and decompressed) as JSON; `what` names it in the error a reader gets. */
export async function readCatalogJson(deps: Pick<BackupDeps, 'db' | 'secrets'>, store: StoredResource<StoreSpec>, object: { key: string; sha256: string; compression?: string }, maxBytes: number, what: string): Promise<unknown> {
  const identity = await storeIdentity(deps.db, deps.secrets, store, store.spec.encryption.catalogIdentitySecret ? 'catalogIdentitySecret' : 'identitySecret');
  const access = await storeAccess(deps.db, deps.secrets, store);
  const chunks: Buffer[] = [];
  let size = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > maxBytes) return callback(new Error(`${what} is too large`));
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
    throw new AppError('unprocessable', `${what} could not be read: ${(error as Error).message}`);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}
