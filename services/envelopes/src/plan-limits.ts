/**
 * The plan limits a new envelope meets, from the organization's entitlements (billing's, cached): a feature the plan
 * does not have is a 403 in both modes; in live mode on a plan without overage (Free), a period whose included
 * envelopes are completed is a 402. The count is this service's own (its completed live envelopes in the period
 * billing names), so the envelope completed a moment ago counts at once, before billing has counted it.
 */
import { featureNotOnPlan, includedEnvelopesUsed, overAllowance, type EntitlementsCache } from '@sigil/kit/entitlements';
import type { Db } from './db.ts';

export interface NewEnvelope {
  organizationId: string;
  live: boolean;
  recipients: ReadonlyArray<{ verification?: string | null }>;
}

/** An envelope's viewers once the new ones are added: how many are active, and whether any new one sees the document. */
export interface ViewerCount {
  organizationId: string;
  /** Active (not revoked) viewers after the addition; CC recipients are not viewers and never count. */
  total: number;
  documentAccess: boolean;
}

export type PlanLimits = ReturnType<typeof createPlanLimits>;

export function createPlanLimits(deps: { db: Db; entitlements: EntitlementsCache }) {
  return {
    async checkNewEnvelope(envelope: NewEnvelope): Promise<void> {
      const entitlements = await deps.entitlements.get(envelope.organizationId);
      if (!entitlements.features.sms && envelope.recipients.some((r) => r.verification === 'sms')) {
        throw featureNotOnPlan(entitlements, 'sms', `SMS verification is not on the ${entitlements.planName} plan: add a card (Pay-as-you-go) or upgrade to send codes by SMS.`);
      }
      if (!envelope.live || entitlements.overageAllowed) return;
      const completed = await deps.db.envelope.count({
        where: { organizationId: envelope.organizationId, testMode: false, completedAt: { gte: new Date(entitlements.periodStart), lt: new Date(entitlements.periodEnd) } },
      });
      if (completed >= entitlements.includedEnvelopes) throw includedEnvelopesUsed(entitlements);
    },

    /** Viewers per envelope (`viewersPerEnvelope`, null is unlimited) and their document access, in both modes. */
    async checkViewers(viewers: ViewerCount): Promise<void> {
      const entitlements = await deps.entitlements.get(viewers.organizationId);
      const allowed = entitlements.features.viewersPerEnvelope;
      if (allowed !== null && viewers.total > allowed) throw overAllowance(entitlements, 'viewersPerEnvelope', { one: 'viewer', many: 'viewers', per: 'per envelope' });
      if (viewers.documentAccess && !entitlements.features.viewerDocumentAccess) throw featureNotOnPlan(entitlements, 'viewerDocumentAccess');
    },
  };
}
