import { AppError } from '@sigil/kit/errors';
import type { OrganizationEntitlements, PlanFeatures } from '@sigil/kit/entitlements';

/**
 * What e-mail branding the plan allows, and the checks of a branding input: lengths, plain text, and a 403
 * `plan-upgrade-required` naming the field a plan does not allow. Display name, custom message, footer and logo come
 * with `branding` (Team and up); removing "Powered by Sigil" is white-labelling (`whiteLabel`, Platform).
 */

export interface BrandingFields {
  displayName: string | null;
  customMessage: string | null;
  footer: string | null;
  removePoweredBy: boolean;
}

export interface BrandingAllowed {
  custom: boolean;
  footer: boolean;
  removePoweredBy: boolean;
}

export const BRANDING_LIMITS = { displayName: 100, customMessage: 2000, footer: 2000 } as const;

export function allowedBy(entitlements: OrganizationEntitlements): BrandingAllowed {
  const { branding, whiteLabel } = entitlements.features;
  return { custom: branding, footer: branding, removePoweredBy: whiteLabel };
}

/** The saved fields as the plan applies them today (a downgrade switches off what it no longer allows). */
export function effectiveFields(saved: BrandingFields, allowed: BrandingAllowed): BrandingFields {
  return {
    displayName: allowed.custom ? saved.displayName : null,
    customMessage: allowed.custom ? saved.customMessage : null,
    footer: allowed.footer ? saved.footer : null,
    removePoweredBy: allowed.removePoweredBy && saved.removePoweredBy,
  };
}

const invalid = (field: string, detail: string, pointerBase: string) =>
  new AppError('validation-failed', `Field ${field} ${detail}.`, { errors: [{ pointer: `${pointerBase}/${field}`, detail }] });

/** Control characters other than line breaks and tabs (a display name takes neither: it is an e-mail header). */
function hasControl(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if ((code < 0x20 && char !== '\n' && char !== '\t') || code === 0x7f || code === 0x2028 || code === 0x2029) return true;
  }
  return false;
}
const LINE_BREAK = /[\r\n\t]/;

function text(body: Record<string, unknown>, field: keyof typeof BRANDING_LIMITS, pointerBase: string, singleLine: boolean): string | null | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (value === null) return null;
  if (typeof value !== 'string') throw invalid(field, 'must be a string or null', pointerBase);
  const trimmed = value.replace(/\r\n?/g, '\n').trim();
  if (trimmed === '') return null;
  if (hasControl(trimmed) || (singleLine && LINE_BREAK.test(trimmed))) {
    throw invalid(field, singleLine ? 'must be one line of plain text, without control characters' : 'must be plain text, without control characters', pointerBase);
  }
  if ([...trimmed].length > BRANDING_LIMITS[field]) throw invalid(field, `must be at most ${BRANDING_LIMITS[field]} characters`, pointerBase);
  return trimmed;
}

/** A change as given: absent fields keep their saved value, null clears one. */
export interface BrandingChange {
  displayName?: string | null;
  customMessage?: string | null;
  footer?: string | null;
  removePoweredBy?: boolean;
  /** Only null: removes the logo (a logo is set by uploading one). */
  logoUrl?: null;
}

export function parseBrandingChange(body: unknown, pointerBase = '/body'): BrandingChange {
  const input = (body ?? {}) as Record<string, unknown>;
  const change: BrandingChange = {};
  const displayName = text(input, 'displayName', pointerBase, true);
  if (displayName !== undefined) change.displayName = displayName;
  const customMessage = text(input, 'customMessage', pointerBase, false);
  if (customMessage !== undefined) change.customMessage = customMessage;
  const footer = text(input, 'footer', pointerBase, false);
  if (footer !== undefined) change.footer = footer;
  if (input.removePoweredBy !== undefined) {
    if (typeof input.removePoweredBy !== 'boolean') throw invalid('removePoweredBy', 'must be true or false', pointerBase);
    change.removePoweredBy = input.removePoweredBy;
  }
  if (input.logoUrl !== undefined) {
    if (input.logoUrl !== null) throw invalid('logoUrl', 'can only be null (to remove the logo); upload a logo with POST /v1/organization/logo', pointerBase);
    change.logoUrl = null;
  }
  return change;
}

const FIELD_FEATURE: Record<keyof BrandingFields, { allowed: keyof BrandingAllowed; feature: keyof PlanFeatures; words: string }> = {
  displayName: { allowed: 'custom', feature: 'branding', words: 'A custom display name' },
  customMessage: { allowed: 'custom', feature: 'branding', words: 'A custom message' },
  footer: { allowed: 'footer', feature: 'branding', words: 'A custom footer' },
  removePoweredBy: { allowed: 'removePoweredBy', feature: 'whiteLabel', words: 'Removing "Powered by Sigil" (white-label)' },
};

/** 403 `plan-upgrade-required` for the first field the change sets that the plan does not allow (clearing is allowed). */
export function checkAgainstPlan(change: BrandingChange, entitlements: OrganizationEntitlements, pointerBase = '/body'): void {
  const allowed = allowedBy(entitlements);
  for (const field of Object.keys(FIELD_FEATURE) as Array<keyof BrandingFields>) {
    const value = change[field];
    const { allowed: key, feature, words } = FIELD_FEATURE[field];
    if (value === undefined || value === null || value === false || allowed[key]) continue;
    const detail = `${words} is not on the ${entitlements.planName} plan. Upgrade to use it.`;
    throw new AppError('plan-upgrade-required', detail, {
      errors: [{ pointer: `${pointerBase}/${field}`, detail: `is not on the ${entitlements.planName} plan` }],
      extensions: { upgradeUrl: entitlements.upgradeUrl, feature },
    });
  }
}

export function applyChange(saved: BrandingFields, change: BrandingChange): BrandingFields {
  return {
    displayName: change.displayName !== undefined ? change.displayName : saved.displayName,
    customMessage: change.customMessage !== undefined ? change.customMessage : saved.customMessage,
    footer: change.footer !== undefined ? change.footer : saved.footer,
    removePoweredBy: change.removePoweredBy ?? saved.removePoweredBy,
  };
}
