import type { BackupResolvers, QueryResolvers } from '../gen/graphql.ts';
import { inventoryOrNull } from './inventory.ts';
import type { Scope } from './scope.ts';

export interface BackupGraphDeps {
  /** The inventory as GET /backups/{id}/inventory reads it. */
  inventory: (id: string) => Promise<unknown>;
}

/** Backups: visible when their target is. */
export function backupResolvers(deps: BackupGraphDeps, scope: Scope): { Query: QueryResolvers; Backup: BackupResolvers } {
  const { viewer } = scope;
  return {
    Query: {
      strataBackup: (_, args, context) => scope.backupOrNull(viewer(context), args.id),
    },
    Backup: {
      target: (backup, _, context) => scope.targetOf(viewer(context), backup.namespace, backup.target),
      inventory: (backup, _, context) => {
        viewer(context);
        return inventoryOrNull(() => deps.inventory(backup.id));
      },
      __resolveReference: (reference, context) => scope.backupOrNull(viewer(context), reference.id),
    },
  };
}
