/** Settings of Strata's services, the gateway and the controller (each one's `src/config.ts` is the source). */
import { natsUrlOf, serviceUrlOf } from '../overlay.ts';
import { WORKLOAD_SPECS, type Workload } from '../workloads.ts';
import type { Setting } from './shared.ts';
import { baseSettings, config, EXAMPLE_PRIVATE_JWK, fixed, internalPrivateKey, keep, listen, logLevel, mallocArenas, natsUrl, secret, SECRETS, strataSecretsKey } from './shared.ts';

export const catalogSettings: Setting[] = [
  ...baseSettings('backup-catalog'),
  strataSecretsKey,
  { name: 'STRATA_EXTERNAL_URL', doc: "The console's public address, reported by whoami.", source: config((overlay) => overlay.publicUrl) },
  { name: 'SCHEDULER_INTERVAL_MS', doc: 'How often schedules are looked at.', source: keep('1000') },
  { name: 'MIRROR_INTERVAL_MS', doc: 'How often stores are mirrored.', source: keep('300000') },
  { name: 'RETENTION_INTERVAL_MS', doc: 'Retention runs when the catalog changed, and at least this often.', source: keep('60000') },
  { name: 'GC_INTERVAL_MS', doc: 'A store with nothing known to collect is still swept this often.', source: keep('21600000') },
  { name: 'GC_SKEW_MARGIN_MS', doc: 'Garbage younger than this stays for a later pass (clock skew).', source: keep('60000') },
  { name: 'DOWNLOAD_URL_TTL_SECONDS', doc: 'Lifetime of presigned download URLs.', source: keep('3600') },
  mallocArenas,
];

export const moverSettings: Setting[] = [
  natsUrl,
  strataSecretsKey,
  { name: 'MOVER_CONCURRENCY', doc: 'Jobs one mover runs at once.', source: keep('2') },
  { name: 'MOVER_STREAMS', doc: 'Change-log streams one mover runs at once.', source: keep('16') },
  { name: 'MOVER_TEMP_DIR', doc: 'Work files (WAL and binlog segments, restores\' downloads): the pod\'s /tmp emptyDir.', source: fixed('/tmp/mover') },
  { name: 'CONSUMER_PREFIX', doc: 'Prefix of durable consumer names; only test stacks sharing one broker set it.', source: keep('') },
  ...listen,
  logLevel,
  { name: 'UV_THREADPOOL_SIZE', doc: "libuv's pool, where parallel zstd frames run (4, as the local stack's minimum).", source: fixed('4'), runtime: true },
  mallocArenas,
];

export const sandboxSettings: Setting[] = [
  ...baseSettings('sandbox'),
  strataSecretsKey,
  internalPrivateKey(),
  { name: 'BACKUP_CATALOG_URL', doc: 'The backup catalog (sandbox restores).', source: config((overlay) => serviceUrlOf(overlay, 'backup-catalog')) },
  { name: 'SANDBOX_DIR', doc: 'The local runtime only (unused with the Kubernetes runtime).', source: keep('$TMPDIR/strata-sandboxes') },
  { name: 'SANDBOX_INTERVAL_MS', doc: 'How often the reconciler looks at every sandbox.', source: keep('1000') },
  { name: 'SANDBOX_DEFAULT_TTL', doc: "A sandbox's lifetime when the target's policy sets none.", source: keep('4h') },
  { name: 'SANDBOX_MAX_TTL', doc: 'The longest lifetime.', source: keep('7d') },
  { name: 'SANDBOX_RUNTIME', doc: 'Sandbox servers run as pods of this cluster.', source: fixed('kubernetes') },
  { name: 'SANDBOX_NAMESPACE', doc: "The namespace of the sandboxes' pods (the service's Role is bound there).", source: config((overlay) => overlay.sandboxNamespace) },
  { name: 'SANDBOX_POSTGRES_IMAGE', doc: "Image of a Postgres sandbox; `{major}` is the backup's major version.", source: keep('postgres:{major}') },
  { name: 'SANDBOX_MYSQL_IMAGE', doc: 'Image of a MariaDB sandbox.', source: keep('mariadb:11') },
  { name: 'SANDBOX_STORAGE_CLASS', doc: "A claim of this class holds each sandbox's data (unset: an emptyDir).", source: config((overlay) => overlay.sandboxStorageClass) },
  { name: 'SANDBOX_CPU', doc: "A sandbox pod's CPU request and limit.", source: keep('unset') },
  { name: 'SANDBOX_MEMORY', doc: "A sandbox pod's memory request and limit.", source: keep('unset') },
  { name: 'SANDBOX_QUERY_TIMEOUT_MS', doc: 'The statement timeout of the query operation.', source: keep('30000') },
  mallocArenas,
];

/** SERVICE_URLS: every service the gateway routes to, by its Service's address. */
const serviceUrls = (overlay: Parameters<typeof serviceUrlOf>[0]) =>
  JSON.stringify(Object.fromEntries(WORKLOAD_SPECS.gateway.calls.map((service: Workload) => [service, serviceUrlOf(overlay, service)])));

export const gatewaySettings: Setting[] = [
  ...listen,
  { name: 'SERVICE_URLS', doc: 'Service name → base URL of each routed service (its Service; kube-proxy spreads requests over replicas).', source: config(serviceUrls) },
  internalPrivateKey('Signs the principal token of every request it forwards (the deployment\'s internal Ed25519 key, JWK).'),
  { name: 'NATS_URL', doc: 'NATS (revocations, the console live feed).', source: config(natsUrlOf) },
  logLevel,
  { name: 'TRUSTED_PROXIES', doc: 'Proxies in front whose X-Forwarded-For hops are believed: the ingress controller.', source: config((overlay) => (overlay.exposure.kind === 'ingress' ? '1' : undefined)) },
  { name: 'TRUST_PROXY', doc: 'Older spelling of TRUSTED_PROXIES=1.', source: keep('false') },
  { name: 'GRAPHQL_MAX_DEPTH', doc: 'Deepest GraphQL query.', source: keep('8') },
  { name: 'GRAPHQL_MAX_COST', doc: 'Costliest GraphQL query.', source: keep('5000') },
  { name: 'GRAPHQL_MAX_ALIASES', doc: 'Most aliases in a GraphQL query.', source: keep('15') },
  { name: 'NODE_ENV', doc: '`production` refuses the dev issuer.', source: config((overlay) => (overlay.name === 'production' ? 'production' : undefined)) },
  { name: 'DASHBOARD_DIST_DIR', doc: "The dashboard's built files (default apps/dashboard/dist in the image).", source: keep('apps/dashboard/dist') },
  { name: 'CONSOLE_DIST_DIR', doc: "The console's built files (default apps/console/dist in the image).", source: keep('apps/console/dist') },
  { name: 'BACKUP_CATALOG_URL', doc: 'Same as SERVICE_URLS["backup-catalog"] (set one of them).', source: keep('unset') },
  { name: 'SANDBOX_URL', doc: 'Same as SERVICE_URLS["sandbox"] (set one of them).', source: keep('unset') },
  { name: 'STRATA_ACCESS_ISSUER', doc: "Issuer(s) of the access proxy's JWT; unset: Strata authentication is off (401).", source: config((overlay) => overlay.strataAccess?.issuer) },
  { name: 'STRATA_ACCESS_AUDIENCE', doc: 'Accepted audience(s).', source: keep('strata') },
  { name: 'STRATA_ACCESS_JWKS_URL', doc: "The access proxy's key set (https).", source: config((overlay) => overlay.strataAccess?.jwksUrl) },
  { name: 'STRATA_ACCESS_JWKS', doc: 'Or the key set inline (public keys only).', source: keep('unset') },
  { name: 'STRATA_ACCESS_JWT_HEADER', doc: "Header carrying the access proxy's JWT.", source: keep('cf-access-jwt-assertion') },
  { name: 'STRATA_ACCESS_TOKEN_HEADER', doc: 'Header carrying a CLI access token.', source: keep('cf-access-token') },
  { name: 'STRATA_ACCESS_COOKIE', doc: 'Cookie carrying the access JWT.', source: keep('CF_Authorization') },
  { name: 'STRATA_GROUPS_CLAIM', doc: 'Claim listing the user\'s groups.', source: keep('groups') },
  { name: 'STRATA_ROLE_GROUPS', doc: 'Group → Strata role (JSON).', source: keep('strata-auth.ts defaults') },
  { name: 'STRATA_DEFAULT_ROLE', doc: 'Role of a user in no mapped group.', source: keep('viewer') },
  { name: 'STRATA_DEV_ISSUER', doc: 'Mints access tokens at POST /api/dev/token (local clusters only).', source: config((overlay) => (overlay.strataDevIssuer ? 'true' : undefined)) },
  { name: 'STRATA_DEV_ISSUER_KEY', doc: "The dev issuer's Ed25519 key (JWK), kept so tokens survive restarts.", source: secret(SECRETS.devIssuer, 'private-jwk', EXAMPLE_PRIVATE_JWK, true), when: (overlay) => overlay.strataDevIssuer },
  mallocArenas,
];

export const controllerSettings: Setting[] = [
  { name: 'STRATA_API_URL', doc: "Strata's console API (the gateway's Service): `<url>/api/v1/resources`.", source: config((overlay) => serviceUrlOf(overlay, 'gateway')) },
  { name: 'STRATA_API_TOKEN', doc: 'An access token with the `restorer-admin` role, sent as `cf-access-token` (read once: a 401 restarts the pod).', source: secret(SECRETS.controllerToken, 'token', 'REPLACE_WITH_ACCESS_TOKEN') },
  { name: 'STRATA_API_TOKEN_FILE', doc: 'Instead of STRATA_API_TOKEN: a file holding the token (a mounted Secret), read at every call. Unset here.', source: config(() => undefined) },
  { name: 'WATCH_NAMESPACES', doc: 'Namespaces whose custom resources are reconciled (comma-separated).', source: config((overlay) => overlay.controllerWatchNamespaces.join(',')) },
  { name: 'LEASE_NAME', doc: 'The Lease one replica holds to reconcile.', source: keep('strata-controller') },
  { name: 'LEASE_NAMESPACE', doc: "The controller's own namespace, where its Lease lives.", source: { kind: 'field', fieldPath: 'metadata.namespace' } },
  { name: 'LEASE_DURATION_SECONDS', doc: 'How long a Lease holds without renewal.', source: keep('15') },
  { name: 'LEASE_RENEW_SECONDS', doc: 'How often the holder renews.', source: keep('5') },
  { name: 'POD_NAME', doc: "This replica's name in the Lease.", source: { kind: 'field', fieldPath: 'metadata.name' } },
  { name: 'BACKOFF_BASE_MS', doc: 'First retry of a failed reconcile (doubles per failure).', source: keep('1000') },
  { name: 'BACKOFF_MAX_MS', doc: 'Longest retry delay.', source: keep('300000') },
  { name: 'RESYNC_SECONDS', doc: "How often every resource's status is read again from the catalog.", source: keep('60') },
  ...listen,
  logLevel,
  mallocArenas,
];
