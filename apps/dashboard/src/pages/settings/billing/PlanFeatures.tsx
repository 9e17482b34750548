import type { Billing, Features } from './query.ts';
import { formatCount } from './format.ts';

/** Each entitlement the plan decides, in the words of the spec's feature table, and how the plan sets it. */
const FEATURES: { words: string; value: (f: Features) => string | boolean }[] = [
  { words: 'Single sign-on connections', value: (f) => (f.ssoConnections === 0 ? false : formatCount(f.ssoConnections)) },
  { words: 'Enforced SSO and SCIM provisioning', value: (f) => f.enforcedSso && f.scim },
  { words: 'Custom e-mail branding', value: (f) => f.branding },
  { words: 'Always-on signing links', value: (f) => f.signingLinks },
  { words: 'Viewers per envelope', value: (f) => (f.viewersPerEnvelope === null ? 'Unlimited' : formatCount(f.viewersPerEnvelope)) },
  { words: 'Viewers can see the document', value: (f) => f.viewerDocumentAccess },
  { words: 'SMS verification (add-on)', value: (f) => f.sms },
  { words: 'Audit log export', value: (f) => f.auditLogExport },
  { words: 'EU data residency', value: (f) => f.euDataResidency },
  { words: 'White-label and sub-accounts', value: (f) => f.whiteLabel && f.subAccounts },
];

/** What the current plan allows (its entitlements); the API, webhooks, embedded signing and test mode come with all. */
export function PlanFeatures({ billing }: { billing: Billing }) {
  const features = billing.entitlements.features;
  return (
    <section className="panel" aria-labelledby="billing-features">
      <h2 id="billing-features">What {billing.planName} includes</h2>
      <p className="muted">Every plan has the API, webhooks, embedded signing and test mode.</p>
      <dl className="billing-features">
        {FEATURES.map(({ words, value }) => {
          const allowed = value(features);
          return (
            <div key={words} className={allowed === false ? 'billing-feature billing-feature-off' : 'billing-feature'}>
              <dt>{words}</dt>
              <dd>
                <span className="billing-feature-mark" aria-hidden="true">
                  {allowed === false ? '–' : '✓'}
                </span>
                {allowed === true ? 'Included' : allowed === false ? 'Not on this plan' : allowed}
              </dd>
            </div>
          );
        })}
      </dl>
    </section>
  );
}
