import type { BackupQueries } from '../backups/backup-queries.ts';
import type { ChangeQueries } from '../change-capture/changes.ts';
import type { TargetService } from '../console/targets.ts';
import { readTimeline } from '../console/timeline.ts';
import type { Db } from '../db.ts';
import type { QueryResolvers, TargetResolvers } from '../gen/graphql.ts';
import { countArg, filtersOf, limitOf, rangeArgs } from './args.ts';
import { targetNode, type Scope } from './scope.ts';

export interface TargetGraphDeps {
  db: Db;
  targets: TargetService;
  backups: BackupQueries;
  changes: ChangeQueries;
  clock: () => Date;
}

const MAX_SPANS = 5000;
/** The bounds of a range given on one side only (a Date's own bounds print as six-digit years, which Postgres does not read). */
const FIRST_MOMENT = new Date('0001-01-01T00:00:00Z');
const LAST_MOMENT = new Date('9999-12-31T23:59:59Z');

/** The targets' queries and fields: the console's list and target pages. */
export function targetResolvers(deps: TargetGraphDeps, scope: Scope): { Query: QueryResolvers; Target: TargetResolvers } {
  const { targets, backups, changes } = deps;
  const { viewer } = scope;
  return {
    Query: {
      strataTargets: async (_, args, context) => (await targets.listRecords(viewer(context), filtersOf(args))).records.map(targetNode),
      strataTarget: (_, args, context) => scope.targetOrNull(viewer(context), args.namespace, args.name),
    },
    Target: {
      lastBackup: (target, _, context) => (target.lastFull ? scope.backupOrNull(viewer(context), target.lastFull.id) : null),
      backupCount: (target) => target.backups,
      backups: async (target, args, context) => {
        const listed = await backups.forTarget(viewer(context), target.namespace, target.name, limitOf(args.limit ?? 20));
        return listed.backups.map((backup) => ({ ...backup, namespace: target.namespace }));
      },
      segmentCount: (target) => target.segments,
      lastVerification: (target) => target.lastVerification ?? null,
      replicationDenied: (target) => target.replicationDenied ?? '',
      replicationFix: (target) => target.replicationFix ?? '',
      timeline: (target, args, context) => {
        viewer(context);
        const request = { ...rangeArgs(args, deps.clock()), maxSpans: countArg('maxSpans', args.maxSpans ?? 400, 1, MAX_SPANS) };
        return readTimeline(deps.db, { namespace: target.namespace, name: target.name, windows: target.windows, chain: target.chain }, request, deps.clock());
      },
      segments: async (target, args, context) => {
        const range = rangeArgs(args, deps.clock());
        const overlapping = range.from || range.to ? { from: range.from ?? FIRST_MOMENT, to: range.to ?? LAST_MOMENT } : undefined;
        const listed = await changes.targetSegments(viewer(context), target.namespace, target.name, undefined, { ...(overlapping ? { overlapping } : {}), limit: limitOf(args.limit ?? 100) });
        return listed.segments.map((segment) => ({ ...segment, firstTime: segment.firstTime ?? null, lastTime: segment.lastTime ?? null, explanation: segment.explanation ?? null }));
      },
      __resolveReference: (reference, context) => scope.targetOrNull(viewer(context), reference.namespace, reference.name),
    },
  };
}
