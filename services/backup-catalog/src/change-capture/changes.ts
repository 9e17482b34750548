import { AppError } from '@sigil/kit/errors';
import type { StrataPrincipal } from '@sigil/proto/strata';
import type { Db } from '../db.ts';
import { planFor, planView } from '../restores/plans.ts';
import type { ResourceRepository } from '../resources/resources.ts';
import { listSegments } from './segments.ts';
import type { TimeRange } from './segment-times.ts';
import type { TargetService } from '../console/targets.ts';
import { inputTime } from '../time-input.ts';

function parseSince(since: string | undefined): Date | undefined {
  if (!since) return undefined;
  const time = new Date(since);
  if (Number.isNaN(time.getTime())) throw new AppError('validation-failed', `since: "${since}" is not an RFC 3339 time`);
  return inputTime('since', since, time);
}

/** The change log as the console reads it: segments (all the caller may see, or one target's) and restore plans. */
export function createChangeQueries(deps: { db: Db; resources: ResourceRepository; targets: TargetService }) {
  const { db, resources, targets } = deps;
  return {
    async segments(principal: StrataPrincipal, since?: string) {
      const from = parseSince(since);
      const visible = new Map<string, boolean>();
      for (const target of await resources.list(db, 'BackupTarget')) {
        visible.set(`${target.metadata.namespace}/${target.metadata.name}`, targets.isVisible(principal, target as never));
      }
      const segments = await listSegments(db, { ...(from ? { since: from } : {}), visible: (ns, name) => visible.get(`${ns}/${name}`) === true });
      return { segments, ...(from ? { since: from.toISOString() } : {}) };
    },
    /** One target's segments; `zoom` keeps those overlapping a time range, at most `limit` (the console's timeline). */
    async targetSegments(principal: StrataPrincipal, namespace: string, name: string, since?: string, zoom?: { overlapping?: TimeRange; limit: number }) {
      await targets.visibleTarget(principal, namespace, name);
      const from = parseSince(since);
      const segments = await listSegments(db, { ...(from ? { since: from } : {}), target: { namespace, name }, ...zoom });
      return { target: `${namespace}/${name}`, segments, ...(from ? { since: from.toISOString() } : {}) };
    },
    async plan(principal: StrataPrincipal, namespace: string, name: string, at?: string) {
      const target = await targets.visibleTarget(principal, namespace, name);
      return planView(await planFor(db, resources, target, at));
    },
  };
}

export type ChangeQueries = ReturnType<typeof createChangeQueries>;
