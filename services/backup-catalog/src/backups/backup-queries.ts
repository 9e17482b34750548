import { AppError } from '@sigil/kit/errors';
import type { Db } from '../db.ts';
import type { RestoreQueries } from '../restores/restore-queries.ts';
import type { TargetService } from '../console/targets.ts';
import type { StrataPrincipal } from '@sigil/proto/strata';
import { backupRunView, backupView, manifestView, tagsView } from '../console/views.ts';

/** What the console reads about backups: a target's list, one backup in full, the recent activity. */
export function createBackupQueries(deps: { db: Db; targets: TargetService; restores: Pick<RestoreQueries, 'recent'> }) {
  const { db } = deps;
  return {
    /** Newest first; the target must exist (and be visible to the caller). */
    async forTarget(principal: StrataPrincipal, namespace: string, name: string, limit: number) {
      await deps.targets.detail(principal, namespace, name);
      const rows = await db.backup.findMany({ where: { namespace, targetName: name }, orderBy: [{ queuedAt: 'desc' }, { id: 'desc' }], take: limit });
      return { target: `${namespace}/${name}`, backups: rows.map(backupView) };
    },
    async get(id: string) {
      const row = await findBackup(db, id);
      return { backup: backupView(row), manifest: manifestView(row), tags: tagsView(row) };
    },
    async activity(limit: number) {
      const [backups, restores] = await Promise.all([
        db.backup.findMany({ where: { mirrored: false }, orderBy: [{ queuedAt: 'desc' }, { id: 'desc' }], take: limit }),
        deps.restores.recent(limit),
      ]);
      return { backups: backups.map(backupRunView), restores };
    },
  };
}

export type BackupQueries = ReturnType<typeof createBackupQueries>;

export async function findBackup(db: Pick<Db, 'backup'>, id: string) {
  const row = await db.backup.findUnique({ where: { id } });
  if (!row) throw new AppError('not-found', `Backup ${id} was not found.`);
  return row;
}
