import type { components } from '@sigil/proto/api/sigil';

export type Permission = components['schemas']['Permission'];
export type WebhookEventType = components['schemas']['WebhookEventType'];

/** What each permission lets a key (or a member) do, in the words the pages show beside its code. */
export const PERMISSION_WORDS: Record<Permission, string> = {
  'template:read': 'Read templates',
  'template:write': 'Create and edit templates',
  'template:publish': 'Publish templates',
  'envelope:read': 'Read envelopes',
  'envelope:send': 'Send envelopes',
  'envelope:void': 'Void envelopes',
  'org:manage': 'Manage organization settings and webhooks',
  'member:manage': 'Manage members and invitations',
  'sso:manage': 'Manage single sign-on and SCIM',
  'apikey:manage': 'Manage API keys',
  'billing:manage': 'Manage billing',
};

/** In the contract's order (the Record above lists every permission: a new one fails the typecheck until worded). */
export const PERMISSIONS = Object.keys(PERMISSION_WORDS) as Permission[];

/** The permissions a new key gets when none are chosen (the API's default): never the administrative ones. */
export const ADMIN_PERMISSIONS: readonly Permission[] = ['org:manage', 'member:manage', 'sso:manage', 'apikey:manage', 'billing:manage'];

/** What each webhook event means; `null` for a type the contract reserves but nothing emits yet. */
export const EVENT_WORDS: Record<WebhookEventType, string | null> = {
  'envelope.created': 'An envelope was created',
  'envelope.ready': 'An envelope is ready to be signed',
  'recipient.sent': 'A recipient was sent their invitation',
  'recipient.viewed': 'A recipient opened the document',
  'recipient.signed': 'A recipient signed',
  'recipient.declined': 'A recipient declined',
  'envelope.completed': 'Every recipient signed',
  'envelope.sealed': 'The signed document was sealed',
  'envelope.declined': 'An envelope was declined',
  'envelope.voided': 'An envelope was voided',
  'envelope.expired': 'An envelope expired',
  'signing_link.used': 'A signing link was used',
  'webhook.test': 'A test ping (Send test)',
  'acceptance.created': null,
};

/** The event types an endpoint can subscribe to (reserved ones left out). */
export const SUBSCRIBABLE_EVENTS = (Object.keys(EVENT_WORDS) as WebhookEventType[]).filter((type) => EVENT_WORDS[type] !== null);

/** An endpoint's delivery health over the last 24 hours, in words. */
export function successRate(health: { successRate?: number | null; attempts: number; failures: number }): string {
  if (health.successRate == null) return 'No attempts';
  return `${Math.round(health.successRate * 1000) / 10}% of ${health.attempts} (${health.failures} failed)`;
}
