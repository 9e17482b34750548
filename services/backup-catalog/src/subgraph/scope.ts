import { nullWhenNotFound, strataPrincipalWith, type StrataSubgraphContext } from '@sigil/kit/graphql';
import type { ResourceCondition } from '@sigil/proto/resources';
import type { StrataPrincipal } from '@sigil/proto/strata';
import type { ChainSummary } from '../change-capture/chain-inputs.ts';
import type { TargetRecord, TargetService, TargetView } from '../console/targets.ts';
import { backupView, type restoreView } from '../console/views.ts';
import type { Db } from '../db.ts';
import type { RestoreQueries } from '../restores/restore-queries.ts';
import type { Visibility } from '../console/visibility.ts';

/** What the Target resolvers return: the console's target, with what its chain and its resource say besides. */
export type TargetNode = TargetView & {
  chainBrokenReason: string;
  chainBrokenSince: string | null;
  lastVerificationPassed: boolean | null;
  conditions: Array<{ type: string; status: string; reason: string; message: string; lastTransitionTime: string }>;
  /** Its change-capture chain (the timeline's breaks), for a target with point-in-time recovery. */
  chain: ChainSummary | undefined;
};
/** What the Backup resolvers return: the console's backup with the namespace of its target. */
export type BackupNode = ReturnType<typeof backupView> & { namespace: string };
/** What the Restore resolvers return: the console's restore. */
export type RestoreNode = ReturnType<typeof restoreView>;

/** The verification outcome the catalog writes to a target's status (restores/verification.ts). */
const VERIFIED = { Verified: true, VerifyFailed: false } as const;

export function targetNode({ view, resource, chain }: TargetRecord): TargetNode {
  const status = resource.status as { conditions?: ResourceCondition[]; lastVerification?: { phase?: string } };
  const verification = status.lastVerification?.phase as keyof typeof VERIFIED | undefined;
  return {
    ...view,
    chainBrokenReason: view.chainBroken ? (chain?.brokenReason ?? '') : '',
    chainBrokenSince: view.chainBroken ? (chain?.brokenSince?.toISOString() ?? null) : null,
    lastVerificationPassed: verification && verification in VERIFIED ? VERIFIED[verification] : null,
    conditions: (status.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason ?? '', message: c.message ?? '', lastTransitionTime: c.lastTransitionTime ?? '' })),
    chain,
  };
}

export interface ScopeDeps {
  db: Db;
  targets: TargetService;
  restores: RestoreQueries;
  visibility: Visibility;
}

/**
 * Who may read what: every resolver needs the role viewer (the audit log operator), and a caller scoped to orgs or
 * projects sees the targets the console shows it, and the backups, restores and events of those targets only.
 */
export function createScope(deps: ScopeDeps) {
  const { targets, restores } = deps;
  const viewer = (context: StrataSubgraphContext) => strataPrincipalWith(context, 'viewer');
  const operator = (context: StrataSubgraphContext) => strataPrincipalWith(context, 'operator');
  const targetOf = async (principal: StrataPrincipal, namespace: string, name: string) => targetNode(await targets.record(principal, namespace, name));
  const targetOrNull = (principal: StrataPrincipal, namespace: string, name: string) => nullWhenNotFound(() => targetOf(principal, namespace, name));
  const { mayRead, readable } = deps.visibility;

  async function backupOrNull(principal: StrataPrincipal, id: string): Promise<BackupNode | null> {
    const row = await nullWhenNotFound(() => deps.visibility.backup(principal, id));
    return row && { ...backupView(row), namespace: row.namespace };
  }

  /** The restore, or null when it does not exist or its target is not one the caller may see (restore-queries.ts). */
  const restoreOrNull = (principal: StrataPrincipal, namespace: string, name: string): Promise<RestoreNode | null> =>
    nullWhenNotFound(() => restores.get(principal, namespace, name));

  return { viewer, operator, targetOf, targetOrNull, mayRead, backupOrNull, restoreOrNull, readable };
}

export type Scope = ReturnType<typeof createScope>;
