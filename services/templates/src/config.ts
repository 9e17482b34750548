import { baseServiceConfig, s3ConfigFields, z } from '@sigil/kit/config';

const MIB = 1024 * 1024;

export const templatesConfig = baseServiceConfig.extend({
  ...s3ConfigFields('sigil-templates'),
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
