/**
 * How a setting reaches a process, and the settings several services share (`baseServiceConfig`, `s3ConfigFields`,
 * `mailConfigFields` in packages/kit/src/config.ts). Every value comes from one ConfigMap or one Secret per service.
 */
import { natsUrlOf, type Overlay } from '../overlay.ts';
import { HTTP_PORT } from '../workloads.ts';

export type SettingSource =
  /** A value in the service's ConfigMap; `undefined` leaves the service's own default. */
  | { kind: 'config'; value: (overlay: Overlay) => string | undefined }
  /** A key of a Secret the operator creates (secrets.template.yaml lists them); `example` passes the service's schema. */
  | { kind: 'secret'; secret: string; key: string; example: string | ((overlay: Overlay) => string); optional?: boolean }
  /** The Downward API (the pod's own name or namespace). */
  | { kind: 'field'; fieldPath: 'metadata.name' | 'metadata.namespace' }
  /** Never set here: the service's default is right everywhere (documented so every setting is in one place). */
  | { kind: 'default'; value: string };

export interface Setting {
  name: string;
  doc: string;
  source: SettingSource;
  /** Read by Node or libc, not by the service's config schema. */
  runtime?: boolean;
  /** Set only in the overlays this answers true for (e.g. the dev issuer's key on local clusters). */
  when?: (overlay: Overlay) => boolean;
}

/** The settings an overlay sets for a workload (all but those whose `when` leaves them out). */
export const appliesTo = (setting: Setting, overlay: Overlay) => !setting.when || setting.when(overlay);

/** The Secrets of the platform, by purpose. A service's database URL is in `<service>-database`. */
export const SECRETS = {
  internalJwt: 'sigil-internal-jwt',
  strataSecretsKey: 'strata-secrets-key',
  s3: 's3-credentials',
  smtp: 'smtp',
  processor: 'billing-processor',
  sealing: 'evidence-sealing',
  webhookSecretsKey: 'webhooks-secrets-key',
  ssoSecretsKey: 'accounts-sso',
  devIssuer: 'gateway-dev-issuer',
  controllerToken: 'strata-controller-token',
} as const;

export const databaseSecretOf = (service: string) => `${service}-database`;

const config = (value: (overlay: Overlay) => string | undefined): SettingSource => ({ kind: 'config', value });
const fixed = (value: string) => config(() => value);
export const secret = (name: string, key: string, example: string | ((overlay: Overlay) => string), optional = false): SettingSource => ({ kind: 'secret', secret: name, key, example, ...(optional ? { optional } : {}) });
export const keep = (value: string): SettingSource => ({ kind: 'default', value });
export { config, fixed };

/** A placeholder Ed25519 JWK with the members the services check (kty, crv, d, x). */
const EXAMPLE_JWK = (withPrivate: boolean) => JSON.stringify({ kty: 'OKP', crv: 'Ed25519', x: 'REPLACE_WITH_PUBLIC_X', ...(withPrivate ? { d: 'REPLACE_WITH_PRIVATE_D' } : {}) });
export const EXAMPLE_PRIVATE_JWK = EXAMPLE_JWK(true);
export const EXAMPLE_SECRETS_KEY = 'REPLACE+WITH+32+RANDOM+BYTES+IN+BASE64+ABCDEF=';

export const internalPrivateKey = (doc = 'Signs this service\'s own principal for the internal calls it makes (the deployment\'s internal Ed25519 key, JWK).'): Setting => ({
  name: 'INTERNAL_JWT_PRIVATE_KEY',
  doc,
  source: secret(SECRETS.internalJwt, 'private-jwk', EXAMPLE_PRIVATE_JWK),
});

export const strataSecretsKey: Setting = {
  name: 'STRATA_SECRETS_KEY',
  doc: '32 bytes, base64: seals the secret store, sandbox passwords and the jobs sent to movers (one key for catalog, mover and sandbox).',
  source: secret(SECRETS.strataSecretsKey, 'key', EXAMPLE_SECRETS_KEY),
};

export const listen: Setting[] = [
  { name: 'HOST', doc: 'Address the HTTP server binds: every interface of the pod.', source: fixed('0.0.0.0') },
  { name: 'PORT', doc: 'Port of the HTTP server (REST, GraphQL, /healthz, /readyz).', source: fixed(String(HTTP_PORT)) },
];

export const logLevel: Setting = { name: 'LOG_LEVEL', doc: 'pino log level.', source: config((overlay) => overlay.logLevel) };
export const natsUrl: Setting = { name: 'NATS_URL', doc: 'NATS JetStream: the in-cluster StatefulSet or an existing cluster.', source: config(natsUrlOf) };
export const consumerPrefix: Setting = { name: 'CONSUMER_PREFIX', doc: 'Prefix of durable consumer names; only test stacks sharing one broker set it.', source: keep('') };

/** `baseServiceConfig`: every Prisma service. */
export const baseSettings = (service: string): Setting[] => [
  ...listen,
  { name: 'DATABASE_URL', doc: `The ${service} database (postgres://user:password@host:port/database). Migrations run in the migrations Job first.`, source: secret(databaseSecretOf(service), 'url', (overlay) => `postgres://${service.replace(/-/g, '_')}:REPLACE@${overlay.postgres.host}:${overlay.postgres.port}/${service.replace(/-/g, '_')}`) },
  natsUrl,
  { name: 'INTERNAL_JWT_PUBLIC_KEY', doc: "The gateway's Ed25519 public key (JWK): verifies the principal tokens of every request.", source: secret(SECRETS.internalJwt, 'public-jwk', EXAMPLE_JWK(false)) },
  consumerPrefix,
  { name: 'EVENT_CONSUMERS_START_AT', doc: 'Where new durable consumers start in the events stream (`all`); `new` is for stacks sharing a broker.', source: keep('all') },
  logLevel,
];

/** `s3ConfigFields`: services that keep files. */
export const s3Settings = (bucket: keyof Overlay['s3']['buckets'], what: string): Setting[] => [
  { name: 'S3_ENDPOINT', doc: 'The S3-compatible store.', source: config((overlay) => overlay.s3.endpoint) },
  { name: 'S3_REGION', doc: "The store's region.", source: config((overlay) => overlay.s3.region) },
  { name: 'S3_ACCESS_KEY', doc: 'Access key of the store.', source: secret(SECRETS.s3, 'access-key', 'REPLACE_ACCESS_KEY') },
  { name: 'S3_SECRET_KEY', doc: 'Secret key of the store.', source: secret(SECRETS.s3, 'secret-key', 'REPLACE_SECRET_KEY') },
  { name: 'S3_BUCKET', doc: `The bucket of ${what}.`, source: config((overlay) => overlay.s3.buckets[bucket]) },
  { name: 'S3_PATH_STYLE', doc: 'Path-style addressing (`true` for MinIO and s3rver, `false` for AWS).', source: config((overlay) => String(overlay.s3.pathStyle)) },
];

/** `mailConfigFields`: services that send e-mail. */
export const mailSettings = (what: string): Setting[] => [
  { name: 'SMTP_URL', doc: `SMTP server for ${what} (smtp:// or smtps://, credentials in the URL).`, source: secret(SECRETS.smtp, 'url', (overlay) => `smtp://user:REPLACE@${overlay.smtp.host}:${overlay.smtp.port}`) },
  { name: 'MAIL_FROM', doc: 'Sender address of the e-mails.', source: config((overlay) => overlay.smtp.from) },
];

/** glibc keeps an arena per thread otherwise: −7 MiB per process (docs/benchmarks.md). */
export const mallocArenas: Setting = { name: 'MALLOC_ARENA_MAX', doc: 'glibc malloc arenas (2, as on the local stack: −7 MiB per process, docs/benchmarks.md).', source: fixed('2'), runtime: true };
