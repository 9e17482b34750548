import { baseServiceConfig, z } from '@sigil/kit/config';

export const billingConfig = baseServiceConfig.extend({
  /** The processor's secret API key (the local processor accepts any `sk_test_…` it was started with). */
  PROCESSOR_SECRET_KEY: z.string().min(8),
  /** The secret the processor signs its webhooks with (`whsec_…`). */
  PROCESSOR_WEBHOOK_SECRET: z.string().min(8),
  /**
   * Where the processor's API answers, e.g. the local processor's `http://127.0.0.1:12111`. Empty: the real
   * processor's own address (the SDK's default).
   */
  PROCESSOR_API_URL: z.string().url().or(z.literal('')).default(''),
  /** The dashboard's public address (`https://app.sigil.dev`): upgrade links and checkout's return addresses. */
  DASHBOARD_URL: z.string().url(),
  /** How often usage beyond the included envelopes, and add-ons, are reported to the processor as metered usage. */
  METER_REPORT_INTERVAL_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(60_000),
  /** Completion events counted at once by this replica. */
  USAGE_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(32),
});

export type BillingConfig = z.infer<typeof billingConfig>;

/** The SDK's `host`, `port` and `protocol` for an API address; none for the real processor. */
export function processorAddress(url: string): { host?: string; port?: number; protocol?: 'http' | 'https' } {
  if (!url) return {};
  const parsed = new URL(url);
  const protocol = parsed.protocol === 'http:' ? 'http' : 'https';
  return { host: parsed.hostname, port: parsed.port ? Number(parsed.port) : protocol === 'http' ? 80 : 443, protocol };
}
