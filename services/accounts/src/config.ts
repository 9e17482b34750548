import { baseServiceConfig, mailConfigFields, s3ConfigFields, z } from '@sigil/kit/config';

const attemptLimit = z.coerce.number().int().min(1).optional();

/** The accounts service's environment, read once by main.ts. */
export const accountsConfig = baseServiceConfig.extend({
  /** Attempt counts per window (sign-in 15 minutes, sign-up and invitation acceptance 1 hour); defaults in throttle.ts. */
  SIGN_IN_LIMIT_PER_EMAIL_IP: attemptLimit,
  SIGN_IN_LIMIT_PER_IP: attemptLimit,
  SIGN_UP_LIMIT_PER_IP: attemptLimit,
  ACCEPT_INVITATION_LIMIT_PER_IP: attemptLimit,
  /** The gateway's public URL: invitation e-mails link to the dashboard's accept page there. */
  PUBLIC_URL: z.string().url().default('http://127.0.0.1:8080'),
  /** The billing service (internal endpoint: the organization's plan entitlements for SSO, SCIM and branding). */
  BILLING_URL: z.string().url(),
  /** Signs this service's own principal for the internal calls it makes (the deployment's internal key). */
  INTERNAL_JWT_PRIVATE_KEY: z.string().min(1),
  /**
   * SSO: origins an IdP's metadata and OIDC endpoints may use whatever they resolve to, plain http allowed
   * (comma-separated, e.g. `http://127.0.0.1:*` for a local IdP); everything else must be public https.
   */
  SSO_ALLOWED_ORIGINS: z.string().default(''),
  /** SSO: seals OIDC client secrets (32 bytes, base64); without it a key is derived from INTERNAL_JWT_PRIVATE_KEY. */
  SSO_SECRETS_KEY: z.string().min(44).optional(),
  /** Invitation e-mails. */
  ...mailConfigFields,
  /** Organization logos (served publicly at /v1/public/logos). */
  ...s3ConfigFields('sigil-logos'),
});

export type AccountsConfig = z.infer<typeof accountsConfig>;

/** The `create-owner` command's environment: the database alone. */
export const createOwnerConfig = baseServiceConfig.pick({ DATABASE_URL: true });
