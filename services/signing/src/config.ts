import { baseServiceConfig, mailConfigFields, s3ConfigFields, z } from '@sigil/kit/config';

export const signingConfig = baseServiceConfig.extend({
  /** The envelopes service (internal endpoints: token exchange, the signer's view and document, submit, decline). */
  ENVELOPES_URL: z.string().url(),
  /** The accounts service (internal endpoint: the organization's e-mail branding and logo; unbranded without it). */
  ACCOUNTS_URL: z.string().url(),
  /** Signs this service's own principal for the internal calls it makes (the deployment's internal key). */
  INTERNAL_JWT_PRIVATE_KEY: z.string().min(1),
  /** Lifetime of a signer's access token (never beyond the envelope's expiry). */
  ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(1800),
  ...s3ConfigFields('sigil-attachments'),
  /** One-time codes by e-mail. */
  ...mailConfigFields,
  /** One-time codes by SMS: `inbox` (the local stack: into the SMTP inbox) or `http` (a Twilio-style REST API). */
  SMS_PROVIDER: z.enum(['inbox', 'http']).default('inbox'),
  SMS_API_URL: z.string().url().optional(),
  SMS_ACCOUNT_ID: z.string().optional(),
  SMS_AUTH_TOKEN: z.string().optional(),
  SMS_FROM: z.string().optional(),
  /** The largest attachment, in bytes (413 above it). */
  ATTACHMENT_MAX_BYTES: z.coerce.number().int().min(1024).default(10 * 1024 * 1024),
});

export type SigningConfig = z.infer<typeof signingConfig>;
