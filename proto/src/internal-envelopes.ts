/**
 * What the envelopes service answers the signing service: a contract between services, outside the public API.
 * Envelopes owns envelopes, recipients, their state machine and the signing-session tokens (`sgls_`) it mints; signing
 * owns the signer's side (access tokens `sgla_`, one-time codes, attachments) and calls these endpoints for the rest.
 *
 * Every call carries `x-sigil-principal`: a service principal (`kind: 'service'`, `actorId: 'signing'`) signed with the
 * internal key; any other caller is 401. Errors are problem+json.
 *
 *   POST /internal/v1/signing-tokens/exchange  { tokenHash }              → 200 ExchangedSession | 401 (unknown, used, revoked, expired)
 *   GET  /internal/v1/envelopes/{id}/recipients/{rid}/signer-view         → 200 SignerView
 *   GET  /internal/v1/envelopes/{id}/recipients/{rid}/document            → 200 application/pdf (earlier recipients' values stamped)
 *   POST /internal/v1/envelopes/{id}/recipients/{rid}/viewed              → 204 (the first call records `recipient.viewed`)
 *   POST /internal/v1/envelopes/{id}/recipients/{rid}/submit   SubmitValues   → 200 SignerOutcome | 400 | 409
 *   POST /internal/v1/envelopes/{id}/recipients/{rid}/decline  { reason }     → 200 SignerOutcome | 409
 *
 * A recipient that is not the envelope's, or an envelope of another organization than the principal's, is 404. Submit
 * and decline are 409 `not-recipients-turn` when it is not (or no longer) the recipient's turn, and 409 `conflict` after
 * the recipient already signed or declined.
 */
export const INTERNAL_ENVELOPES_PREFIX = '/internal/v1';
export const EXCHANGE_TOKEN_PATH = `${INTERNAL_ENVELOPES_PREFIX}/signing-tokens/exchange`;

const recipientPath = (envelopeId: string, recipientId: string) =>
  `${INTERNAL_ENVELOPES_PREFIX}/envelopes/${encodeURIComponent(envelopeId)}/recipients/${encodeURIComponent(recipientId)}`;
export const signerViewPath = (envelopeId: string, recipientId: string) => `${recipientPath(envelopeId, recipientId)}/signer-view`;
export const signerDocumentPath = (envelopeId: string, recipientId: string) => `${recipientPath(envelopeId, recipientId)}/document`;
export const signerViewedPath = (envelopeId: string, recipientId: string) => `${recipientPath(envelopeId, recipientId)}/viewed`;
export const signerSubmitPath = (envelopeId: string, recipientId: string) => `${recipientPath(envelopeId, recipientId)}/submit`;
export const signerDeclinePath = (envelopeId: string, recipientId: string) => `${recipientPath(envelopeId, recipientId)}/decline`;

/** The services allowed to call these endpoints. */
export const ENVELOPE_CALLERS = ['signing', 'evidence'] as const;

/**
 * For the evidence service, which seals:
 *   GET /internal/v1/envelopes/{id}/completed-document   → 200 application/pdf (the original with every value stamped)
 *   PUT /internal/v1/envelopes/{id}/certificate-document application/pdf → 204 (kept; served as version=certificate)
 *   PUT /internal/v1/envelopes/{id}/sealed-document      application/pdf → 204 (kept; `seal` becomes `sealed`, `envelope.sealed`)
 *   PUT /internal/v1/envelopes/{id}/seal-failure         { reason }      → 204 (`seal` becomes `failed` unless already sealed)
 * All are 409 `document-not-ready` before the envelope is completed. Evidence hands the certificate first, so an
 * envelope whose seal is `sealed` has both.
 */
export const completedDocumentPath = (envelopeId: string) => `${INTERNAL_ENVELOPES_PREFIX}/envelopes/${encodeURIComponent(envelopeId)}/completed-document`;
export const certificateDocumentPath = (envelopeId: string) => `${INTERNAL_ENVELOPES_PREFIX}/envelopes/${encodeURIComponent(envelopeId)}/certificate-document`;
export const sealFailurePath = (envelopeId: string) => `${INTERNAL_ENVELOPES_PREFIX}/envelopes/${encodeURIComponent(envelopeId)}/seal-failure`;
export const sealedDocumentPath = (envelopeId: string) => `${INTERNAL_ENVELOPES_PREFIX}/envelopes/${encodeURIComponent(envelopeId)}/sealed-document`;

export interface ExchangeTokenRequest {
  /** SHA-256 (lower-case hex) of the `sgls_` token: raw tokens never leave the service that received them. */
  tokenHash: string;
}

export interface ExchangedSession {
  organizationId: string;
  testMode: boolean;
  envelopeId: string;
  recipientId: string;
  /** `link` (e-mailed) or `session` (minted through the API for hosted or embedded signing). */
  purpose: 'link' | 'session';
  /** The envelope's own expiry: an access token never outlives it. */
  envelopeExpiresAt: string;
}

export type SignerFieldType = 'signature' | 'initials' | 'text' | 'date' | 'checkbox' | 'attachment';

export interface SignerField {
  id: string;
  role: string;
  type: SignerFieldType;
  required: boolean;
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
  /** Filled from the envelope's variables, read-only for signers. */
  readOnly: boolean;
  /** The value already there: a variable's, or an earlier recipient's (a drawn signature as `{ kind, sha256 }`). */
  value: unknown;
}

/** What the signer sees (`GET /v1/signing/session`, before signing's own members are added). */
export interface SignerView {
  envelope: {
    id: string;
    status: string;
    testMode: boolean;
    title: string;
    organizationId: string;
    /** The sender's name, as e-mails show it. */
    organizationName: string;
    expiresAt: string;
    pageCount: number;
    pages: Array<{ width: number; height: number }>;
  };
  recipient: {
    id: string;
    role: string;
    name: string;
    email: string;
    phone: string | null;
    status: string;
    verification: 'none' | 'email' | 'sms';
    delivery: 'email' | 'embedded';
    /** Whether the address is a member's of the organization: test-mode e-mail goes to members only. */
    member: boolean;
  };
  /** Whether the recipient may sign now. */
  yourTurn: boolean;
  /** The recipient's own fields first, then the others' (read-only), each with its position. */
  fields: SignerField[];
}

/** The values a recipient submits, by field id (api-decisions.md, `POST /v1/signing/submit`), already checked by signing for shape. */
export interface SubmitValues {
  fields: Record<string, unknown>;
  consent: boolean;
  /** The signer's address and user agent, for the audit trail. */
  from: string;
  userAgent: string;
}

export interface SignerOutcome {
  recipientStatus: string;
  envelopeStatus: string;
}
