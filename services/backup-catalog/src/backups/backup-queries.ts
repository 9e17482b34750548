import { AppError } from '@sigil/kit/errors';
import type { Db } from '../db.ts';
import type { RestoreQueries } from '../restores/restore-queries.ts';
import type { TargetService } from '../console/targets.ts';
import type { StrataPrincipal } from '@sigil/proto/strata';
import { backupRunView, backupView, manifestView, tagsView } from '../console/views.ts';
import type { Visibility } from '../console/visibility.ts';

/** What the console reads about backups: a target's list, one backup in full, the recent activity; of visible targets only. */
export function createBackupQueries(deps: { db: Db; targets: TargetService; restores: Pick<RestoreQueries, 'recent'>; visibility: Visibility }) {
  const { db } = deps;
  return {
    /** Newest first; the target must exist (and be visible to the caller). */
    async forTarget(principal: StrataPrincipal, namespace: string, name: string, limit: number) {
      await deps.targets.detail(principal, namespace, name);
      const rows = await db.backup.findMany({ where: { namespace, targetName: name }, orderBy: [{ queuedAt: 'desc' }, { id: 'desc' }], take: limit });
      return { target: `${namespace}/${name}`, backups: rows.map(backupView) };
    },
    /** One backup in full; 404 when its target is not one the caller may see. */
    async get(principal: StrataPrincipal, id: string) {
      const row = await deps.visibility.backup(principal, id);
      return { backup: backupView(row), manifest: manifestView(row), tags: tagsView(row) };
    },
    /** The newest backup runs and restores, of the targets the caller may see (the limit is applied before). */
    async activity(principal: StrataPrincipal, limit: number) {
      const [backups, restores] = await Promise.all([
        db.backup.findMany({ where: { mirrored: false }, orderBy: [{ queuedAt: 'desc' }, { id: 'desc' }], take: limit }),
        deps.restores.recent(limit),
      ]);
      const runs = backups.map(backupRunView);
      return {
        backups: await deps.visibility.readable(principal, runs, (run) => `${run.namespace}/${run.target}`),
        restores: await deps.visibility.readable(principal, restores, (restore) => restore.target),
      };
    },
  };
}

export type BackupQueries = ReturnType<typeof createBackupQueries>;

export async function findBackup(db: Pick<Db, 'backup'>, id: string) {
  const row = await db.backup.findUnique({ where: { id } });
  if (!row) throw new AppError('not-found', `Backup ${id} was not found.`);
  return row;
}
