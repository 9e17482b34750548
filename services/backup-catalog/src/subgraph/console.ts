import { GraphQLScalarType, nullWhenNotFound } from '@sigil/kit/graphql';
import type { StrataPrincipal } from '@sigil/proto/strata';
import type { BackupQueries } from '../backups/backup-queries.ts';
import type { ChangeQueries } from '../change-capture/changes.ts';
import type { AuditLog } from '../console/audit.ts';
import type { readSettings } from '../console/settings.ts';
import type { QueryResolvers } from '../gen/graphql.ts';
import { limitOf } from './args.ts';
import type { Scope } from './scope.ts';

export interface ConsoleGraphDeps {
  backups: BackupQueries;
  changes: ChangeQueries;
  audit: AuditLog;
  /** GET /settings' answer. */
  settings: () => ReturnType<typeof readSettings>;
}

/** Audit details and other open objects, as they are. */
const JSONScalar = new GraphQLScalarType({ name: 'JSON', serialize: (value) => value, parseValue: (value) => value });

/** The restore wizard's plan, and the activity, audit and settings pages. */
export function consoleResolvers(deps: ConsoleGraphDeps, scope: Scope): { Query: QueryResolvers; JSON: GraphQLScalarType } {
  const { viewer } = scope;
  const unscoped = (principal: StrataPrincipal) => principal.orgs.length === 0 && principal.projects.length === 0;
  return {
    JSON: JSONScalar,
    Query: {
      // A refusal (no completed backup: NOT_RESTORABLE, 422) is an error; a moment outside every window is a plan that says why.
      strataPlan: async (_, args, context) => {
        const plan = await nullWhenNotFound(() => deps.changes.plan(viewer(context), args.namespace, args.name, args.at));
        return plan && { ...plan, reason: plan.reason ?? '', baseBackupID: plan.baseBackupID ?? null, baseTime: plan.baseTime ?? null, effectiveTime: plan.effectiveTime ?? null, targetTime: plan.targetTime ?? null };
      },
      strataActivity: async (_, args, context) => {
        const principal = viewer(context);
        const activity = await deps.backups.activity(limitOf(args.limit ?? 50, 500));
        const [backups, restores] = await Promise.all([
          scope.readable(principal, activity.backups, (run) => `${run.namespace}/${run.target}`),
          scope.readable(principal, activity.restores, (restore) => restore.target),
        ]);
        return { backups, restores };
      },
      strataAudit: async (_, args, context) => {
        const principal = scope.operator(context);
        const events = await deps.audit.list({ ...(args.action ? { action: args.action } : {}), ...(args.user ? { user: args.user } : {}), limit: limitOf(args.limit ?? 100) });
        // A scoped caller sees what was done to the targets it may see; an event about no target is nobody's to show it.
        return unscoped(principal) ? events : scope.readable(principal, events.filter((event) => event.target !== ''), (event) => event.target);
      },
      strataSettings: async (_, __, context) => {
        viewer(context);
        const settings = await deps.settings();
        return { ...settings, stores: settings.stores.map((store) => ({ ...store, lastGC: store.lastGC ?? null })) };
      },
    },
  };
}
