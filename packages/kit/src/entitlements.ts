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
import { createServiceClient, type PrincipalSigner } from './auth/index.ts';
import type { Bus, Subscription } from './bus/index.ts';
import { AppError } from './errors.ts';
import type { Logger } from './log.ts';

export type { OrganizationEntitlements, PlanFeatures };

/** Where answers come from: billing over HTTP in a process, a fake in a service's tests. */
export type EntitlementsSource = (organizationId: string) => Promise<OrganizationEntitlements>;

export function billingEntitlementsSource(options: { baseUrl: string; signPrincipal: PrincipalSigner; actorId: string; timeoutMs?: number }): EntitlementsSource {
  const send = createServiceClient({ target: 'billing', actorId: options.actorId, baseUrl: options.baseUrl, signPrincipal: options.signPrincipal, timeoutMs: options.timeoutMs ?? 5_000 });
  return async (organizationId) => {
    const response = await send(ENTITLEMENTS_PATH, { organizationId, mode: 'live' });
    if (!response.ok) {
      const detail = await response.text().catch(() => '');
      throw new AppError('bad-gateway', `The billing service answered ${response.status}.`, { cause: new Error(detail.slice(0, 500)) });
    }
    return (await response.json()) as OrganizationEntitlements;
  };
}

export interface EntitlementsCache {
  get(organizationId: string): Promise<OrganizationEntitlements>;
  invalidate(organizationId: string): void;
  stop(): void;
}

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

interface Entry {
  value: OrganizationEntitlements;
  fetchedAt: number;
}

export async function createEntitlementsCache(options: EntitlementsCacheOptions): Promise<EntitlementsCache> {
  const ttl = options.ttlMs ?? ENTITLEMENTS_TTL_MS;
  const staleFor = options.staleForMs ?? 10 * 60_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const inFlight = new Map<string, Promise<OrganizationEntitlements>>();
  const subscriptions: Subscription[] = [];
  if (options.bus) {
    const prefix = entitlementsChangedSubject('');
    subscriptions.push(await options.bus.listen(entitlementsChangedSubject('*'), (_payload, subject) => void entries.delete(subject.slice(prefix.length))));
    // Notifications sent while the connection was down are lost: every answer may be old.
    subscriptions.push(options.bus.onReconnect(() => entries.clear()));
  }

  function keep(organizationId: string, value: OrganizationEntitlements): void {
    entries.delete(organizationId);
    entries.set(organizationId, { value, fetchedAt: now() });
    // A Map iterates in insertion order: the first key is the one read least recently.
    if (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
  }

  async function load(organizationId: string, stale: Entry | undefined): Promise<OrganizationEntitlements> {
    try {
      const value = await options.source(organizationId);
      keep(organizationId, value);
      return value;
    } catch (error) {
      if (stale && now() - stale.fetchedAt < staleFor) {
        options.log?.warn({ err: error, organizationId }, 'billing did not answer: using the entitlements read before');
        return stale.value;
      }
      throw error;
    }
  }

  return {
    get(organizationId) {
      const entry = entries.get(organizationId);
      if (entry && now() - entry.fetchedAt < ttl) return Promise.resolve(entry.value);
      const pending = inFlight.get(organizationId);
      if (pending) return pending;
      const loading = load(organizationId, entry).finally(() => inFlight.delete(organizationId));
      inFlight.set(organizationId, loading);
      return loading;
    },
    invalidate: (organizationId) => void entries.delete(organizationId),
    stop: () => subscriptions.forEach((s) => s.unsubscribe()),
  };
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
