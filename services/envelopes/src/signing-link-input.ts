import type { FieldError } from '@sigil/kit/errors';
import type { components } from '@sigil/proto/api/sigil';
import type { TemplateVersionSnapshot } from '@sigil/proto/internal-templates';
import type { SigningLinkLimits, VisitorField } from '@sigil/proto/internal-links';
import { invalid, planEnvelope, requestedVersion } from './create-input.ts';
import type { Caller, TemplatesClient } from './templates-client.ts';

type CreateEnvelope = components['schemas']['CreateEnvelope'];
type LimitsInput = Partial<components['schemas']['SigningLinkLimits']>;

/**
 * `POST /v1/signing-links` as this service reads it: the contract's CreateSigningLink (limits at the top level, `name`)
 * and api-decisions' shape (`limits` nested, `title`, `role`, `variables`, `cc`) are both accepted; `recipients` names
 * the template's other roles' recipients, fixed by the sender.
 */
export type LinkRequest = components['schemas']['CreateSigningLink'] &
  LimitsInput & {
    role?: string;
    title?: string;
    limits?: LimitsInput;
    variables?: Record<string, unknown>;
    cc?: Array<{ email: string; name?: string }>;
    recipients?: CreateEnvelope['recipients'];
  };

export interface CheckedLink {
  snapshot: TemplateVersionSnapshot;
  role: string;
  title: string;
  limits: SigningLinkLimits;
  variables: Record<string, string>;
  cc: Array<{ email: string; name?: string }>;
  recipients: NonNullable<CreateEnvelope['recipients']>;
  visitorFields: VisitorField[];
}

export const DEFAULT_LIMITS: SigningLinkLimits = { perEmailPerDay: 3, perIpPerHour: 20, dailyCap: null };
const BOUNDS = { perEmailPerDay: 1000, perIpPerHour: 10_000, dailyCap: 1_000_000 } as const;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const TITLE_MAX = 200;
/** Stands for the visitor while the link is checked: the visitor's role must be the one role left without a recipient. */
const VISITOR_PLACEHOLDER = { name: 'Visitor', email: 'visitor@example.invalid', delivery: 'embedded' as const };

/** The limits, from the given ones over the defaults, each within the contract's bounds (400 naming the bad ones). */
export function linkLimits(given: LimitsInput, pointer: string): SigningLinkLimits {
  const errors: FieldError[] = [];
  const limits = { ...DEFAULT_LIMITS };
  for (const name of ['perEmailPerDay', 'perIpPerHour', 'dailyCap'] as const) {
    const value = given[name];
    if (value === undefined || (value === null && name === 'dailyCap')) {
      if (value === null) limits.dailyCap = null;
      continue;
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > BOUNDS[name]) {
      errors.push({ pointer: `${pointer}/${name}`, detail: `must be an integer from 1 to ${BOUNDS[name]}${name === 'dailyCap' ? ', or null' : ''}` });
    } else limits[name] = value;
  }
  if (errors.length > 0) throw invalid(errors);
  return limits;
}

function checkCc(cc: unknown): Array<{ email: string; name?: string }> {
  if (cc === undefined) return [];
  const ok = Array.isArray(cc) && cc.length <= 50 && cc.every((c) => c && typeof c === 'object' && typeof c.email === 'string' && EMAIL.test(c.email) && c.email.length <= 254 && (c.name === undefined || (typeof c.name === 'string' && c.name.length <= 200)));
  if (!ok) throw invalid([{ pointer: '/body/cc', detail: 'must be at most 50 of { email, name }' }]);
  return (cc as Array<{ email: string; name?: string }>).map((c) => ({ email: c.email.toLowerCase(), ...(c.name ? { name: c.name } : {}) }));
}

async function useVersion(templates: TemplatesClient, caller: Caller, input: LinkRequest, linkId: string): Promise<TemplateVersionSnapshot> {
  const version = requestedVersion(input.version);
  const snapshot = await templates.use(caller, input.template, { version, usedBy: { kind: 'signing_link', id: linkId } });
  if (snapshot) return snapshot;
  const templateExists = version !== 'latest' && (await templates.version(caller, input.template, 'latest')) !== undefined;
  throw templateExists
    ? invalid([{ pointer: '/body/version', detail: `is not a published version of template ${input.template}` }])
    : invalid([{ pointer: '/body/template', detail: version === 'latest' ? 'does not exist or has no published version' : 'does not exist' }]);
}

function visitorRole(input: LinkRequest, snapshot: TemplateVersionSnapshot): string {
  const names = snapshot.roles.map((r) => r.name);
  const role = input.role ?? (names.length === 1 ? names[0] : undefined);
  if (!role) throw invalid([{ pointer: '/body/role', detail: `is required: the visitor's role, one of ${names.join(', ')}` }]);
  if (!names.includes(role)) throw invalid([{ pointer: '/body/role', detail: `is not a role of template ${snapshot.templateId} version ${snapshot.version} (${names.join(', ')})` }]);
  if ((input.recipients ?? []).some((r) => r.role === role)) throw invalid([{ pointer: '/body/recipients', detail: `must not name the visitor's role ${role}` }]);
  return role;
}

/**
 * Checks a new link against its template version, recording the template's use (so it cannot be deleted) and pinning
 * the version (`latest` is the latest published one now): the visitor's role, the other roles' recipients and the
 * variables are checked as an envelope of the link would be.
 */
export async function checkLinkRequest(templates: TemplatesClient, caller: Caller, input: LinkRequest, linkId: string, now: Date): Promise<CheckedLink> {
  const limits = linkLimits({ ...input, ...input.limits }, input.limits ? '/body/limits' : '/body');
  const cc = checkCc(input.cc);
  const title = (input.title ?? input.name)?.trim();
  if (title !== undefined && (title.length === 0 || title.length > TITLE_MAX)) throw invalid([{ pointer: '/body/title', detail: `must be 1 to ${TITLE_MAX} characters` }]);
  const snapshot = await useVersion(templates, caller, input, linkId);
  const role = visitorRole(input, snapshot);
  const recipients = input.recipients ?? [];
  const plan = planEnvelope({ template: input.template, recipients: [...recipients, { role, ...VISITOR_PLACEHOLDER }], variables: input.variables as CreateEnvelope['variables'] }, snapshot, now, 30);
  const visitorFields = snapshot.fields
    .filter((f) => f.role === role && !f.variable)
    .map((f): VisitorField => ({ id: f.id, type: f.type, required: f.required, label: f.label ?? null }));
  return { snapshot, role, title: title ?? snapshot.templateName, limits, variables: plan.variables, cc, recipients, visitorFields };
}
