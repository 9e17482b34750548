import { readFileSync } from 'node:fs';
import { GraphQLError } from 'graphql';
import { nullWhenNotFound, strataPrincipalWith, type StrataSubgraphContext } from '@sigil/kit/graphql';
import type { StrataPrincipal } from '@sigil/proto/strata';
import { findBackup, type BackupQueries } from './backups/backup-queries.ts';
import type { Db } from './db.ts';
import type { Resolvers } from './gen/graphql.ts';
import { splitTarget } from './restores/restore-steps.ts';
import type { RestoreService } from './restores/restores.ts';
import type { TargetFilters, TargetService } from './console/targets.ts';
import { backupView, type restoreView } from './console/views.ts';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

/** What the Target resolvers return: the console's target. */
export type TargetNode = Awaited<ReturnType<TargetService['list']>>['targets'][number];
/** What the Backup resolvers return: the console's backup with the namespace of its target. */
export type BackupNode = ReturnType<typeof backupView> & { namespace: string };
/** What the Restore resolvers return: the console's restore. */
export type RestoreNode = ReturnType<typeof restoreView>;

export interface CatalogGraphDeps {
  db: Db;
  targets: TargetService;
  backups: BackupQueries;
  restores: RestoreService;
}

const MAX_LIMIT = 1000;

/**
 * The catalog's subgraph over the console API's use cases. Every resolver needs the role viewer; a caller scoped to
 * orgs or projects sees the targets the console shows it, and the backups and restores of those targets only.
 */
export function createResolvers(deps: CatalogGraphDeps): Resolvers {
  const { targets, backups, restores } = deps;
  const viewer = (context: StrataSubgraphContext) => strataPrincipalWith(context, 'viewer');

  const targetOrNull = (principal: StrataPrincipal, namespace: string, name: string) => nullWhenNotFound(async () => (await targets.detail(principal, namespace, name)).target);
  const mayRead = async (principal: StrataPrincipal, target: string) => (await nullWhenNotFound(() => targets.visibleTarget(principal, ...splitTarget(target)))) !== null;

  async function backupOrNull(principal: StrataPrincipal, id: string): Promise<BackupNode | null> {
    const row = await nullWhenNotFound(() => findBackup(deps.db, id));
    if (!row || !(await mayRead(principal, `${row.namespace}/${row.targetName}`))) return null;
    return { ...backupView(row), namespace: row.namespace };
  }

  async function restoreOrNull(principal: StrataPrincipal, namespace: string, name: string): Promise<RestoreNode | null> {
    const restore = await nullWhenNotFound(() => restores.get(namespace, name));
    return restore && (await mayRead(principal, restore.target)) ? restore : null;
  }

  /** The restores whose target the caller may read, each target looked up once. */
  async function readable(principal: StrataPrincipal, listed: RestoreNode[]): Promise<RestoreNode[]> {
    const verdicts = new Map<string, Promise<boolean>>();
    const verdictOf = (target: string) => verdicts.get(target) ?? verdicts.set(target, mayRead(principal, target)).get(target);
    const readableFlags = await Promise.all(listed.map((restore) => verdictOf(restore.target)));
    return listed.filter((_, index) => readableFlags[index]);
  }

  return {
    Query: {
      strataTargets: async (_, args, context) => (await targets.list(viewer(context), filtersOf(args))).targets,
      strataTarget: (_, args, context) => targetOrNull(viewer(context), args.namespace, args.name),
      strataBackup: (_, args, context) => backupOrNull(viewer(context), args.id),
      strataRestores: async (_, args, context) => {
        const principal = viewer(context);
        return readable(principal, await restores.list(limitOf(args.limit ?? 100), args.target ?? undefined));
      },
      strataRestore: (_, args, context) => restoreOrNull(viewer(context), args.namespace, args.name),
    },
    Target: {
      lastBackup: (target, _, context) => (target.lastFull ? backupOrNull(viewer(context), target.lastFull.id) : null),
      backupCount: (target) => target.backups,
      backups: async (target, args, context) => {
        const listed = await backups.forTarget(viewer(context), target.namespace, target.name, limitOf(args.limit ?? 20));
        return listed.backups.map((backup) => ({ ...backup, namespace: target.namespace }));
      },
      __resolveReference: (reference, context) => targetOrNull(viewer(context), reference.namespace, reference.name),
    },
    Backup: {
      target: async (backup, _, context) => (await targets.detail(viewer(context), backup.namespace, backup.target)).target,
      __resolveReference: (reference, context) => backupOrNull(viewer(context), reference.id),
    },
    Restore: {
      target: async (restore, _, context) => (await targets.detail(viewer(context), ...splitTarget(restore.target))).target,
      backup: (restore, _, context) => backupOrNull(viewer(context), restore.source.backupID),
      __resolveReference: (reference, context) => restoreOrNull(viewer(context), reference.namespace, reference.name),
    },
  };
}

function filtersOf(args: Record<string, string | null | undefined>): TargetFilters {
  return Object.fromEntries(Object.entries(args).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

function limitOf(limit: number): number {
  if (limit < 1 || limit > MAX_LIMIT) throw new GraphQLError(`limit must be between 1 and ${MAX_LIMIT}.`, { extensions: { code: 'BAD_USER_INPUT' } });
  return limit;
}
