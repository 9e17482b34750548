/**
 * The load guard, the catalog's half: a mover found the source over a limit (`backup.postponed`) and wrote nothing.
 * The run waits in phase `Postponed` until `postponedUntil` (now + the policy's `postponeFor`); the dispatcher then
 * queues it again (`dispatchQueued`). Everything is in the run's row, so a catalog restart loses no postponed run, and
 * a postponed run holds no slot: the target's restores and other work go on. The target says so too: its
 * `Scheduled` condition turns False (reason `Postponed`) until the run starts, and a `target` event goes out.
 */
import type { StrataReports } from '@sigil/proto/strata-jobs';
import { BACKUP_PHASES, backupEvent, type BackupDeps, type BackupRow } from './backups.ts';
import { postponedUntil } from './run-options.ts';
import { CONDITION, withConditions, type ConditionInput } from '../resources/conditions.ts';
import { bumpCatalogVersion, type Tx } from '../db.ts';
import { findPolicy } from '../resources/stores.ts';

export async function applyPostponed(deps: BackupDeps, tx: Tx, data: StrataReports['backup.postponed']): Promise<void> {
  const current = await tx.backup.findUnique({ where: { id: data.backupId } });
  // A report redelivered after the run moved on (queued again, finished) changes nothing.
  if (current?.phase !== BACKUP_PHASES.running) return;
  const now = deps.clock();
  const policy = await findPolicy(tx, deps.resources, current.namespace, current.policy);
  const until = postponedUntil(policy?.spec.loadGuard, now);
  const postpones = current.postpones + 1;
  const message = `postponed by the load guard until ${until.toISOString()} (postponement ${postpones}): ${data.message}`;
  await setScheduled(deps, tx, current, { type: CONDITION.scheduled, status: 'False', reason: 'Postponed', message: `backup ${current.name} ${message}` }, now);
  const row = await tx.backup.update({
    where: { id: current.id },
    data: { phase: BACKUP_PHASES.postponed, postpones, postponedUntil: until, message, progress: { stage: 'postponed', bytes: 0, totalBytes: 0, updatedAt: now.toISOString() } },
  });
  const version = await bumpCatalogVersion(tx);
  deps.notify(backupEvent(row, version, 'postponed'));
  deps.notify({ kind: 'target', namespace: row.namespace, name: row.targetName, phase: 'Ready', stage: 'postponed', message: `backup ${row.name} ${message}`, bytes: 0, version: Number(version) });
}

/** A run the guard had postponed started: the target's Scheduled condition says so instead of the postponement. */
export async function afterPostponedStart(deps: BackupDeps, tx: Tx, row: BackupRow): Promise<void> {
  if (row.postpones === 0) return;
  const message = `backup ${row.name} started after ${row.postpones} postponement${row.postpones === 1 ? '' : 's'} by the load guard`;
  await setScheduled(deps, tx, row, { type: CONDITION.scheduled, status: 'True', reason: 'RunStarted', message }, deps.clock());
}

async function setScheduled(deps: BackupDeps, tx: Tx, row: BackupRow, condition: ConditionInput, now: Date): Promise<void> {
  await deps.resources.updateStatus(tx, 'BackupTarget', row.namespace, row.targetName, (resource) =>
    withConditions(resource.status, [condition], resource.metadata.generation, now),
  );
}
