import { baseServiceConfig, z } from '@sigil/kit/config';

const attemptLimit = z.coerce.number().int().min(1).optional();

/** The accounts service's environment, read once by main.ts. */
export const accountsConfig = baseServiceConfig.extend({
  /** Attempt counts per window (sign-in 15 minutes, sign-up and invitation acceptance 1 hour); defaults in throttle.ts. */
  SIGN_IN_LIMIT_PER_EMAIL_IP: attemptLimit,
  SIGN_IN_LIMIT_PER_IP: attemptLimit,
  SIGN_UP_LIMIT_PER_IP: attemptLimit,
  ACCEPT_INVITATION_LIMIT_PER_IP: attemptLimit,
});

export type AccountsConfig = z.infer<typeof accountsConfig>;

/** The `create-owner` command's environment: the database alone. */
export const createOwnerConfig = baseServiceConfig.pick({ DATABASE_URL: true });
