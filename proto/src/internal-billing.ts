/**
 * What the billing service answers other services: an organization's entitlements, the one read every service that
 * enforces a plan limit makes (and caches). A contract between services, outside the public API.
 *
 *   GET /internal/v1/billing/entitlements → 200 OrganizationEntitlements
 *
 * The call carries `x-sigil-principal` (a service principal of BILLING_CALLERS, with the `organizationId` it asks
 * about); any other principal is 401. An organization billing has never seen is on Free.
 *
 * A cache holds an answer for at most ENTITLEMENTS_TTL_MS, and drops it at once on a notification on
 * `entitlementsChangedSubject(organizationId)` (plain NATS, best effort: the TTL bounds a lost one), which billing sends
 * after every committed plan change. So a change reaches every replica within 5 s.
 */
export const INTERNAL_BILLING_PREFIX = '/internal/v1/billing';
export const ENTITLEMENTS_PATH = `${INTERNAL_BILLING_PREFIX}/entitlements`;

/** The services allowed to call these endpoints (the `actorId` of their service principal). */
export const BILLING_CALLERS = ['envelopes', 'signing', 'accounts'] as const;

/** How long a service may use an answer without asking again. */
export const ENTITLEMENTS_TTL_MS = 5_000;

/** The plain-NATS subject billing notifies on when an organization's plan changed (wildcard: `*` for every one). */
export const entitlementsChangedSubject = (organizationId: string): string => `sigil.billing.entitlements_changed.${organizationId}`;

/** What a plan allows (`viewersPerEnvelope` null: unlimited); the Billing object's `entitlements.features`. */
export interface PlanFeatures {
  api: boolean;
  webhooks: boolean;
  embeddedSigning: boolean;
  testMode: boolean;
  ssoConnections: number;
  enforcedSso: boolean;
  scim: boolean;
  branding: boolean;
  signingLinks: boolean;
  viewersPerEnvelope: number | null;
  viewerDocumentAccess: boolean;
  sms: boolean;
  auditLogExport: boolean;
  euDataResidency: boolean;
  whiteLabel: boolean;
  subAccounts: boolean;
}

export interface OrganizationEntitlements {
  organizationId: string;
  plan: string;
  /** The plan's name as people read it (`Pay-as-you-go`), for the `detail` of a 403. */
  planName: string;
  includedEnvelopes: number;
  /** Completed live envelopes beyond the included ones are billed; false (Free): sending pauses once they are used. */
  overageAllowed: boolean;
  features: PlanFeatures;
  /** The current billing period (ISO 8601): the subscription's, or the UTC calendar month on Free. */
  periodStart: string;
  periodEnd: string;
  /** Where to upgrade: the dashboard's billing page (the problems' `upgradeUrl`). */
  upgradeUrl: string;
}
