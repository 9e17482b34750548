/**
 * `GET /backups/{id}/diff/{other}`: the DiffResult of two backups of one target, from their inventories (read from
 * the store as `getBackupInventory` reads them; nothing is restored) and the change-log segments between them.
 */
import { AppError } from '@sigil/kit/errors';
import type { StrataPrincipal } from '@sigil/proto/strata';
import type { BackupDeps, BackupRow } from './backups.ts';
import { readInventory } from './inventory.ts';
import { diffInventories, type Inventory } from './inventory-diff.ts';
import { parseLsn } from '../change-capture/chain-inputs.ts';
import { listSegments, segmentView } from '../change-capture/segments.ts';
import { backupView, consistentAt } from '../console/views.ts';
import type { Visibility } from '../console/visibility.ts';
import type { Db } from '../db.ts';

/** At most this many segments are listed between two backups (the oldest first). */
const MAX_SEGMENTS = 1000;

interface PositionShape {
  startLSN?: string;
  endLSN?: string;
  binlogFile?: string;
  binlogPos?: number;
}

const timeOf = (row: BackupRow): Date => consistentAt(row) ?? row.completedAt ?? row.queuedAt;

/** Where a backup is consistent in the change log, as a number that orders (parseLsn); undefined when it recorded none. */
export function logPosition(row: BackupRow): bigint | undefined {
  const position = ((row.manifest ?? {}) as { position?: PositionShape }).position;
  if (position?.binlogFile) return parseLsn(`${position.binlogFile}:${position.binlogPos ?? 0}`);
  const lsn = position?.endLSN || position?.startLSN;
  return lsn ? parseLsn(lsn) : undefined;
}

/**
 * The target's segments holding changes made between the two backups: those overlapping the stretch of the log from
 * the older's position to the newer's, or, when either recorded no position, whose time overlaps theirs.
 */
async function segmentsBetween(db: Db, from: BackupRow, to: BackupRow) {
  const target = { namespace: from.namespace, name: from.targetName };
  const start = logPosition(from);
  const end = logPosition(to);
  if (start === undefined || end === undefined) {
    return listSegments(db, { target, overlapping: { from: timeOf(from), to: timeOf(to) }, limit: MAX_SEGMENTS });
  }
  const rows = await db.segment.findMany({
    where: { namespace: target.namespace, targetName: target.name, expired: false, startLsn: { lt: end }, endLsn: { gt: start } },
    orderBy: [{ startLsn: 'asc' }, { seq: 'asc' }],
    take: MAX_SEGMENTS,
  });
  return rows.map(segmentView);
}

/** The diff of two visible backups of one target, in either order: `from` is the one consistent first. */
export async function diffBackups(deps: BackupDeps & { visibility: Visibility }, principal: StrataPrincipal, id: string, other: string) {
  const first = await deps.visibility.backup(principal, id);
  const second = await deps.visibility.backup(principal, other);
  if (first.namespace !== second.namespace || first.targetName !== second.targetName) {
    throw new AppError(
      'validation-failed',
      `Backups ${id} (${first.namespace}/${first.targetName}) and ${other} (${second.namespace}/${second.targetName}) are of different targets; a diff compares two backups of one target.`,
    );
  }
  const [from, to] = timeOf(first) <= timeOf(second) ? [first, second] : [second, first];
  const [before, after, segments] = await Promise.all([
    readInventory(deps, from.id) as Promise<Inventory>,
    readInventory(deps, to.id) as Promise<Inventory>,
    segmentsBetween(deps.db, from, to),
  ]);
  return {
    diff: diffInventories(before, after, { before: `backup ${from.id}`, after: `backup ${to.id}` }),
    from: backupView(from),
    to: backupView(to),
    segments,
  };
}
