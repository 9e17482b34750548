import { baseServiceConfig, mailConfigFields, s3ConfigFields, z } from '@sigil/kit/config';

export const envelopesConfig = baseServiceConfig.extend({
  ...s3ConfigFields('sigil-envelopes'),
  /** The templates service (internal endpoints: version snapshots, recorded uses, version PDFs). */
  TEMPLATES_URL: z.string().url(),
  /** The billing service (internal endpoint: the organization's plan entitlements, checked before a send). */
  BILLING_URL: z.string().url(),
  /** The accounts service (internal endpoint: the organization's e-mail branding; e-mails go out unbranded without it). */
  ACCOUNTS_URL: z.string().url(),
  /** Signs this service's own principal for the internal calls it makes (the deployment's internal key). */
  INTERNAL_JWT_PRIVATE_KEY: z.string().min(1),
  /** An envelope's lifetime when the request names no `expiresAt`. */
  ENVELOPE_DEFAULT_EXPIRY_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  /** Renders at once in this process. */
  RENDER_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(2),
  /** Lifetime of a signing session minted through the API. */
  SESSION_TTL_SECONDS: z.coerce.number().int().min(30).max(86_400).default(300),
  /** The public base URL (the gateway's) of the hosted signing page, for e-mailed links and sessions' `url`. */
  PUBLIC_URL: z.string().url().default('http://127.0.0.1:8080'),
  /** The recipients' e-mails. */
  ...mailConfigFields,
  /** How often due work (expiry) is looked for. */
  SCHEDULER_INTERVAL_MS: z.coerce.number().int().min(100).default(5000),
});

export type EnvelopesConfig = z.infer<typeof envelopesConfig>;
