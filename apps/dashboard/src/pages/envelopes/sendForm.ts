import type { components } from '@sigil/proto/api/sigil';

type CreateEnvelope = components['schemas']['CreateEnvelope'];
type RecipientInput = components['schemas']['EnvelopeRecipientInput'];
export type Delivery = NonNullable<RecipientInput['delivery']>;
export type Verification = NonNullable<RecipientInput['verification']>;

export const DELIVERIES: Record<Delivery, string> = { email: 'E-mail (we send the signing link)', embedded: 'Embedded (you hand them a signing link)' };
export const VERIFICATIONS: Record<Verification, string> = { none: 'None', email: 'Code by e-mail', sms: 'Code by SMS' };

export interface RecipientDraft {
  role: string;
  name: string;
  email: string;
  delivery: Delivery;
  verification: Verification;
  phone: string;
  order: number | undefined;
}

export interface CcDraft {
  name: string;
  email: string;
}

/** What the send form holds; `toCreateEnvelope` turns it into the contract's CreateEnvelope. */
export interface SendDraft {
  version: string;
  recipients: RecipientDraft[];
  cc: CcDraft[];
  variables: Record<string, string>;
  externalId: string;
  expiresInDays: number | undefined;
  reminders: boolean;
  firstReminderAfterHours: number | undefined;
  remindEveryHours: number | undefined;
}

export interface TemplateRole {
  name: string;
  order: number;
}

/** A fresh form for a version's roles (one recipient each, in the roles' signing order). */
export function draftFor(version: string, roles: readonly TemplateRole[]): SendDraft {
  return {
    version,
    recipients: [...roles].sort((a, b) => a.order - b.order).map((role) => ({ role: role.name, name: '', email: '', delivery: 'email', verification: 'none', phone: '', order: role.order })),
    cc: [],
    variables: {},
    externalId: '',
    expiresInDays: undefined,
    reminders: false,
    firstReminderAfterHours: 48,
    remindEveryHours: 72,
  };
}

const DAY_MS = 86_400_000;

/**
 * The request: recipients in the form's order (so `/body/recipients/<i>` names the form's i-th recipient), empty
 * optional parts left out so the API's defaults apply (version latest, 30 days, no reminders).
 */
export function toCreateEnvelope(template: string, draft: SendDraft, now = Date.now()): CreateEnvelope {
  const variables = Object.fromEntries(Object.entries(draft.variables).filter(([, value]) => value.trim() !== ''));
  const cc = draft.cc.filter((c) => c.email.trim() !== '' || c.name.trim() !== '').map((c) => ({ email: c.email.trim(), ...(c.name.trim() ? { name: c.name.trim() } : {}) }));
  return {
    template,
    ...(draft.version !== 'latest' ? { version: Number(draft.version) } : {}),
    recipients: draft.recipients.map((r) => ({
      role: r.role,
      name: r.name.trim(),
      email: r.email.trim(),
      delivery: r.delivery,
      verification: r.verification,
      ...(r.phone.trim() ? { phone: r.phone.trim() } : {}),
      ...(r.order !== undefined ? { order: r.order } : {}),
    })),
    ...(cc.length > 0 ? { cc } : {}),
    ...(Object.keys(variables).length > 0 ? { variables } : {}),
    ...(draft.externalId.trim() ? { externalId: draft.externalId.trim() } : {}),
    ...(draft.expiresInDays !== undefined ? { expiresAt: new Date(now + draft.expiresInDays * DAY_MS).toISOString() } : {}),
    ...(draft.reminders ? { reminders: { firstAfterHours: draft.firstReminderAfterHours, everyHours: draft.remindEveryHours } } : {}),
  };
}

/** The contract's EnvelopeDryRun as envelopes fills it (docs/envelopes.md, "Dry run"). */
export interface DryRunResult {
  valid: boolean;
  testMode?: boolean;
  pageCount?: number;
  templateVersion?: number;
  expiresAt?: string;
  recipients?: Array<{ role: string; name: string; email: string; order: number; delivery: string; verification: string; firstTurn: boolean }>;
  wouldSend?: Array<{ role: string; email: string; via: string }>;
}
