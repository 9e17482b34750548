import { AppError } from '@sigil/kit/errors';
import { parseDuration } from '@sigil/proto/units';
import type { StrataPrincipal } from '@sigil/proto/strata';
import type { components } from '@sigil/proto/api/strata';
import { BACKUP_PHASES, backupEvent } from './backups.ts';
import { findBackup } from './backup-queries.ts';
import { bumpCatalogVersion, type Db } from '../db.ts';
import type { ConsoleEvent } from '../console/events.ts';
import { syncPin, type PinSyncDeps } from './pin-sync.ts';
import { inputTime } from '../time-input.ts';

export interface PinDeps extends PinSyncDeps {
  db: Db;
  notify: (event: ConsoleEvent) => void;
  /** Runs a scheduler pass: retention and the dispatcher see the change at once. */
  kick: () => void;
  clock: () => Date;
}

/**
 * Pinning keeps a backup out of retention. Like every change the console shows, it bumps the catalog version in the same
 * transaction, tells listeners (SSE) and kicks the scheduler. The pin is then written to the store (pin-sync.ts); when
 * the store cannot take it now, the answer is still the pin's, `pinSynced` stays false and retention passes retry.
 */
export function createPinService(deps: PinDeps) {
  const change = async (id: string, data: Parameters<Db['backup']['update']>[0]['data'], stage: 'pinned' | 'unpinned') => {
    const { row, version } = await deps.db.$transaction(async (tx) => {
      const found = await findBackup(tx, id);
      if (stage === 'pinned' && found.phase === BACKUP_PHASES.expired) {
        throw new AppError('conflict', `Backup ${found.id} expired${found.expiredAt ? ` on ${found.expiredAt.toISOString()}` : ''}; its objects are garbage and a pin cannot bring it back.`);
      }
      const updated = await tx.backup.update({ where: { id: found.id }, data: { ...data, pinSyncPending: true } });
      return { row: updated, version: await bumpCatalogVersion(tx) };
    });
    deps.notify(backupEvent(row, version, stage));
    deps.kick();
    await syncPin(deps, row.id).catch(() => undefined);
    return row;
  };
  const action = (row: { id: string; namespace: string; name: string }, message: string) => ({ message, kind: 'Backup', namespace: row.namespace, name: row.name, link: `/backups/${row.id}` });

  return {
    async pin(principal: StrataPrincipal, id: string, options: components['schemas']['PinRequest']) {
      const pinExpires = options.expires ? pinExpiry(options.expires, deps.clock()) : null;
      const row = await change(id, { pinned: true, pinReason: options.reason ?? '', pinnedBy: principal.email || principal.id, pinExpires }, 'pinned');
      return action(row, `Backup ${row.id} pinned${pinExpires ? ` until ${pinExpires.toISOString()}` : ''}.`);
    },
    async unpin(id: string) {
      const row = await change(id, { pinned: false, pinReason: null, pinnedBy: null, pinExpires: null }, 'unpinned');
      return action(row, `Backup ${row.id} unpinned.`);
    },
  };
}

export type PinService = ReturnType<typeof createPinService>;

/** `expires` is a duration from now (`30d`), an RFC 3339 time, or a date (`2027-01-01`: the start of that day, UTC). */
export function pinExpiry(expires: string, now: Date): Date {
  if (/^\d{4}-\d{2}-\d{2}$/.test(expires)) expires = `${expires}T00:00:00Z`;
  if (/^\d{4}-\d{2}-\d{2}T/.test(expires)) {
    const at = new Date(expires);
    return inputTime('expires', expires, at);
  }
  let ms: number;
  try {
    ms = parseDuration(expires);
  } catch {
    throw new AppError('validation-failed', `expires: "${expires}" is neither a duration nor an RFC 3339 time`);
  }
  return inputTime('expires', expires, new Date(now.getTime() + ms));
}
