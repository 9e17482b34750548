/**
 * An organization's plan entitlements as every enforcing service reads them: one call to billing
 * (proto/src/internal-billing.ts), cached for ENTITLEMENTS_TTL_MS and dropped at once when billing notifies a plan
 * change; and the two refusals a plan limit makes (403 `plan-upgrade-required`, 402 `payment-required`).
 */
import {
  ENTITLEMENTS_PATH,
  ENTITLEMENTS_TTL_MS,
  entitlementsChangedSubject,
  type OrganizationEntitlements,
  type PlanFeatures,
} from '@sigil/proto/internal-billing';
import type { PrincipalSigner } from './auth/index.ts';
import type { Bus } from './bus/index.ts';
import { AppError } from './errors.ts';
import type { Logger } from './log.ts';
import { createOrganizationCache, internalJsonSource, type OrganizationCache, type OrganizationSource } from './organization-cache.ts';

export type { OrganizationEntitlements, PlanFeatures };

/** Where answers come from: billing over HTTP in a process, a fake in a service's tests. */
export type EntitlementsSource = OrganizationSource<OrganizationEntitlements>;

export function billingEntitlementsSource(options: { baseUrl: string; signPrincipal: PrincipalSigner; actorId: string; timeoutMs?: number }): EntitlementsSource {
  return internalJsonSource({ ...options, target: 'billing', timeoutMs: options.timeoutMs ?? 5_000, path: () => ENTITLEMENTS_PATH });
}

export type EntitlementsCache = OrganizationCache<OrganizationEntitlements>;

export interface EntitlementsCacheOptions {
  source: EntitlementsSource;
  /** Notifications of plan changes (billing's); without a bus, only the TTL renews an answer. */
  bus?: Pick<Bus, 'listen' | 'onReconnect'>;
  ttlMs?: number;
  /** A stale answer serves this long while billing cannot be reached (the refusal of a send must not hang on it). */
  staleForMs?: number;
  maxEntries?: number;
  now?: () => number;
  log?: Logger;
}

export function createEntitlementsCache(options: EntitlementsCacheOptions): Promise<EntitlementsCache> {
  return createOrganizationCache({
    ...options,
    changedSubjects: [entitlementsChangedSubject],
    ttlMs: options.ttlMs ?? ENTITLEMENTS_TTL_MS,
    staleForMs: options.staleForMs ?? 10 * 60_000,
    what: 'the entitlements',
  });
}

const FEATURE_WORDS: Record<keyof PlanFeatures, string> = {
  api: 'The API',
  webhooks: 'Webhooks',
  embeddedSigning: 'Embedded signing',
  testMode: 'Test mode',
  ssoConnections: 'Single sign-on',
  enforcedSso: 'Enforced single sign-on',
  scim: 'SCIM provisioning',
  branding: 'Custom branding',
  signingLinks: 'Always-on signing links',
  viewersPerEnvelope: 'Viewers',
  viewerDocumentAccess: 'Document access for viewers',
  sms: 'SMS verification',
  auditLogExport: 'Audit log export',
  euDataResidency: 'EU data residency',
  whiteLabel: 'White-label',
  subAccounts: 'Sub-accounts',
};

/** 403 `plan-upgrade-required` for a feature the plan does not have; `detail` names it and the plan. */
export function featureNotOnPlan(entitlements: OrganizationEntitlements, feature: keyof PlanFeatures, detail?: string): AppError {
  return new AppError('plan-upgrade-required', detail ?? `${FEATURE_WORDS[feature]} is not on the ${entitlements.planName} plan. Upgrade to use it.`, {
    extensions: { upgradeUrl: entitlements.upgradeUrl, feature },
  });
}

/** 403 `plan-upgrade-required` for a count over the plan's allowance (`viewersPerEnvelope`, `ssoConnections`). */
export function overAllowance(entitlements: OrganizationEntitlements, feature: 'viewersPerEnvelope' | 'ssoConnections', what: { one: string; many: string; per?: string }): AppError {
  const allowed = entitlements.features[feature] ?? 0;
  const noun = allowed === 1 ? what.one : what.many;
  return featureNotOnPlan(entitlements, feature, `Your ${entitlements.planName} plan allows ${allowed} ${noun}${what.per ? ` ${what.per}` : ''}.`);
}

/** 402 `payment-required`: the period's included envelopes are used on a plan without overage. */
export function includedEnvelopesUsed(entitlements: OrganizationEntitlements): AppError {
  return new AppError(
    'payment-required',
    `This workspace used its ${entitlements.includedEnvelopes} included envelopes this period (${entitlements.planName} plan). Add a card or upgrade to send more.`,
    { extensions: { upgradeUrl: entitlements.upgradeUrl } },
  );
}
