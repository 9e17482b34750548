/**
 * What the templates service answers other services (envelopes, and signing links later): a contract between services,
 * outside the public API.
 *
 * Every call carries `x-sigil-principal`: a token signed with the internal key whose principal has `kind: 'service'`,
 * `actorId` one of TEMPLATE_CALLERS, and the `organizationId` and `mode` of the caller it acts for. Any other principal
 * is 401. A template of another organization, a deleted one and a version that does not exist are all 404 (problem+json,
 * `not-found`); a version that is not published (the draft) is never answered.
 *
 *   GET  /internal/v1/templates/{templateId}/versions/{version}            → 200 TemplateVersionSnapshot
 *   POST /internal/v1/templates/{templateId}/uses   RecordTemplateUse      → 200 TemplateVersionSnapshot
 *   GET  /internal/v1/templates/{templateId}/versions/{number}/document    → 200 application/pdf (the version's PDF)
 *
 * `{version}` is a number or `latest` (the newest published version). `uses` records that an envelope or signing link
 * used the template, in the same transaction that reads the version under a lock on the template's row, so a delete
 * running at the same time either happens first (then 404) or sees the use (then 409 for the delete). Recording the
 * same use again is harmless. The document of a document-mode version is its PDF printed at publish.
 */
export const INTERNAL_TEMPLATES_PREFIX = '/internal/v1/templates';

export const templateVersionPath = (templateId: string, version: string | number) =>
  `${INTERNAL_TEMPLATES_PREFIX}/${encodeURIComponent(templateId)}/versions/${encodeURIComponent(String(version))}`;
export const templateUsesPath = (templateId: string) => `${INTERNAL_TEMPLATES_PREFIX}/${encodeURIComponent(templateId)}/uses`;
export const templateDocumentPath = (templateId: string, version: number) => `${templateVersionPath(templateId, version)}/document`;

/** The services allowed to call these endpoints (the `actorId` of their service principal). */
export const TEMPLATE_CALLERS = ['envelopes', 'signing'] as const;
export type TemplateCaller = (typeof TEMPLATE_CALLERS)[number];

export type TemplateFieldType = 'signature' | 'initials' | 'text' | 'date' | 'checkbox' | 'attachment';

export interface TemplateRole {
  name: string;
  order: number;
}

/** A field of a published version. Every field of a published version has its position (document mode: found at publish). */
export interface TemplateField {
  id: string;
  role: string;
  type: TemplateFieldType;
  required: boolean;
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
  /** A text field filled from this envelope variable (read-only for signers). */
  variable?: string;
  label?: string;
}

export interface TemplateVariable {
  name: string;
  required: boolean;
  label?: string;
}

export interface TemplateVersionSnapshot {
  templateId: string;
  templateName: string;
  version: number;
  roles: TemplateRole[];
  fields: TemplateField[];
  variables: TemplateVariable[];
  pageCount: number;
  /** Each page's size in PDF points. */
  pages: Array<{ width: number; height: number }>;
  /** SHA-256 (hex) of the version's PDF, as the document endpoint answers it. */
  sha256: string;
  publishedAt: string;
}

export interface RecordTemplateUse {
  /** A number or `latest`. */
  version: number | 'latest';
  usedBy: { kind: 'envelope' | 'signing_link'; id: string };
}
