/**
 * The plans as docs/billing.md shows them, written from the catalog (`npm run --workspace @sigil/billing plans:doc`
 * writes them into the page; a test keeps the page equal to this).
 */
import { ADD_ONS, ADD_ON_IDS, PLAN_IDS, PLANS, type PlanFeatures } from './catalog.ts';
import { count } from './invoice.ts';
import { dollars, overageWords } from './words.ts';

const FEATURE_ROWS: Array<[string, (f: PlanFeatures) => string]> = [
  ['API, webhooks, embedded signing, test mode (`api`, `webhooks`, `embeddedSigning`, `testMode`)', (f) => yes(f.api && f.webhooks && f.embeddedSigning && f.testMode)],
  ['Self-service SSO connections (`ssoConnections`)', (f) => String(f.ssoConnections)],
  ['Enforced SSO (`enforcedSso`), SCIM (`scim`)', (f) => yes(f.enforcedSso && f.scim)],
  ['Custom branding (`branding`)', (f) => yes(f.branding)],
  ['Always-on signing links (`signingLinks`)', (f) => yes(f.signingLinks)],
  ['Viewers per envelope (`viewersPerEnvelope`)', (f) => (f.viewersPerEnvelope === null ? 'unlimited' : String(f.viewersPerEnvelope))],
  ['Viewers can see the document (`viewerDocumentAccess`)', (f) => yes(f.viewerDocumentAccess)],
  ['SMS verification, an add-on (`sms`)', (f) => yes(f.sms)],
  ['Audit log export (`auditLogExport`), EU data residency (`euDataResidency`)', (f) => yes(f.auditLogExport && f.euDataResidency)],
  ['White-label (`whiteLabel`), sub-accounts (`subAccounts`)', (f) => yes(f.whiteLabel && f.subAccounts)],
];
const yes = (value: boolean) => (value ? 'yes' : 'no');

export function plansMarkdown(): string {
  const names = PLAN_IDS.map((id) => `${PLANS[id].name} (\`${id}\`)`);
  return [
    '| Plan | Monthly base | Completed envelopes included | Beyond that |',
    '|---|---|---|---|',
    ...PLAN_IDS.map((id, i) => `| ${names[i]} | ${dollars(PLANS[id].monthlyBase)} | ${count(PLANS[id].includedEnvelopes)} | ${overageWords(id)} |`),
    '',
    `Metered add-ons on every paid plan: ${ADD_ON_IDS.map((id) => `${ADD_ONS[id].description} (\`${id}\`) ${dollars(ADD_ONS[id].unitAmount)}`).join(', ')}.`,
    '',
    `| Feature (entitlement) | ${PLAN_IDS.map((id) => PLANS[id].name).join(' | ')} |`,
    `|---|${PLAN_IDS.map(() => '---').join('|')}|`,
    ...FEATURE_ROWS.map(([label, value]) => `| ${label} | ${PLAN_IDS.map((id) => value(PLANS[id].features)).join(' | ')} |`),
  ].join('\n');
}
