import { loadConfig, z } from '@sigil/kit/config';

/** The controller's environment, checked once at boot (every problem listed at once). */
export const controllerConfigSchema = z.object({
  /** Where Strata's console API answers (the gateway, or the catalog behind it): `<url>/api/v1/resources`. */
  STRATA_API_URL: z.string().url(),
  /**
   * An access token with the `restorer-admin` role, sent as `cf-access-token` (from a Secret in a cluster). Read
   * once: a 401 ends the process so that the restarted pod reads the Secret again.
   */
  STRATA_API_TOKEN: z.string().min(1).optional(),
  /** A file holding the token (a mounted Secret): read again at every call, so a rotated Secret is used at once. */
  STRATA_API_TOKEN_FILE: z.string().min(1).optional(),
  /** Namespaces whose custom resources are reconciled, comma-separated; empty: every namespace (needs a ClusterRole). */
  WATCH_NAMESPACES: z
    .string()
    .default('')
    .transform((value) => value.split(',').map((ns) => ns.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'namespaces are DNS labels'))),
  LEASE_NAME: z.string().min(1).default('strata-controller'),
  /** The controller's own namespace (the Downward API's metadata.namespace), where its Lease lives. */
  LEASE_NAMESPACE: z.string().min(1).default('strata'),
  LEASE_DURATION_SECONDS: z.coerce.number().int().min(2).default(15),
  /** How often the holder renews; it must be well inside the duration (client-go: 10 s of 15 s). */
  LEASE_RENEW_SECONDS: z.coerce.number().positive().default(5),
  /** This replica's name in the Lease (the Downward API's metadata.name). */
  POD_NAME: z.string().min(1),
  /** First retry of a failed reconcile; doubles per failure up to BACKOFF_MAX_MS, with jitter. */
  BACKOFF_BASE_MS: z.coerce.number().int().positive().default(1000),
  BACKOFF_MAX_MS: z.coerce.number().int().positive().default(300_000),
  /** How often every resource's status is read again from the catalog (its checks and runs change it). */
  RESYNC_SECONDS: z.coerce.number().positive().default(60),
  /** Health endpoints (`/healthz`, `/readyz`); a pod sets HOST=0.0.0.0 for its probes; PORT 0 picks a free port. */
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
})
  // zod checks these once every field is valid on its own.
  .refine((c) => Boolean(c.STRATA_API_TOKEN || c.STRATA_API_TOKEN_FILE), { message: 'set STRATA_API_TOKEN or STRATA_API_TOKEN_FILE', path: ['STRATA_API_TOKEN'] })
  .refine((c) => c.LEASE_RENEW_SECONDS < c.LEASE_DURATION_SECONDS, {
  message: 'LEASE_RENEW_SECONDS must be less than LEASE_DURATION_SECONDS (the holder renews well inside the duration; client-go: 10 s of 15 s)',
  path: ['LEASE_RENEW_SECONDS'],
});

export type ControllerConfig = z.infer<typeof controllerConfigSchema>;

export function loadControllerConfig(env: NodeJS.ProcessEnv = process.env): ControllerConfig {
  return loadConfig(controllerConfigSchema, env);
}
