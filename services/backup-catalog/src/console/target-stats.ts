import { BACKUP_PHASES, type BackupRow } from '../backups/backups.ts';
import type { DbOrTx } from '../db.ts';

/** What a target's view says of its runs. */
export interface TargetStats {
  /** Succeeded backups, and the bytes they hold in the store. */
  backups: number;
  storedBytes: bigint;
  /** The succeeded backup that completed last. */
  lastSuccess?: BackupRow;
  /** The run (succeeded or failed, not mirrored from a store) that finished last: its outcome is the target's health. */
  lastFinished?: BackupRow;
  /** The newest run still running. */
  running?: BackupRow;
}

type Pick = 'lastSuccess' | 'lastFinished' | 'running';

/**
 * One run per target and pick, newest first as the view orders them: by completion (the queue time of a run without
 * one), then by queue time. The database sorts; only the picked rows are loaded whole.
 */
const PICKS: Record<Pick, string> = {
  lastSuccess: `phase = '${BACKUP_PHASES.succeeded}'`,
  lastFinished: `phase IN ('${BACKUP_PHASES.succeeded}', '${BACKUP_PHASES.failed}') AND NOT mirrored`,
  running: `phase = '${BACKUP_PHASES.running}'`,
};
const ORDER: Record<Pick, string> = {
  lastSuccess: 'coalesce(completed_at, queued_at) DESC, queued_at DESC, id DESC',
  lastFinished: 'coalesce(completed_at, queued_at) DESC, queued_at DESC, id DESC',
  running: 'queued_at DESC, id DESC',
};

/** The runs' statistics of one target, or of every target (keyed `namespace/name`). */
export async function targetStats(conn: DbOrTx, target?: { namespace: string; name: string }): Promise<Map<string, TargetStats>> {
  const scope = target ? 'namespace = $1 AND target_name = $2' : 'TRUE';
  const params = target ? [target.namespace, target.name] : [];
  const totals = await conn.$queryRawUnsafe<Array<{ namespace: string; target_name: string; backups: number; stored: bigint }>>(
    `SELECT namespace, target_name, (count(*) FILTER (WHERE ${PICKS.lastSuccess}))::int AS backups,
       coalesce(sum(stored_bytes) FILTER (WHERE ${PICKS.lastSuccess}), 0)::bigint AS stored
     FROM backups WHERE ${scope} GROUP BY namespace, target_name`,
    ...params,
  );
  const picked = await conn.$queryRawUnsafe<Array<{ id: string; pick: Pick }>>(
    (Object.keys(PICKS) as Pick[])
      .map((pick) => `(SELECT DISTINCT ON (namespace, target_name) id, '${pick}' AS pick FROM backups WHERE ${scope} AND ${PICKS[pick]} ORDER BY namespace, target_name, ${ORDER[pick]})`)
      .join(' UNION ALL '),
    ...params,
  );
  const rows = new Map((await conn.backup.findMany({ where: { id: { in: [...new Set(picked.map((p) => p.id))] } } })).map((row) => [row.id, row]));
  const stats = new Map<string, TargetStats>(totals.map((t) => [`${t.namespace}/${t.target_name}`, { backups: t.backups, storedBytes: t.stored }]));
  for (const { id, pick } of picked) {
    const row = rows.get(id);
    const entry = row && stats.get(`${row.namespace}/${row.targetName}`);
    if (entry) entry[pick] = row;
  }
  return stats;
}
