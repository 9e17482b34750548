/**
 * What the accounts service answers other services about an organization's e-mail branding: the branding every e-mail
 * the organization's recipients get carries (and the logo the hosted pages show). A contract between services, outside
 * the public API.
 *
 *   GET /internal/v1/organizations/{id}/branding → 200 OrganizationBranding
 *
 * The call carries `x-sigil-principal`: a service principal of BRANDING_CALLERS whose `organizationId` is `{id}`; any
 * other principal is 401. The answer is the branding in effect: what the organization saved, limited to what its plan
 * allows today (a plan without `branding` answers no display name, message, footer or logo; `removePoweredBy` needs
 * `whiteLabel`). An organization that saved nothing answers nulls and `removePoweredBy: false`.
 *
 * A cache holds an answer for at most BRANDING_TTL_MS and drops it at once on a notification on
 * `brandingChangedSubject(organizationId)` (plain NATS, best effort: the TTL bounds a lost one), which accounts sends
 * after every committed change of branding or logo; a plan change (billing's `entitlementsChangedSubject`) drops it too.
 */
export const INTERNAL_ORGANIZATIONS_PREFIX = '/internal/v1/organizations';
/** The Express route of the endpoint. */
export const BRANDING_ROUTE = `${INTERNAL_ORGANIZATIONS_PREFIX}/:id/branding`;
export const brandingPath = (organizationId: string): string => `${INTERNAL_ORGANIZATIONS_PREFIX}/${encodeURIComponent(organizationId)}/branding`;

/** The services allowed to call this endpoint (the `actorId` of their service principal). */
export const BRANDING_CALLERS = ['envelopes', 'signing'] as const;

/** How long a service may use an answer without asking again. */
export const BRANDING_TTL_MS = 60_000;

/** The plain-NATS subject accounts notifies on when an organization's branding changed (`*` for every one). */
export const brandingChangedSubject = (organizationId: string): string => `sigil.accounts.branding_changed.${organizationId}`;

export interface OrganizationBranding {
  organizationId: string;
  /** Shown instead of the organization's name: the e-mails' sender name and copy, the hosted pages. */
  displayName: string | null;
  /** Plain text, quoted in the e-mails that ask a recipient to act. */
  customMessage: string | null;
  /** Plain text at the end of every e-mail. */
  footer: string | null;
  /** No "Powered by Sigil" line. */
  removePoweredBy: boolean;
  /** The public URL of the logo (`<publicUrl>/v1/public/logos/{org}/{file}`). */
  logoUrl: string | null;
}
