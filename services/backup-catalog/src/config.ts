import { baseServiceConfig, z } from '@sigil/kit/config';

export const catalogConfig = baseServiceConfig.extend({
  /** 32 bytes, base64: seals the secret store and the jobs sent to movers (the mover holds the same key). */
  STRATA_SECRETS_KEY: z.string().min(44),
  /** The console's public address, reported by whoami; without it, the address the caller used (x-forwarded-host). */
  STRATA_EXTERNAL_URL: z.string().url().optional(),
  SCHEDULER_INTERVAL_MS: z.coerce.number().int().min(100).default(1000),
  MIRROR_INTERVAL_MS: z.coerce.number().int().min(1000).default(300_000),
  /** Retention runs when the catalog changed, and at least this often (calendar buckets roll over). */
  RETENTION_INTERVAL_MS: z.coerce.number().int().min(1000).default(60_000),
  /** A store with nothing known to collect is still swept this often (objects a failed run's cleanup left). */
  GC_INTERVAL_MS: z.coerce.number().int().min(60_000).default(6 * 3600_000),
  /** Garbage younger than this stays for a later pass: the store's clock may differ from the catalog's. */
  GC_SKEW_MARGIN_MS: z.coerce.number().int().min(0).default(60_000),
  /** Lifetime of presigned download URLs, in seconds. */
  DOWNLOAD_URL_TTL_SECONDS: z.coerce.number().int().min(60).max(7 * 24 * 3600).default(3600),
});

export type CatalogConfig = z.infer<typeof catalogConfig>;
