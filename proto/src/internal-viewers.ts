/**
 * What the envelopes service answers the signing service about viewers: a contract between services, outside the public
 * API. Envelopes owns viewers, their e-mailed link tokens (`sglv_`) and their access tokens (`sglva_`), both kept as
 * SHA-256 only, so revoking a viewer stops every credential of it at once in one database. Signing owns `/v1/viewer/*`:
 * it mints the raw access token, hands envelopes only its hash, and asks envelopes for everything a viewer reads.
 *
 * Every call carries `x-sigil-principal`: a service principal (`kind: 'service'`, `actorId: 'signing'`) signed with the
 * internal key; any other caller is 401. Errors are problem+json.
 *
 *   POST /internal/v1/viewer-tokens/exchange  ViewerExchangeRequest              → 200 ViewerGrant | 401
 *   POST /internal/v1/viewer-tokens/resolve   { accessTokenHash }                → 200 ViewerGrant | 401
 *   GET  /internal/v1/envelopes/{id}/viewers/{vid}/envelope                      → 200 ViewerEnvelopeView | 401
 *   POST /internal/v1/envelopes/{id}/viewers/{vid}/opened                        → 204 (the first call records `viewer.opened`) | 401
 *   GET  /internal/v1/envelopes/{id}/viewers/{vid}/document                      → 200 application/pdf | 401 | 403 | 409
 *
 * A link token exchanges (as often as wanted) while its viewer is not revoked and the envelope is not more than
 * {@link VIEWER_GRACE_DAYS} days past its end; the end is when it completed, or when it was voided, declined or expired
 * (`completedAt`, else `endedAt`); an envelope in progress has not ended. An access token lives
 * {@link VIEWER_ACCESS_TTL_SECONDS} and resolves under the same two conditions. The three envelope endpoints answer 401
 * for a viewer that is revoked or past the grace period (as if its token had stopped), and 404 for a viewer that is not
 * the envelope's or an envelope of another organization than the principal's.
 */
export const INTERNAL_VIEWERS_PREFIX = '/internal/v1';
export const VIEWER_EXCHANGE_PATH = `${INTERNAL_VIEWERS_PREFIX}/viewer-tokens/exchange`;
export const VIEWER_RESOLVE_PATH = `${INTERNAL_VIEWERS_PREFIX}/viewer-tokens/resolve`;

const viewerPath = (envelopeId: string, viewerId: string) =>
  `${INTERNAL_VIEWERS_PREFIX}/envelopes/${encodeURIComponent(envelopeId)}/viewers/${encodeURIComponent(viewerId)}`;
export const viewerEnvelopePath = (envelopeId: string, viewerId: string) => `${viewerPath(envelopeId, viewerId)}/envelope`;
export const viewerOpenedPath = (envelopeId: string, viewerId: string) => `${viewerPath(envelopeId, viewerId)}/opened`;
export const viewerDocumentPath = (envelopeId: string, viewerId: string) => `${viewerPath(envelopeId, viewerId)}/document`;

/** The services allowed to call these endpoints. */
export const VIEWER_CALLERS = ['signing'] as const;

/** How long after its end an envelope's viewers can still open it. */
export const VIEWER_GRACE_DAYS = 30;
/** Lifetime of a viewer access token. */
export const VIEWER_ACCESS_TTL_SECONDS = 3600;

export interface ViewerExchangeRequest {
  /** SHA-256 (lower-case hex) of the `sglv_` link token from the viewer's e-mail. */
  linkTokenHash: string;
  /** SHA-256 of the `sglva_` access token signing minted for this exchange (the raw token never leaves signing). */
  accessTokenHash: string;
}

export interface ViewerResolveRequest {
  accessTokenHash: string;
}

/** Who a viewer token stands for, and until when. */
export interface ViewerGrant {
  organizationId: string;
  testMode: boolean;
  envelopeId: string;
  viewerId: string;
  documentAccess: boolean;
  /** When the access token stops (at most {@link VIEWER_ACCESS_TTL_SECONDS} after the exchange). */
  expiresAt: string;
}

/**
 * What a viewer reads (the contract's ViewerEnvelope): the envelope's status, its title, and each recipient's role,
 * name, status and when they signed; never anyone's e-mail address, never a field value.
 */
export interface ViewerEnvelopeView {
  object: 'viewer_envelope';
  id: string;
  status: 'rendering' | 'sent' | 'completed' | 'declined' | 'voided' | 'expired';
  seal: 'not_started' | 'pending' | 'sealed' | 'failed';
  title: string;
  organizationName: string;
  testMode: boolean;
  /** Whether `GET /v1/viewer/document` answers the document now (the viewer's access and a rendered document). */
  documentAvailable: boolean;
  recipients: Array<{ role: string; name: string; status: string; order: number; signedAt: string | null; declinedAt: string | null }>;
  viewer: { id: string; name: string | null; documentAccess: boolean };
  sentAt: string | null;
  completedAt: string | null;
  expiresAt: string;
  createdAt: string;
}
