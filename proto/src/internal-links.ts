/**
 * What the envelopes service answers the signing service about always-on signing links: a contract between services,
 * outside the public API. Envelopes owns the links (`lnk_`), their usage and the envelopes they create; signing owns the
 * public side (`/v1/links/*`): the visitor's e-mail check (`lvf_`), the per-address caps, and calls these endpoints.
 *
 * Every call carries a service principal with `actorId: 'signing'`; any other caller is 401. A link is found by its id
 * alone (the visitor names no organization: signing calls as the organization `platform`, as for token exchange).
 *
 *   GET  /internal/v1/signing-links/{id}            → 200 LinkForVisitor | 404 (unknown or deleted)
 *   POST /internal/v1/signing-links/{id}/envelopes  VisitorEnvelopeRequest → 201 VisitorEnvelope
 *        | 404 | 409 `link-paused` | 402 `payment-required` (a live link of a plan whose included envelopes are used)
 *        | 403 `plan-upgrade-required` (the plan lost `signingLinks`) | 429 `rate-limited` (`dailyCap`; `retry-after`)
 */
import type { components } from './gen/sigil-api.ts';

export const INTERNAL_LINKS_PREFIX = '/internal/v1/signing-links';
export const linkForVisitorPath = (linkId: string) => `${INTERNAL_LINKS_PREFIX}/${encodeURIComponent(linkId)}`;
export const visitorEnvelopePath = (linkId: string) => `${INTERNAL_LINKS_PREFIX}/${encodeURIComponent(linkId)}/envelopes`;

/** The services allowed to call these endpoints. */
export const LINK_CALLERS = ['signing'] as const;

export interface SigningLinkLimits {
  perEmailPerDay: number;
  perIpPerHour: number;
  dailyCap: number | null;
}

/** A field the visitor will fill once signing (their role's, read from the pinned template version). */
export interface VisitorField {
  id: string;
  type: 'signature' | 'initials' | 'text' | 'date' | 'checkbox' | 'attachment';
  required: boolean;
  label: string | null;
}

/** A link as signing needs it: what the visitor sees, and what the caps are. */
export interface LinkForVisitor {
  id: string;
  organizationId: string;
  testMode: boolean;
  status: 'active' | 'paused';
  title: string;
  organizationName: string;
  logoUrl: string | null;
  fields: VisitorField[];
  limits: SigningLinkLimits;
  /** Envelopes created through the link today (UTC day). */
  usedToday: number;
}

export interface VisitorEnvelopeRequest {
  /** The verified visitor: they become the recipient of the link's role (embedded delivery). */
  name: string;
  email: string;
  /** The public base URL the visitor reached (the session's hosted signing page is under it). */
  publicUrl: string;
}

export interface VisitorEnvelope {
  envelopeId: string;
  recipientId: string;
  /** A signing session for the visitor, as `POST /v1/envelopes/{id}/sessions` answers it. */
  session: components['schemas']['SigningSession'];
}
