import { baseServiceConfig, z } from '@sigil/kit/config';

export const webhooksConfig = baseServiceConfig.extend({
  /** Seals endpoint secrets at rest: 32 bytes, base64. */
  WEBHOOK_SECRETS_KEY: z.string().min(40),
  /**
   * Origins allowed besides public https (comma-separated, `*` as a port matches any), e.g. the local stack's
   * `http://127.0.0.1:*,http://localhost:*`. Checked at registration and at every delivery.
   */
  WEBHOOK_ALLOWED_ORIGINS: z.string().default(''),
  /** Attempts in flight at once in this process, and at most this many to any one endpoint. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(64),
  WEBHOOK_PER_ENDPOINT_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(4),
  /** The receiver's time to answer (spec: 10 s). */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
});

export type WebhooksConfig = z.infer<typeof webhooksConfig>;

export const allowedOrigins = (value: string): string[] => value.split(',').map((o) => o.trim()).filter(Boolean);
