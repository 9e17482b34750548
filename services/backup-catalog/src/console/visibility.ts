import { AppError } from '@sigil/kit/errors';
import type { StrataPrincipal } from '@sigil/proto/strata';
import type { Db } from '../db.ts';
import type { TargetService } from './targets.ts';

/** A caller bound to no org and no project sees every target. */
export const unscoped = (principal: StrataPrincipal): boolean => principal.orgs.length === 0 && principal.projects.length === 0;

/**
 * What a caller may read, for REST and GraphQL alike: a caller scoped to orgs or projects sees the targets the console
 * shows it, and the backups, restores, activity and audit events of those targets only. Anything else is answered as
 * if it did not exist (404, or left out of a list): the same answer as for what does not exist.
 */
export function createVisibility(deps: { db: Db; targets: Pick<TargetService, 'visibleTarget'> }) {
  /** Whether `target` (`namespace/name`, as records carry it) names a target the caller may see. */
  async function mayRead(principal: StrataPrincipal, target: string): Promise<boolean> {
    const parts = target.split('/');
    if (parts.length !== 2 || !parts[0] || !parts[1]) return false;
    try {
      await deps.targets.visibleTarget(principal, parts[0], parts[1]);
      return true;
    } catch (error) {
      if (error instanceof AppError && error.status === 404) return false;
      throw error;
    }
  }

  /** The items whose target the caller may read, each target looked up once. */
  async function readable<T>(principal: StrataPrincipal, items: T[], targetOfItem: (item: T) => string): Promise<T[]> {
    const verdicts = new Map<string, Promise<boolean>>();
    const verdictOf = (target: string) => verdicts.get(target) ?? verdicts.set(target, mayRead(principal, target)).get(target)!;
    const flags = await Promise.all(items.map((item) => verdictOf(targetOfItem(item))));
    return items.filter((_, index) => flags[index]);
  }

  return {
    mayRead,
    readable,
    /** The backup row, 404 when it does not exist or its target is not one the caller may see. */
    async backup(principal: StrataPrincipal, id: string) {
      const row = await deps.db.backup.findUnique({ where: { id } });
      if (!row || !(await mayRead(principal, `${row.namespace}/${row.targetName}`))) throw new AppError('not-found', `Backup ${id} was not found.`);
      return row;
    },
    /** Audit events: a scoped caller sees what was done to the targets it may see; an event about no target is nobody's to show it. */
    async auditEvents<T extends { target: string }>(principal: StrataPrincipal, events: T[]): Promise<T[]> {
      return unscoped(principal) ? events : await readable(principal, events.filter((event) => event.target !== ''), (event) => event.target);
    },
  };
}

export type Visibility = ReturnType<typeof createVisibility>;
