import { baseServiceConfig, z } from '@sigil/kit/config';

const MIB = 1024 * 1024;

export const templatesConfig = baseServiceConfig.extend({
  /** Where template files are stored (S3-compatible; the local stack passes its own). */
  S3_ENDPOINT: z.string().url(),
  S3_REGION: z.string().default('us-east-1'),
  S3_ACCESS_KEY: z.string().min(1),
  S3_SECRET_KEY: z.string().min(1),
  S3_BUCKET: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/).default('sigil-templates'),
  S3_PATH_STYLE: z.enum(['true', 'false']).default('true').transform((value) => value === 'true'),
  /** Largest upload, in bytes (413 above it). */
  TEMPLATE_FILE_MAX_BYTES: z.coerce.number().int().min(1024).default(25 * MIB),
  TEMPLATE_FILE_MAX_PAGES: z.coerce.number().int().min(1).default(500),
  /** LibreOffice conversions at once, and how long one may take. */
  CONVERSION_WORKERS: z.coerce.number().int().min(1).max(16).default(2),
  CONVERSION_TIMEOUT_MS: z.coerce.number().int().min(1000).default(60_000),
  /** Debian's Chromium, which prints document-mode bodies at publish (never a downloaded browser). */
  CHROMIUM_PATH: z.string().default('/usr/bin/chromium'),
});

export type TemplatesConfig = z.infer<typeof templatesConfig>;
