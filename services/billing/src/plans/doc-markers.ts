/** Where docs/billing.md holds the plan tables written from the catalog (scripts/plans-doc.ts). */
export const PLANS_DOC_BEGIN = '<!-- plans: written by services/billing/scripts/plans-doc.ts from src/plans/catalog.ts -->';
export const PLANS_DOC_END = '<!-- end of plans -->';
