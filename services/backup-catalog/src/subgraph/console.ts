import { GraphQLScalarType, nullWhenNotFound } from '@sigil/kit/graphql';
import type { BackupQueries } from '../backups/backup-queries.ts';
import type { ChangeQueries } from '../change-capture/changes.ts';
import type { AuditLog } from '../console/audit.ts';
import type { Visibility } from '../console/visibility.ts';
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
  visibility: Visibility;
}

/** Audit details and other open objects, as they are. */
const JSONScalar = new GraphQLScalarType({ name: 'JSON', serialize: (value) => value, parseValue: (value) => value });

/** The restore wizard's plan, and the activity, audit and settings pages. */
export function consoleResolvers(deps: ConsoleGraphDeps, scope: Scope): { Query: QueryResolvers; JSON: GraphQLScalarType } {
  const { viewer } = scope;
  return {
    JSON: JSONScalar,
    Query: {
      // A refusal (no completed backup: NOT_RESTORABLE, 422) is an error; a moment outside every window is a plan that says why.
      strataPlan: async (_, args, context) => {
        const plan = await nullWhenNotFound(() => deps.changes.plan(viewer(context), args.namespace, args.name, args.at));
        return plan && { ...plan, reason: plan.reason ?? '', baseBackupID: plan.baseBackupID ?? null, baseTime: plan.baseTime ?? null, effectiveTime: plan.effectiveTime ?? null, targetTime: plan.targetTime ?? null };
      },
      strataActivity: async (_, args, context) => await deps.backups.activity(viewer(context), limitOf(args.limit ?? 50, 500)),
      strataAudit: async (_, args, context) => {
        const principal = scope.operator(context);
        const events = await deps.audit.list({ ...(args.action ? { action: args.action } : {}), ...(args.user ? { user: args.user } : {}), limit: limitOf(args.limit ?? 100) });
        return await deps.visibility.auditEvents(principal, events);
      },
      strataSettings: async (_, __, context) => {
        viewer(context);
        const settings = await deps.settings();
        return { ...settings, stores: settings.stores.map((store) => ({ ...store, lastGC: store.lastGC ?? null })) };
      },
    },
  };
}
