/**
 * Pins in the store (the spec's `pinSynced`): a pinned backup's pin is written to pin.json beside its manifest, and
 * removed when it is unpinned, so that a catalog rebuilt from the store (the mirror) keeps the pin and retention does
 * not expire what someone pinned. The catalog's row is the truth; `pinSyncPending` marks a change the store does not
 * hold yet. A failed write (store down) stays pending and every retention pass tries again; a read-only store is never
 * written, so a pin there lives in this catalog only (and says so: `pinSynced: false`).
 */
import type { BackupStoreSpec as StoreSpec } from '@sigil/proto/resources';
import { pinKeyOfManifest, type StoredPin } from '@sigil/proto/strata-jobs';
import { createS3Client } from '@strata/stream';
import type { BackupDeps } from './backups.ts';
import { findPolicy, findStore, storeAccess } from '../resources/stores.ts';
import type { StoredResource } from '../resources/resources.ts';

export type PinSyncDeps = Pick<BackupDeps, 'db' | 'resources' | 'secrets' | 'clock'>;

export type PinSyncOutcome = 'synced' | 'not-needed' | 'waiting-for-manifest' | 'read-only-store' | 'no-store';

/**
 * Writes (or removes) one backup's pin record when its row says it is pending, then clears the mark if the pin did not
 * change meanwhile. Throws the store's error, leaving the mark.
 */
export async function syncPin(deps: PinSyncDeps, id: string): Promise<PinSyncOutcome> {
  const row = await deps.db.backup.findUnique({ where: { id } });
  if (!row?.pinSyncPending) return 'not-needed';
  if (!row.manifestKey) return 'waiting-for-manifest';
  const store = await storeOf(deps, row.namespace, row.targetName, row.store);
  if (!store) return 'no-store';
  if (store.spec.readOnly) return 'read-only-store';
  const access = await storeAccess(deps.db, deps.secrets, store);
  const client = createS3Client(access);
  const key = pinKeyOfManifest(row.manifestKey);
  if (row.pinned) {
    const record: StoredPin = { v: 1, backup: row.id, reason: row.pinReason ?? '', by: row.pinnedBy ?? '', expires: row.pinExpires?.toISOString() ?? null, at: deps.clock().toISOString() };
    const body = Buffer.from(JSON.stringify(record) + '\n');
    await client.putObject(access.bucket, key, body, body.length, { 'Content-Type': 'application/json' });
  } else {
    await client.removeObject(access.bucket, key); // S3 answers success for a key that is not there
  }
  // Only the state just written is synced: a pin changed while the write was in flight stays pending.
  await deps.db.backup.updateMany({
    where: { id: row.id, pinSyncPending: true, pinned: row.pinned, pinReason: row.pinReason, pinnedBy: row.pinnedBy, pinExpires: row.pinExpires },
    data: { pinSyncPending: false },
  });
  return 'synced';
}

/** Every pending pin whose backup has its manifest; the store's errors are counted, not thrown. */
export async function syncPendingPins(deps: PinSyncDeps): Promise<{ synced: number; failed: number }> {
  const pending = await deps.db.backup.findMany({ where: { pinSyncPending: true, manifestKey: { not: null } }, select: { id: true }, take: 500 });
  let synced = 0;
  let failed = 0;
  for (const { id } of pending) {
    try {
      if ((await syncPin(deps, id)) === 'synced') synced += 1;
    } catch {
      failed += 1;
    }
  }
  return { synced, failed };
}

/** The store a backup was written to: its row names it; the target's policy says in which namespace it lives. */
async function storeOf(deps: PinSyncDeps, namespace: string, targetName: string, storeName: string): Promise<StoredResource<StoreSpec> | undefined> {
  const target = await deps.resources.get<{ policy: string }>(deps.db, 'BackupTarget', namespace, targetName);
  const policy = target ? await findPolicy(deps.db, deps.resources, namespace, target.spec.policy) : undefined;
  return findStore(deps.db, deps.resources, policy?.metadata.namespace ?? namespace, storeName);
}
