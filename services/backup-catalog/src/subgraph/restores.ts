import type { QueryResolvers, RestoreDestination, RestorePlan, RestoreResolvers, RestoreSource } from '../gen/graphql.ts';
import type { RestoreQueries } from '../restores/restore-queries.ts';
import { splitTarget } from '../restores/restore-steps.ts';
import { limitOf } from './args.ts';
import type { RestoreNode, Scope } from './scope.ts';

export interface RestoreGraphDeps {
  /** GET /restores' and GET /restores/{ns}/{name}'s reads, scoped to the caller the same way. */
  restores: RestoreQueries;
}

/**
 * Restores: visible when their target is (restore-queries.ts decides, for REST and GraphQL alike). Their source,
 * destination, plan and checks are the console API's view of them (console/views.ts restoreView), what it leaves out
 * being null here.
 */
export function restoreResolvers(deps: RestoreGraphDeps, scope: Scope): { Query: QueryResolvers; Restore: RestoreResolvers } {
  const { viewer } = scope;
  return {
    Query: {
      strataRestores: (_, args, context) => deps.restores.list(viewer(context), limitOf(args.limit ?? 100), args.target ?? undefined),
      strataRestore: (_, args, context) => scope.restoreOrNull(viewer(context), args.namespace, args.name),
    },
    Restore: {
      target: (restore, _, context) => scope.targetOf(viewer(context), ...splitTarget(restore.target)),
      backup: (restore, _, context) => scope.backupOrNull(viewer(context), restore.source.backupID),
      safetyBackup: (restore) => restore.safetyBackup ?? null,
      source: (restore) => sourceNode(restore.source),
      destination: (restore) => destinationNode(restore.destination),
      plan: (restore) => restore.plan && planNode(restore.plan),
      __resolveReference: (reference, context) => scope.restoreOrNull(viewer(context), reference.namespace, reference.name),
    },
  };
}

const sourceNode = (source: RestoreNode['source']): RestoreSource => ({ ...source, time: source.time ?? null });

function destinationNode(destination: RestoreNode['destination']): RestoreDestination {
  const { mode, sandboxTTL, expose, deleteAfter, database, host, tables } = destination;
  return { mode, sandboxTTL: sandboxTTL ?? null, expose: expose ?? null, deleteAfter: deleteAfter ?? null, database: database ?? null, host: host ?? null, tables: tables ?? null };
}

const planNode = (plan: NonNullable<RestoreNode['plan']>): RestorePlan => ({ ...plan, targetTime: plan.targetTime ?? null, effectiveTime: plan.effectiveTime ?? null });
