import { AppError } from '@sigil/kit/errors';
import type { BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';
import type { StrataPrincipal } from '@sigil/proto/strata';
import type { TargetService } from '../console/targets.ts';
import { restoreView } from '../console/views.ts';
import type { Db } from '../db.ts';
import type { ResourceRepository } from '../resources/resources.ts';
import { splitTarget } from './restore-steps.ts';

type RestoreWhere = NonNullable<NonNullable<Parameters<Db['restore']['findMany']>[0]>['where']>;

export interface RestoreQueryDeps {
  db: Db;
  resources: ResourceRepository;
  /** The rule of every target read: a caller scoped to orgs or projects sees the targets labelled with one of them. */
  targets: Pick<TargetService, 'isVisible'>;
}

/**
 * What the console reads about restores (GET /restores, GET /restores/{ns}/{name}, the subgraph's Restore): the
 * restores of the targets the caller may see, by the rule every target and backup read follows. A restore whose
 * target is gone is nobody's to see: the labels that would say who may see it went with the target.
 */
export function createRestoreQueries(deps: RestoreQueryDeps) {
  const { db, resources, targets } = deps;

  /** One condition per namespace holding targets the caller may see (names listed), or none when it may see none. */
  async function visibleTargets(principal: StrataPrincipal): Promise<RestoreWhere[]> {
    const names = new Map<string, string[]>();
    for (const target of await resources.list<TargetSpec>(db, 'BackupTarget')) {
      if (!targets.isVisible(principal, target)) continue;
      const { namespace, name } = target.metadata;
      names.set(namespace, [...(names.get(namespace) ?? []), name]);
    }
    return [...names].map(([namespace, inNamespace]) => ({ targetNamespace: namespace, targetName: { in: inNamespace } }));
  }

  async function mayRead(principal: StrataPrincipal, namespace: string, name: string): Promise<boolean> {
    const target = await resources.get<TargetSpec>(db, 'BackupTarget', namespace, name);
    return target !== undefined && targets.isVisible(principal, target);
  }

  /** Rows newest first; the limit counts only what the caller may see. */
  async function rows(where: RestoreWhere, limit: number) {
    return (await db.restore.findMany({ where, orderBy: { createdAt: 'desc' }, take: limit })).map(restoreView);
  }

  return {
    /** The restores the caller may see, newest first, of one target (`namespace/name`) or of all. */
    async list(principal: StrataPrincipal, limit: number, target?: string) {
      const visible = await visibleTargets(principal);
      if (visible.length === 0) return [];
      const only = target ? splitTarget(target) : undefined;
      return rows({ OR: visible, ...(only ? { targetNamespace: only[0], targetName: only[1] } : {}) }, limit);
    },
    /** One restore, 404 when it does not exist or its target is not one the caller may see (the same answer). */
    async get(principal: StrataPrincipal, namespace: string, name: string) {
      const row = await db.restore.findUnique({ where: { namespace_name: { namespace, name } } });
      if (!row || !(await mayRead(principal, row.targetNamespace, row.targetName))) throw new AppError('not-found', `Restore ${namespace}/${name} was not found.`);
      return restoreView(row);
    },
    /** The newest restores of every target, for the activity feed, which keeps those the caller may see (visibility.ts). */
    recent: (limit: number) => rows({}, limit),
  };
}

export type RestoreQueries = ReturnType<typeof createRestoreQueries>;
