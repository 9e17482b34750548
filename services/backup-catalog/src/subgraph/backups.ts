import type { BackupResolvers, QueryResolvers, RestoreResolvers } from '../gen/graphql.ts';
import type { RestoreService } from '../restores/restores.ts';
import { splitTarget } from '../restores/restore-steps.ts';
import { limitOf } from './args.ts';
import { inventoryOrNull } from './inventory.ts';
import type { Scope } from './scope.ts';

export interface BackupGraphDeps {
  restores: RestoreService;
  /** The inventory as GET /backups/{id}/inventory reads it. */
  inventory: (id: string) => Promise<unknown>;
}

/** Backups and restores: visible when their target is. */
export function backupResolvers(deps: BackupGraphDeps, scope: Scope): { Query: QueryResolvers; Backup: BackupResolvers; Restore: RestoreResolvers } {
  const { viewer } = scope;
  return {
    Query: {
      strataBackup: (_, args, context) => scope.backupOrNull(viewer(context), args.id),
      strataRestores: async (_, args, context) => {
        const principal = viewer(context);
        return scope.readable(principal, await deps.restores.list(limitOf(args.limit ?? 100), args.target ?? undefined), (restore) => restore.target);
      },
      strataRestore: (_, args, context) => scope.restoreOrNull(viewer(context), args.namespace, args.name),
    },
    Backup: {
      target: (backup, _, context) => scope.targetOf(viewer(context), backup.namespace, backup.target),
      inventory: (backup, _, context) => {
        viewer(context);
        return inventoryOrNull(() => deps.inventory(backup.id));
      },
      __resolveReference: (reference, context) => scope.backupOrNull(viewer(context), reference.id),
    },
    Restore: {
      target: (restore, _, context) => scope.targetOf(viewer(context), ...splitTarget(restore.target)),
      backup: (restore, _, context) => scope.backupOrNull(viewer(context), restore.source.backupID),
      __resolveReference: (reference, context) => scope.restoreOrNull(viewer(context), reference.namespace, reference.name),
    },
  };
}
