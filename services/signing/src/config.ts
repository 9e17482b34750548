import { baseServiceConfig, z } from '@sigil/kit/config';

export const signingConfig = baseServiceConfig.extend({
  /** The envelopes service (internal endpoints: token exchange, the signer's view and document, submit, decline). */
  ENVELOPES_URL: z.string().url(),
  /** Signs this service's own principal for the internal calls it makes (the deployment's internal key). */
  INTERNAL_JWT_PRIVATE_KEY: z.string().min(1),
  /** Lifetime of a signer's access token (never beyond the envelope's expiry). */
  ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(1800),
});

export type SigningConfig = z.infer<typeof signingConfig>;
