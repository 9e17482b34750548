import type { Data, KeyingConfig } from '@urql/exchange-graphcache';

/**
 * Object types of gateway/api-schema.graphql without an `id` (values, lists, parts of another record), and TemplateField,
 * whose id is unique within its version only: graphcache embeds them in their parent's record. Both web apps read the
 * same schema; test/graphcache-keys.test.ts keeps the list in step with it.
 */
export const EMBEDDED_TYPES = [
  'ActivityEntry', 'AddOnUsage', 'Anchor', 'AnchorConnection', 'ApiKeyConnection', 'AuditEntry', 'AuditTrail', 'BackupRun',
  'Billing', 'BillingEntitlements', 'BillingFeatures', 'BillingUsage', 'ChainBreak', 'ChainCheck', 'CheckResult',
  'Condition', 'DailyUsage', 'EnvelopeConnection', 'EnvelopeStatusCount', 'Inventory', 'InventoryDatabase',
  'InventoryExactCounts', 'InventoryTable', 'InvitationConnection', 'InvoiceLine', 'LogLeaf', 'PaymentMethod', 'Plan',
  'RestoreDestination', 'RestorePlan', 'RestoreProgress', 'RestoreSource', 'SandboxExtension', 'Sealing', 'Segment',
  'SegmentSpan', 'SigningLinkConnection', 'SigningLinkLimits', 'SigningLinkUsage', 'StoreGarbageCollection', 'StrataActivity', 'StrataAuditEvent', 'StrataCatalogState', 'StrataPolicy',
  'StrataSettings', 'StrataStore', 'TargetTimeline', 'TemplateBody', 'TemplateConnection', 'TemplateField',
  'TemplatePageSize', 'TemplateRole', 'TemplateVariable', 'TemplateVersion', 'TimelineVerification', 'UpcomingInvoice',
  'WebhookDeliveryConnection', 'WebhookEndpointConnection', 'WebhookHealth', 'Window',
];

/** Types named by something else than `id`. */
export const KEYED_BY_NAME = ['Target', 'Restore', 'Sandbox'];

const namespaced = (data: Data) => (typeof data.namespace === 'string' && typeof data.name === 'string' ? `${data.namespace}/${data.name}` : null);

/** graphcache's `keys` for the API schema. */
export function apiCacheKeys(): KeyingConfig {
  return {
    // Types without an id of their own are embedded in their parent's record (their list, their envelope).
    ...Object.fromEntries(EMBEDDED_TYPES.map((type) => [type, () => null])),
    // Strata's records are named by namespace and name (a sandbox by its name); when a query leaves those out, embedded too.
    Target: namespaced,
    Restore: namespaced,
    Sandbox: (s) => (typeof s.name === 'string' ? s.name : null),
    Recipient: (r) => (typeof r.id === 'string' ? r.id : null),
    Member: (m) => (typeof m.id === 'string' ? m.id : null),
  };
}
