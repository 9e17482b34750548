import { AppError, pointerTo, type FieldError } from '@sigil/kit/errors';
import type { components } from '@sigil/proto/api/sigil';
import type { TemplateVersionSnapshot } from '@sigil/proto/internal-templates';

/** The request as the contract has checked it (shapes and bounds); what needs the template is checked here. */
type CreateEnvelope = components['schemas']['CreateEnvelope'];
type EnvelopeRecipientInput = components['schemas']['EnvelopeRecipientInput'];

/** A recipient as it will be stored: defaults applied, its order from the request or from its role. */
export interface PlannedRecipient {
  role: string;
  name: string;
  email: string;
  phone: string | null;
  delivery: NonNullable<EnvelopeRecipientInput['delivery']>;
  verification: NonNullable<EnvelopeRecipientInput['verification']>;
  order: number;
}

export interface EnvelopePlan {
  recipients: PlannedRecipient[];
  variables: Record<string, string>;
  expiresAt: Date;
}

const HOUR_MS = 3_600_000;
export const EXPIRY_BOUNDS = { minMs: HOUR_MS, maxMs: 365 * 24 * HOUR_MS } as const;

/** The version's requested number, or `latest` (the contract allows a number, a numeric string or `latest`). */
export function requestedVersion(version: CreateEnvelope['version']): number | 'latest' {
  if (version === undefined || version === 'latest') return 'latest';
  const number = Number(version);
  if (!Number.isInteger(number) || number < 1) throw invalid([{ pointer: '/body/version', detail: 'must be a published version number or "latest"' }]);
  return number;
}

/** Checks the request against the template version: one recipient per role, declared variables, expiry bounds. */
export function planEnvelope(input: CreateEnvelope, version: TemplateVersionSnapshot, now: Date, defaultExpiryDays: number): EnvelopePlan {
  const errors: FieldError[] = [];
  const recipients = planRecipients(input.recipients ?? [], version, errors);
  const variables = checkVariables(input.variables ?? {}, version, errors);
  const expiresAt = input.expiresAt ? new Date(input.expiresAt) : new Date(now.getTime() + defaultExpiryDays * 24 * HOUR_MS);
  const lifetime = expiresAt.getTime() - now.getTime();
  if (!(lifetime >= EXPIRY_BOUNDS.minMs && lifetime <= EXPIRY_BOUNDS.maxMs)) {
    errors.push({ pointer: '/body/expiresAt', detail: 'must be between 1 hour and 365 days from now' });
  }
  if (errors.length > 0) throw invalid(errors);
  return { recipients, variables, expiresAt };
}

function planRecipients(input: EnvelopeRecipientInput[], version: TemplateVersionSnapshot, errors: FieldError[]): PlannedRecipient[] {
  const seen = new Set<string>();
  const planned: PlannedRecipient[] = [];
  input.forEach((recipient, i) => {
    const role = version.roles.find((r) => r.name === recipient.role);
    if (!role) return void errors.push({ pointer: `/body/recipients/${i}/role`, detail: `is not a role of template ${version.templateId} version ${version.version} (${version.roles.map((r) => r.name).join(', ')})` });
    if (seen.has(role.name)) return void errors.push({ pointer: `/body/recipients/${i}/role`, detail: `already has a recipient: one recipient per role` });
    seen.add(role.name);
    if (recipient.verification === 'sms' && !recipient.phone) errors.push({ pointer: `/body/recipients/${i}/phone`, detail: 'is required for sms verification' });
    planned.push({
      role: role.name,
      name: recipient.name,
      email: recipient.email.toLowerCase(),
      phone: recipient.phone ?? null,
      delivery: recipient.delivery ?? 'email',
      verification: recipient.verification ?? 'none',
      order: recipient.order ?? role.order,
    });
  });
  for (const role of version.roles) {
    if (!seen.has(role.name) && !errors.some((e) => e.pointer.startsWith('/body/recipients/'))) {
      errors.push({ pointer: '/body/recipients', detail: `role ${role.name} has no recipient` });
    }
  }
  return planned;
}

function checkVariables(given: Record<string, unknown>, version: TemplateVersionSnapshot, errors: FieldError[]): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    if (!version.variables.some((v) => v.name === name)) errors.push({ pointer: pointerTo('body', 'variables', name), detail: 'is not a variable of this template version' });
    else if (value !== null && typeof value === 'object') errors.push({ pointer: pointerTo('body', 'variables', name), detail: 'must be a string, number or boolean' });
    else if (value !== null && value !== undefined) values[name] = String(value);
  }
  for (const variable of version.variables) {
    if (variable.required && !values[variable.name]?.trim()) errors.push({ pointer: pointerTo('body', 'variables', variable.name), detail: 'is required' });
  }
  return values;
}

export function invalid(errors: FieldError[]): AppError {
  const first = errors[0] as FieldError;
  const detail = errors.length === 1 ? `${first.pointer.replace('/body/', '')} ${first.detail}.` : `${errors.length} problems in the request.`;
  return new AppError('validation-failed', detail, { errors });
}
