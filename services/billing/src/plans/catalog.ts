/**
 * Sigil's plans, as the spec's tables give them (part 8, "Plans"): one place that entitlements, the upcoming invoice,
 * the docs and the tests read. Prices are in US cents. A plan is per workspace, never per seat; it bills completed
 * envelopes, live mode only.
 */
import type { PlanFeatures } from '@sigil/proto/internal-billing';

/** What a plan allows (`viewersPerEnvelope` null: unlimited), the spec's feature table row by row: the internal contract's type, which every enforcing service reads. */
export type { PlanFeatures };

export const PLAN_IDS = ['free', 'payg', 'team', 'business', 'platform'] as const;
export type PlanId = (typeof PLAN_IDS)[number];

/** The metered add-ons of every paid plan, by the usage counter that counts them. */
export const ADD_ON_IDS = ['smsOtp', 'idCheck', 'qesSignature'] as const;
export type AddOnId = (typeof ADD_ON_IDS)[number];

export interface AddOn {
  id: AddOnId;
  /** As an invoice line reads it. */
  description: string;
  unitAmount: number;
}

export const ADD_ONS: Readonly<Record<AddOnId, AddOn>> = {
  smsOtp: { id: 'smsOtp', description: 'SMS verification codes', unitAmount: 10 },
  idCheck: { id: 'idCheck', description: 'ID verifications', unitAmount: 250 },
  qesSignature: { id: 'qesSignature', description: 'EU qualified signatures', unitAmount: 450 },
};

/**
 * A price band for completed envelopes beyond the included ones, up to a total count for the period (`upTo`
 * included; null: no end). Bands are graduated: each envelope pays the band its rank in the period falls in.
 */
export interface OverageTier {
  upTo: number | null;
  unitAmount: number;
}


export interface Plan {
  id: PlanId;
  name: string;
  /** The monthly base price. */
  monthlyBase: number;
  includedEnvelopes: number;
  /** Empty: completed envelopes beyond the included ones are not sold, and sending pauses (Free). */
  overage: readonly OverageTier[];
  /** Whether the plan's period is a paid subscription's (the processor's), rather than the UTC calendar month. */
  subscription: boolean;
  /** The metered add-ons it may use (every paid plan's). */
  addOns: readonly AddOnId[];
  features: PlanFeatures;
}

const EVERY_PLAN = { api: true, webhooks: true, embeddedSigning: true, testMode: true } as const;
const NOT_BUSINESS = { enforcedSso: false, scim: false, auditLogExport: false, euDataResidency: false } as const;
const BUSINESS = { enforcedSso: true, scim: true, auditLogExport: true, euDataResidency: true } as const;
const PAID_ADD_ONS = ADD_ON_IDS;

export const PLANS: Readonly<Record<PlanId, Plan>> = {
  free: {
    id: 'free',
    name: 'Free',
    monthlyBase: 0,
    includedEnvelopes: 100,
    overage: [],
    subscription: false,
    addOns: [],
    features: { ...EVERY_PLAN, ...NOT_BUSINESS, ssoConnections: 0, branding: false, signingLinks: false, viewersPerEnvelope: 1, viewerDocumentAccess: false, sms: false, whiteLabel: false, subAccounts: false },
  },
  payg: {
    id: 'payg',
    name: 'Pay-as-you-go',
    monthlyBase: 0,
    includedEnvelopes: 100,
    overage: [{ upTo: null, unitAmount: 20 }],
    subscription: true,
    addOns: PAID_ADD_ONS,
    features: { ...EVERY_PLAN, ...NOT_BUSINESS, ssoConnections: 0, branding: false, signingLinks: false, viewersPerEnvelope: 2, viewerDocumentAccess: false, sms: true, whiteLabel: false, subAccounts: false },
  },
  team: {
    id: 'team',
    name: 'Team',
    monthlyBase: 2900,
    includedEnvelopes: 500,
    overage: [{ upTo: null, unitAmount: 10 }],
    subscription: true,
    addOns: PAID_ADD_ONS,
    features: { ...EVERY_PLAN, ...NOT_BUSINESS, ssoConnections: 1, branding: true, signingLinks: true, viewersPerEnvelope: 5, viewerDocumentAccess: true, sms: true, whiteLabel: false, subAccounts: false },
  },
  business: {
    id: 'business',
    name: 'Business',
    monthlyBase: 14900,
    includedEnvelopes: 2000,
    overage: [{ upTo: null, unitAmount: 8 }],
    subscription: true,
    addOns: PAID_ADD_ONS,
    features: { ...EVERY_PLAN, ...BUSINESS, ssoConnections: 3, branding: true, signingLinks: true, viewersPerEnvelope: 20, viewerDocumentAccess: true, sms: true, whiteLabel: false, subAccounts: false },
  },
  platform: {
    id: 'platform',
    name: 'Platform',
    monthlyBase: 19900,
    includedEnvelopes: 2000,
    overage: [
      { upTo: 10_000, unitAmount: 8 },
      { upTo: 50_000, unitAmount: 5 },
      { upTo: null, unitAmount: 3 },
    ],
    subscription: true,
    addOns: PAID_ADD_ONS,
    features: { ...EVERY_PLAN, ...BUSINESS, ssoConnections: 3, branding: true, signingLinks: true, viewersPerEnvelope: null, viewerDocumentAccess: true, sms: true, whiteLabel: true, subAccounts: true },
  },
};

export const isPlanId = (value: unknown): value is PlanId => typeof value === 'string' && (PLAN_IDS as readonly string[]).includes(value);
