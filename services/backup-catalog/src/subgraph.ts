import { readFileSync } from 'node:fs';
import type { Resolvers } from './gen/graphql.ts';
import { backupResolvers, type BackupGraphDeps } from './subgraph/backups.ts';
import { consoleResolvers, type ConsoleGraphDeps } from './subgraph/console.ts';
import { restoreResolvers, type RestoreGraphDeps } from './subgraph/restores.ts';
import { createScope, type ScopeDeps } from './subgraph/scope.ts';
import { targetResolvers, type TargetGraphDeps } from './subgraph/targets.ts';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

export type { BackupNode, RestoreNode, TargetNode } from './subgraph/scope.ts';

/** The console API's use cases the resolvers call: the same functions its REST handlers call. */
export type CatalogGraphDeps = ScopeDeps & TargetGraphDeps & BackupGraphDeps & RestoreGraphDeps & ConsoleGraphDeps;

/**
 * The catalog's subgraph over the console API's use cases. Every resolver needs the role viewer (the audit log
 * operator); a caller scoped to orgs or projects sees the targets the console shows it, and the backups, restores and
 * events of those targets only.
 */
export function createResolvers(deps: CatalogGraphDeps): Resolvers {
  const scope = createScope(deps);
  const targets = targetResolvers(deps, scope);
  const backups = backupResolvers(deps, scope);
  const restores = restoreResolvers(deps, scope);
  const consolePages = consoleResolvers(deps, scope);
  return {
    Query: { ...targets.Query, ...backups.Query, ...restores.Query, ...consolePages.Query },
    Target: targets.Target,
    Backup: backups.Backup,
    Restore: restores.Restore,
    JSON: consolePages.JSON,
  };
}
