import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { z } from '@sigil/kit/config';
import { SERVICE_NAMES } from '@sigil/proto/routes';
import { STRATA_ROLES, type StrataRole } from '@sigil/proto/strata';
import type { ServiceTarget, ServiceUrls } from './replicas.ts';
import { DEFAULT_STRATA_CREDENTIAL_NAMES, DEFAULT_STRATA_ROLE_GROUPS, type StrataAuthenticatorOptions, type StrataDefaultRole } from './strata-auth.ts';

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

/** A service's base URL, or the base URLs of its replicas (requests go round robin over them). */
const serviceTarget = z.union([z.string().url(), z.array(z.string().url()).min(1)]);

const serviceUrls = jsonObject('service name -> base URL or [base URL of each replica]').pipe(
  z.record(z.string(), serviceTarget).superRefine((urls, ctx) => {
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

/** An unset variable and an empty one mean the same (compose files often write `NAME=`). */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

/** Comma-separated, trimmed, no empty entries. */
const commaList = z
  .string()
  .transform((text) => text.split(',').map((item) => item.trim()))
  .refine((items) => items.every((item) => item !== ''), 'must be a comma-separated list without empty entries');

const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const headerName = z.string().regex(HTTP_TOKEN, 'must be a valid header name');
const cookieName = z.string().regex(HTTP_TOKEN, 'must be a valid cookie name');

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const jwksUrl = z
  .string()
  .url()
  .refine((text) => {
    const url = new URL(text);
    return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
  }, 'must be an https URL (http only on loopback)');

const inlineJwks = jsonObject('JSON Web Key Set').superRefine((value, ctx) => {
  const keys = (value as { keys?: unknown }).keys;
  if (!Array.isArray(keys) || keys.length === 0) {
    ctx.addIssue({ code: 'custom', message: 'must be a JSON Web Key Set with at least one key ({"keys":[...]})' });
    return;
  }
  if (keys.some((key) => key && typeof key === 'object' && 'd' in key)) {
    ctx.addIssue({ code: 'custom', message: 'must hold public keys only' });
    return;
  }
  try {
    createLocalJWKSet(value as unknown as JSONWebKeySet);
    for (const key of keys) createPublicKey({ key: key as JsonWebKey, format: 'jwk' });
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `is not a valid JSON Web Key Set: ${(error as Error).message}` });
  }
});

const roleGroups = jsonObject('group -> Strata role').pipe(z.record(z.string().min(1), z.enum(STRATA_ROLES)));

export const gatewayConfigSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535),
  SERVICE_URLS: serviceUrls,
  INTERNAL_JWT_PRIVATE_KEY: privateJwk,
  NATS_URL: z.string().min(1),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `true` when a load balancer in front sets x-forwarded-*. */
  /** Proxies in front of the gateway whose X-Forwarded-For hops are believed. `TRUST_PROXY=true` is the older spelling of 1. */
  TRUSTED_PROXIES: optional(z.coerce.number().int().min(0).max(10)),
  TRUST_PROXY: z.enum(['true', 'false']).default('false').transform((value) => value === 'true'),
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().min(1).max(50).default(8),
  GRAPHQL_MAX_COST: z.coerce.number().int().min(1).default(5000),
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(0).default(15),
  NODE_ENV: optional(z.string()),
  /** The dashboard's built files served at /app; default apps/dashboard/dist (benches serve a private build). */
  DASHBOARD_DIST_DIR: optional(z.string().min(1)),
  /** The Strata console's built files served at /console; default apps/console/dist. */
  CONSOLE_DIST_DIR: optional(z.string().min(1)),

  // Strata (console API under /api/v1)
  /** Base URL of backup-catalog (all of /api/v1 but the sandboxes); same as SERVICE_URLS["backup-catalog"]. */
  BACKUP_CATALOG_URL: optional(z.string().url()),
  /** Base URL of sandbox (/api/v1/sandboxes and below); unset: those paths are 404. */
  SANDBOX_URL: optional(z.string().url()),
  /** Issuer(s) of the access proxy's JWT, comma-separated. Unset: Strata authentication is off (401). */
  STRATA_ACCESS_ISSUER: optional(commaList),
  /** Accepted audience(s), comma-separated; the dev issuer uses the first. */
  STRATA_ACCESS_AUDIENCE: optional(commaList).transform((value) => value ?? ['strata']),
  STRATA_ACCESS_JWKS_URL: optional(jwksUrl),
  STRATA_ACCESS_JWKS: optional(inlineJwks),
  STRATA_ACCESS_JWT_HEADER: optional(headerName).transform((value) => value ?? DEFAULT_STRATA_CREDENTIAL_NAMES.jwtHeader),
  STRATA_ACCESS_TOKEN_HEADER: optional(headerName).transform((value) => value ?? DEFAULT_STRATA_CREDENTIAL_NAMES.tokenHeader),
  STRATA_ACCESS_COOKIE: optional(cookieName).transform((value) => value ?? DEFAULT_STRATA_CREDENTIAL_NAMES.cookie),
  STRATA_GROUPS_CLAIM: optional(z.string().min(1)).transform((value) => value ?? 'groups'),
  STRATA_ROLE_GROUPS: optional(roleGroups).transform((value): Record<string, StrataRole> => value ?? { ...DEFAULT_STRATA_ROLE_GROUPS }),
  STRATA_DEFAULT_ROLE: optional(z.enum([...STRATA_ROLES, 'none'])).transform((value): StrataDefaultRole => value ?? 'viewer'),
  /** Local stack only: mint access tokens at POST /api/dev/token. Refused with NODE_ENV=production. */
  STRATA_DEV_ISSUER: optional(z.enum(['true', 'false'])).transform((value) => value === 'true'),
  STRATA_DEV_ISSUER_KEY: optional(privateJwk),
}).superRefine((config, ctx) => {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  if (config.STRATA_DEV_ISSUER && config.NODE_ENV === 'production') {
    issue('STRATA_DEV_ISSUER', 'the dev issuer cannot be enabled with NODE_ENV=production');
  }
  if (config.STRATA_DEV_ISSUER_KEY && !config.STRATA_DEV_ISSUER) issue('STRATA_DEV_ISSUER_KEY', 'is only used with STRATA_DEV_ISSUER=true');
  const keySets = [config.STRATA_ACCESS_JWKS_URL, config.STRATA_ACCESS_JWKS].filter(Boolean).length;
  if (config.STRATA_ACCESS_ISSUER && keySets === 0) {
    issue('STRATA_ACCESS_ISSUER', 'needs the issuer\'s keys: STRATA_ACCESS_JWKS_URL or STRATA_ACCESS_JWKS');
  }
  if (keySets === 2) issue('STRATA_ACCESS_JWKS', 'set STRATA_ACCESS_JWKS_URL or STRATA_ACCESS_JWKS, not both');
  if (!config.STRATA_ACCESS_ISSUER && keySets > 0) issue('STRATA_ACCESS_ISSUER', 'is required when a Strata key set is configured');
  for (const [variable, service] of [['BACKUP_CATALOG_URL', 'backup-catalog'], ['SANDBOX_URL', 'sandbox']] as const) {
    const fromList = (config.SERVICE_URLS as Record<string, ServiceTarget>)[service];
    if (config[variable] && fromList && String(fromList) !== config[variable]) {
      issue(variable, `disagrees with SERVICE_URLS["${service}"]; set one of them`);
    }
  }
});

export type GatewayConfig = z.infer<typeof gatewayConfigSchema> & { SERVICE_URLS: ServiceUrls };

/** SERVICE_URLS with BACKUP_CATALOG_URL and SANDBOX_URL merged in. */
export function serviceUrlsOf(config: GatewayConfig): ServiceUrls {
  const urls: ServiceUrls = { ...config.SERVICE_URLS };
  if (config.BACKUP_CATALOG_URL) urls['backup-catalog'] = config.BACKUP_CATALOG_URL;
  if (config.SANDBOX_URL) urls.sandbox = config.SANDBOX_URL;
  return urls;
}

/** The Strata authenticator's options, or undefined when Strata authentication is not configured. */
export function strataAuthOptionsOf(
  config: GatewayConfig,
  devIssuer?: StrataAuthenticatorOptions['extraIssuer'],
): StrataAuthenticatorOptions | undefined {
  if (!config.STRATA_ACCESS_ISSUER && !devIssuer) return undefined;
  return {
    issuers: config.STRATA_ACCESS_ISSUER ?? [],
    audiences: config.STRATA_ACCESS_AUDIENCE,
    ...(config.STRATA_ACCESS_JWKS_URL ? { jwksUrl: config.STRATA_ACCESS_JWKS_URL } : {}),
    ...(config.STRATA_ACCESS_JWKS ? { jwks: config.STRATA_ACCESS_JWKS as unknown as JSONWebKeySet } : {}),
    ...(devIssuer ? { extraIssuer: devIssuer } : {}),
    jwtHeader: config.STRATA_ACCESS_JWT_HEADER,
    tokenHeader: config.STRATA_ACCESS_TOKEN_HEADER,
    cookie: config.STRATA_ACCESS_COOKIE,
    groupsClaim: config.STRATA_GROUPS_CLAIM,
    roleGroups: config.STRATA_ROLE_GROUPS,
    defaultRole: config.STRATA_DEFAULT_ROLE,
  };
}
