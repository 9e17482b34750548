/**
 * Applies a policy's `retain` to one target: every succeeded full is kept (with why, and until when) or becomes
 * `Expired`, and the change-log segments no kept full's window needs expire with them. The decisions are pure
 * (retention.ts, segment-retention.ts); this module loads the rows, writes the outcome in one transaction and tells
 * listeners. The objects themselves go later, in a garbage collection pass (gc.ts).
 */
import type { BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';
import { BACKUP_PHASES, backupEvent, type BackupDeps, type BackupRow } from '../backups/backups.ts';
import { refreshChain } from '../change-capture/segments.ts';
import { loadSegments, physicalFulls } from '../change-capture/chain-inputs.ts';
import { consistentAt } from '../console/views.ts';
import { bumpCatalogVersion, type Tx } from '../db.ts';
import { findPolicy } from '../resources/stores.ts';
import type { StoredResource } from '../resources/resources.ts';
import type { ConsoleEvent } from '../console/events.ts';
import { decideRetention, type RetentionDecision } from './retention.ts';
import { expiredSegments } from './segment-retention.ts';


export interface RetentionOutcome {
  expired: string[];
  segmentsExpired: number;
}

/** The moment a backup restores (its consistent-at time), which the rules' calendar buckets are counted on. */
const backupTime = (row: BackupRow): Date => consistentAt(row) ?? row.completedAt ?? row.queuedAt;

export async function applyRetention(deps: BackupDeps, tx: Tx, target: StoredResource<TargetSpec>, now: Date): Promise<RetentionOutcome> {
  const { namespace, name } = target.metadata;
  const policy = await findPolicy(tx, deps.resources, namespace, target.spec.policy);
  if (!policy) return { expired: [], segmentsExpired: 0 };
  // The target's row first, in the order every writer takes it: expiring segments renews the target's chain inputs
  // (a trigger), and `backup-now`, holding the target's row, waits for that row when it inserts a backup.
  await deps.resources.lock(tx, 'BackupTarget', namespace, name);
  const rows = await tx.backup.findMany({ where: { namespace, targetName: name, phase: BACKUP_PHASES.succeeded } });
  const decisions = decideRetention(
    rows.map((row) => ({ id: row.id, time: backupTime(row), succeeded: true, pinned: row.pinned, pinExpires: row.pinExpires })),
    policy.spec.retain ?? {},
    policy.spec.full.timeZone ?? 'UTC',
    now,
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  const events: ConsoleEvent[] = [];
  const expired: string[] = [];
  for (const decision of decisions) {
    const row = byId.get(decision.id);
    if (!row) continue;
    if (decision.keep) {
      await recordKept(tx, row, decision);
      continue;
    }
    const updated = await tx.backup.update({
      where: { id: row.id },
      data: { phase: BACKUP_PHASES.expired, expiredAt: now, expiredReason: decision.reason ?? 'kept by no retention rule', retainedBy: [], expiresAt: null },
    });
    expired.push(row.id);
    events.push(backupEvent(updated, 0n, 'expired'));
  }
  const segmentsExpired = await expireSegments(tx, target);
  if (expired.length === 0 && segmentsExpired === 0) return { expired, segmentsExpired };
  await refreshChain(tx, deps.resources, target);
  const version = await bumpCatalogVersion(tx);
  for (const event of events) deps.notify({ ...event, version: Number(version), message: `expired by retention: ${event.message || 'kept by no rule'}` });
  deps.notify({
    kind: 'target',
    namespace,
    name,
    phase: 'Ready',
    stage: 'retention',
    message: `retention expired ${expired.length} backup(s) and ${segmentsExpired} change-log segment(s)`,
    bytes: 0,
    version: Number(version),
  });
  return { expired, segmentsExpired };
}

/** Writes why a kept backup is kept, and until when, only when that changed (no version bump for nothing). */
async function recordKept(tx: Tx, row: BackupRow, decision: RetentionDecision): Promise<void> {
  const expiresAt = decision.expiresAt?.getTime() ?? null;
  const same = row.retainedBy.join(',') === decision.retainedBy.join(',') && (row.expiresAt?.getTime() ?? null) === expiresAt;
  if (same) return;
  await tx.backup.update({ where: { id: row.id }, data: { retainedBy: decision.retainedBy, expiresAt: decision.expiresAt } });
}

/** Marks the segments no kept full's window needs any more; they leave every chain at once. */
async function expireSegments(tx: Tx, target: StoredResource<TargetSpec>): Promise<number> {
  const { namespace, name } = target.metadata;
  // Rows the store lost too: a file expires with all its rows.
  const rows = await loadSegments(tx, namespace, name, { missing: true });
  if (rows.length === 0) return 0;
  const kept = await physicalFulls(tx, namespace, name);
  const keys = [...expiredSegments(kept, rows)];
  if (keys.length === 0) return 0;
  const { count } = await tx.segment.updateMany({ where: { key: { in: keys } }, data: { expired: true } });
  return count;
}
