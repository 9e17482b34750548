import { z } from '@sigil/kit';
import { SERVICE_NAMES, type ServiceName } from '@sigil/proto';

const jsonObject = (what: string) =>
  z.string().transform((text, ctx) => {
    try {
      const value: unknown = JSON.parse(text);
      if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // reported below
    }
    ctx.addIssue({ code: 'custom', message: `must be a JSON object (${what})` });
    return z.NEVER;
  });

const serviceUrls = jsonObject('service name -> base URL').pipe(
  z.record(z.string(), z.string().url()).superRefine((urls, ctx) => {
    for (const name of Object.keys(urls)) {
      if (!(SERVICE_NAMES as readonly string[]).includes(name) || name === 'gateway') {
        ctx.addIssue({ code: 'custom', message: `unknown service ${JSON.stringify(name)}`, path: [name] });
      }
    }
  }),
);

const privateJwk = jsonObject('JWK of the Ed25519 private key').refine(
  (jwk) => jwk.kty === 'OKP' && jwk.crv === 'Ed25519' && typeof jwk.d === 'string' && typeof jwk.x === 'string',
  'must be an Ed25519 private JWK (kty OKP, crv Ed25519, with d and x)',
);

export const gatewayConfigSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535),
  SERVICE_URLS: serviceUrls,
  INTERNAL_JWT_PRIVATE_KEY: privateJwk,
  NATS_URL: z.string().min(1),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `true` when a load balancer in front sets x-forwarded-*. */
  TRUST_PROXY: z.enum(['true', 'false']).default('false').transform((value) => value === 'true'),
});

export type GatewayConfig = z.infer<typeof gatewayConfigSchema> & { SERVICE_URLS: Partial<Record<ServiceName, string>> };
