import { Link } from 'react-aria-components';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { useRead } from './read.tsx';

export interface OrganizationFeatures {
  plan?: string;
  features: Record<string, unknown>;
}

/**
 * The plan's feature flags (`GET /v1/organization/settings`), so a page says up front what the plan leaves out; the API
 * still refuses with its own words (403 `plan-upgrade-required`) whatever the page shows. Undefined until read, or
 * for those who may not read it.
 */
export function useOrganizationFeatures(): OrganizationFeatures | undefined {
  const { rest, can } = useSession();
  return useRead(() => unwrap(rest.GET('/v1/organization/settings')), can('org:manage')).data;
}

/** Whether the plan leaves `feature` out: false, or an allowance of 0 (known only once the settings are read). */
export function lacks(settings: OrganizationFeatures | undefined, feature: string): boolean {
  const value = settings?.features[feature];
  return value === false || value === 0;
}

/** "<what> is not on your plan", with the way to the billing page: a notice, not an error. */
export function NotOnPlan({ what }: { what: string }) {
  return (
    <div role="note" className="alert alert-upgrade">
      <strong>{what} is not on your plan.</strong>{' '}
      <Link href="/settings/billing" className="upgrade-link">
        See plans and upgrade
      </Link>
    </div>
  );
}

const FEATURE_WORDS: Record<string, string> = {
  api: 'API',
  webhooks: 'Webhooks',
  embeddedSigning: 'Embedded signing',
  testMode: 'Test mode',
  ssoConnections: 'Single sign-on connections',
  enforcedSso: 'Enforced single sign-on',
  scim: 'SCIM provisioning',
  branding: 'Custom e-mail branding',
  signingLinks: 'Always-on signing links',
  viewersPerEnvelope: 'Viewers per envelope',
  viewerDocumentAccess: 'Viewers can see the document',
  sms: 'SMS verification (add-on)',
  auditLogExport: 'Audit log export',
  euDataResidency: 'EU data residency',
  whiteLabel: 'White-label',
  subAccounts: 'Sub-accounts',
};

/** A feature flag in the words of the spec's feature table (its API name when the dashboard does not know it yet). */
export function featureWords(name: string): string {
  return FEATURE_WORDS[name] ?? name;
}

/** A flag's value as people read it: On/Off, Unlimited, or the allowance. */
export function featureValue(value: unknown): string {
  if (typeof value === 'boolean') return value ? 'On' : 'Off';
  if (value === null) return 'Unlimited';
  return typeof value === 'number' ? value.toLocaleString('en-US') : JSON.stringify(value);
}

