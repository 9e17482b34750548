/**
 * The platform's processes as Kubernetes workloads: what each one runs, which port it serves its health endpoints on,
 * whom it calls, what it needs outside the cluster, and how much memory it was measured to use.
 *
 * Entries, call graph and environment follow the local stack (infra/local/src/stack.ts, which starts every service as
 * `node <flags> services/<name>/src/main.ts`), each service's `src/config.ts`, and the internal contracts in
 * `proto/src/internal-*.ts`. Memory figures are the RSS measured in docs/benchmarks.md (cited per entry).
 */

/** The services of both products, the gateway in front of them, and Strata's operator. */
export const WORKLOADS = [
  'gateway',
  'accounts',
  'billing',
  'templates',
  'envelopes',
  'signing',
  'evidence',
  'webhooks',
  'backup-catalog',
  'mover',
  'sandbox',
  'strata-controller',
] as const;
export type Workload = (typeof WORKLOADS)[number];

/** Services that keep a Postgres database of their own (migrations in `prisma/<service>/migrations`). */
export const DATABASE_SERVICES = ['accounts', 'billing', 'templates', 'envelopes', 'signing', 'evidence', 'webhooks', 'backup-catalog', 'sandbox'] as const;
export type DatabaseService = (typeof DATABASE_SERVICES)[number];

/** External dependencies a workload opens connections to (egress in its NetworkPolicy). */
export type Dependency =
  | 'nats'
  | 'postgres'
  | 's3'
  | 'smtp'
  /** Public HTTPS on the internet: the payment processor, identity providers, webhook receivers, a TSA. */
  | 'public-https'
  /** The Kubernetes API server. */
  | 'kubernetes-api'
  /** Any address on any port: the mover connects to the databases it backs up, wherever they are. */
  | 'anywhere'
  /** The sandbox servers' pods in the sandboxes namespace (Postgres 5432, MariaDB 3306). */
  | 'sandbox-pods';

/** Memory in MiB: the request is what the process was measured to hold after load, the limit its peak and headroom. */
export interface MemorySizing {
  requestMiB: number;
  limitMiB: number;
  /** Where the figures come from. */
  basis: string;
}

export interface WorkloadSpec {
  name: Workload;
  /** The entry point, relative to the image's working directory (the repository's root). */
  entry: string;
  /** What the process is, for the Deployment's description. */
  summary: string;
  /** The gateway routes public requests to it. */
  routed: boolean;
  /** Services it calls over HTTP (its `*_URL` settings). */
  calls: readonly Workload[];
  dependencies: readonly Dependency[];
  memory: MemorySizing;
  /** Folders it writes to (an `emptyDir` each, the root filesystem being read-only). */
  writablePaths: readonly string[];
  /** It talks to the Kubernetes API with its own ServiceAccount's token. */
  needsServiceAccountToken: boolean;
  /** More than one replica may run at once (work shared through NATS, advisory locks or a Lease). */
  scalesOut: boolean;
}

const TMP = '/tmp';

export const WORKLOAD_SPECS: Record<Workload, WorkloadSpec> = {
  gateway: {
    name: 'gateway',
    entry: 'gateway/src/main.ts',
    summary: 'the public edge: REST, the composed GraphQL API, the dashboard and console, Strata tunnels',
    routed: false,
    calls: ['accounts', 'billing', 'templates', 'envelopes', 'signing', 'evidence', 'webhooks', 'backup-catalog', 'sandbox'],
    // public-https: the access proxy's key set (STRATA_ACCESS_JWKS_URL).
    dependencies: ['nats', 'public-https'],
    // 84–107 MiB after 1,100 requests (runs of 2026-11-27), 160–189 under `npm run bench`'s whole run (2026-11-24),
    // peak 201–202 MiB answering the console's whole-history timeline with a 16 MiB young generation ("Console").
    memory: { requestMiB: 192, limitMiB: 320, basis: 'benchmarks.md: 84–189 MiB after load, peak 202 MiB in the console timeline bench' },
    writablePaths: [TMP],
    needsServiceAccountToken: false,
    scalesOut: true,
  },
  accounts: {
    name: 'accounts',
    entry: 'services/accounts/src/main.ts',
    summary: 'organizations, members, sessions, API keys, SSO and SCIM',
    routed: true,
    calls: ['billing'],
    dependencies: ['nats', 'postgres', 's3', 'smtp', 'public-https'],
    memory: { requestMiB: 160, limitMiB: 256, basis: 'benchmarks.md: 110–147 MiB after 1,100 requests (2026-11-26/27), 141–170 MiB after a whole run (2026-11-24)' },
    writablePaths: [TMP],
    needsServiceAccountToken: false,
    scalesOut: true,
  },
  billing: {
    name: 'billing',
    entry: 'services/billing/src/main.ts',
    summary: 'plans, entitlements, metered usage, the payment processor',
    routed: true,
    calls: [],
    dependencies: ['nats', 'postgres', 'public-https'],
    // Not in the RSS tables (newer than the memory runs): a Prisma service with a subgraph, the same flags and the same
    // kind of work as accounts, sized like it.
    memory: { requestMiB: 160, limitMiB: 256, basis: 'no figure in benchmarks.md; sized like accounts (same kind of process, same V8 flags)' },
    writablePaths: [TMP],
    needsServiceAccountToken: false,
    scalesOut: true,
  },
  templates: {
    name: 'templates',
    entry: 'services/templates/src/main.ts',
    summary: 'templates, their files and versions; LibreOffice conversions and Chromium printing',
    routed: true,
    calls: [],
    dependencies: ['nats', 'postgres', 's3'],
    // The Node process: 115–157 MiB after 1,100 requests, 147–182 MiB after a whole run. LibreOffice (CONVERSION_WORKERS
    // of them) and Chromium run as child processes in the same container and count against its limit; their memory is
    // not in benchmarks.md, hence the wide limit.
    memory: { requestMiB: 256, limitMiB: 1024, basis: 'benchmarks.md: 115–182 MiB for the Node process; LibreOffice and Chromium children not measured (limit leaves them ~800 MiB)' },
    writablePaths: [TMP],
    needsServiceAccountToken: false,
    scalesOut: true,
  },
  envelopes: {
    name: 'envelopes',
    entry: 'services/envelopes/src/main.ts',
    summary: 'envelopes, recipients, rendering, e-mails to signers',
    routed: true,
    calls: ['templates', 'billing', 'accounts'],
    dependencies: ['nats', 'postgres', 's3', 'smtp'],
    memory: { requestMiB: 192, limitMiB: 320, basis: 'benchmarks.md: 106–160 MiB after 1,100 requests, 138–159 MiB under the envelopes render bench (400 envelopes)' },
    writablePaths: [TMP],
    needsServiceAccountToken: false,
    scalesOut: true,
  },
  signing: {
    name: 'signing',
    entry: 'services/signing/src/main.ts',
    summary: "the signer's side: access tokens, one-time codes, attachments",
    routed: true,
    calls: ['envelopes', 'accounts'],
    dependencies: ['nats', 'postgres', 's3', 'smtp', 'public-https'],
    memory: { requestMiB: 160, limitMiB: 256, basis: 'benchmarks.md: 98–151 MiB after 1,100 requests (2026-11-24 to 27)' },
    writablePaths: [TMP],
    needsServiceAccountToken: false,
    scalesOut: true,
  },
  evidence: {
    name: 'evidence',
    entry: 'services/evidence/src/main.ts',
    summary: 'sealing, the audit trail, the transparency log',
    routed: true,
    calls: ['envelopes'],
    dependencies: ['nats', 'postgres', 'public-https'],
    memory: { requestMiB: 160, limitMiB: 256, basis: 'benchmarks.md: 106–169 MiB after 1,100 requests and after whole runs' },
    writablePaths: [TMP],
    needsServiceAccountToken: false,
    scalesOut: true,
  },
  webhooks: {
    name: 'webhooks',
    entry: 'services/webhooks/src/main.ts',
    summary: 'endpoints, fan-out and delivery of events to receivers',
    routed: true,
    calls: [],
    dependencies: ['nats', 'postgres', 'public-https'],
    memory: { requestMiB: 192, limitMiB: 320, basis: 'benchmarks.md: 100–145 MiB after 1,100 requests, peak 175 MiB delivering 200 events/s to 10 endpoints' },
    writablePaths: [TMP],
    needsServiceAccountToken: false,
    scalesOut: true,
  },
  'backup-catalog': {
    name: 'backup-catalog',
    entry: 'services/backup-catalog/src/main.ts',
    summary: "Strata's catalog: resources, schedules, backups, restores, retention",
    routed: true,
    calls: [],
    // `anywhere`: it connects to the targets' databases (checks, replication slots) and to the stores the resources
    // name, at any address and port.
    dependencies: ['nats', 'postgres', 's3', 'anywhere'],
    // 118–161 MiB after the platform bench; peak 338–409 MiB computing a target's timeline of 50,000 change-log
    // segments with a 16 MiB young generation ("Console").
    memory: { requestMiB: 256, limitMiB: 512, basis: 'benchmarks.md: 118–161 MiB after load, peak 338–409 MiB in the console timeline bench' },
    writablePaths: [TMP],
    needsServiceAccountToken: false,
    scalesOut: true,
  },
  mover: {
    name: 'mover',
    entry: 'services/mover/src/main.ts',
    summary: "Strata's worker: backups, restores and change-log streams between databases and the store",
    routed: false,
    calls: [],
    dependencies: ['nats', 's3', 'anywhere'],
    // 92–118 MiB idle in the stack; 230–277 MiB at the peak of a backup (16 MiB × 5 upload buffers), plus its CLI
    // children (pg_dump, pg_waldump, mariadb-binlog; zstd and age at 44–59 MiB in the CLI comparison).
    memory: { requestMiB: 256, limitMiB: 640, basis: 'benchmarks.md: 92–118 MiB idle, peak 230–277 MiB during a backup, plus its database tools' },
    writablePaths: [TMP],
    needsServiceAccountToken: false,
    scalesOut: true,
  },
  sandbox: {
    name: 'sandbox',
    entry: 'services/sandbox/src/main.ts',
    summary: 'sandboxes: restored database servers as pods, their queries and tunnels',
    routed: true,
    calls: ['backup-catalog'],
    dependencies: ['nats', 'postgres', 'kubernetes-api', 'sandbox-pods'],
    // 104–147 MiB with the local runtime; the Kubernetes client this runtime loads measured 74 MiB of RSS in a bare
    // process (181 MiB when it was loaded by every sandbox process, 2026-11-26).
    memory: { requestMiB: 224, limitMiB: 384, basis: 'benchmarks.md: 104–147 MiB with the local runtime, 181 MiB with @kubernetes/client-node loaded' },
    writablePaths: [TMP],
    needsServiceAccountToken: true,
    scalesOut: true,
  },
  'strata-controller': {
    name: 'strata-controller',
    entry: 'services/strata-controller/src/main.ts',
    summary: "Strata's operator: reconciles the custom resources into the catalog (one active replica, by Lease)",
    routed: false,
    // STRATA_API_URL: the console API at the gateway, with an access token like the CLI's.
    calls: ['gateway'],
    dependencies: ['kubernetes-api'],
    // New: no figure. A bare Node process is 42 MiB and @kubernetes/client-node 74 MiB more (benchmarks.md).
    memory: { requestMiB: 160, limitMiB: 256, basis: 'no figure in benchmarks.md; bare Node 42 MiB + @kubernetes/client-node 74 MiB measured, plus informer caches' },
    writablePaths: [TMP],
    needsServiceAccountToken: true,
    // More replicas stand by; the Lease lets one reconcile.
    scalesOut: false,
  },
};

/** Callers of a workload: the gateway for routed services, and every workload whose `calls` name it. */
export function callersOf(target: Workload): Workload[] {
  return WORKLOADS.filter((name) => WORKLOAD_SPECS[name].calls.includes(target));
}

/**
 * The V8 flags each process runs with: the local stack's (infra/local/src/node-flags.ts), with which the memory above
 * was measured (a 1 MiB young generation and a capped old generation; the catalog, the gateway and the mover their own).
 * A test keeps the two equal.
 */
const SMALL_HEAP = ['--max-semi-space-size=1', '--max-old-space-size=96', '--heap-growing-percent=15', '--max-opt=2', '--liftoff-only'];
export const NODE_FLAGS: Record<Workload, string[]> = {
  ...(Object.fromEntries(WORKLOADS.map((name) => [name, SMALL_HEAP])) as Record<Workload, string[]>),
  'backup-catalog': ['--max-semi-space-size=16', '--max-old-space-size=192'],
  gateway: ['--max-semi-space-size=16', '--max-old-space-size=128'],
  mover: ['--max-semi-space-size=1', '--max-old-space-size=160', '--heap-growing-percent=15', '--max-opt=2', '--liftoff-only'],
};

/** Every workload serves `/healthz` and `/readyz` on this port (`PORT`). */
export const HTTP_PORT = 8080;
