import { z } from 'zod/v3';

/** Validates the environment once at boot; a bad value stops the process with every problem listed. */
export function loadConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
}

/** Fields every service shares. */
export const baseServiceConfig = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535),
  DATABASE_URL: z.string().url(),
  NATS_URL: z.string().min(1),
  INTERNAL_JWT_PUBLIC_KEY: z.string().min(1).describe('JWK (JSON) of the gateway Ed25519 public key'),
  /** Prefix of durable consumer names; lets isolated stacks (tests) share one NATS server. */
  CONSUMER_PREFIX: z.string().regex(/^[A-Za-z0-9_-]*$/).default(''),
  /**
   * Where this service's new durable consumers of the domain events start: `all` (the stream's history) or `new`.
   * Stacks sharing one broker (test stacks) use `new`, so they do not read each other's events.
   */
  EVENT_CONSUMERS_START_AT: z.enum(['all', 'new']).default('all'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export { z };

/** The S3-compatible store of a service that keeps files (the local stack passes its own); `bucket` is its default. */
export function s3ConfigFields(bucket: string) {
  return {
    S3_ENDPOINT: z.string().url(),
    S3_REGION: z.string().default('us-east-1'),
    S3_ACCESS_KEY: z.string().min(1),
    S3_SECRET_KEY: z.string().min(1),
    S3_BUCKET: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/).default(bucket),
    S3_PATH_STYLE: z.enum(['true', 'false']).default('true').transform((value) => value === 'true'),
  };
}

/** Where a service that sends e-mail sends it (the local stack's SMTP sink, or any SMTP server) and who it is from. */
export const mailConfigFields = {
  SMTP_URL: z.string().regex(/^smtps?:\/\//, 'an smtp:// or smtps:// URL'),
  MAIL_FROM: z.string().min(3).default('Sigil <no-reply@sigil.local>'),
};
