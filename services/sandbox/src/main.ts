import path from 'node:path';
import { connectBus, startOutboxRelay } from '@sigil/kit/bus';
import { createLogger } from '@sigil/kit/log';
import { createStrataPrincipalSigner, createStrataPrincipalVerifier } from '@sigil/kit/auth';
import { loadConfig } from '@sigil/kit/config';
import { createExclusiveWork, migrate } from '@sigil/kit/db';
import { parseSecretsKey } from '@sigil/kit/crypto';
import { runServer } from '@sigil/kit/http';
import { createApp } from './app.ts';
import { createCatalogClient } from './catalog-client.ts';
import { sandboxConfig } from './config.ts';
import { createDb } from './db.ts';
import { createReconciler } from './reconciler.ts';
import type { TellConsole } from './console-events.ts';
import { strataConsoleSubject } from '@sigil/proto/strata-jobs';
import { startRestoreReportConsumer } from './restore-reports.ts';
import { startSandboxJobConsumer } from './jobs.ts';
import { attachTunnel } from './tunnel.ts';
import { closeQueryPools } from './query/index.ts';
import { createLocalRuntime } from './runtime/local.ts';

const SERVICE = 'sandbox';
const config = loadConfig(sandboxConfig);
const log = createLogger(SERVICE, config.LOG_LEVEL);

await migrate(config.DATABASE_URL, path.resolve(import.meta.dirname, '../../../prisma/sandbox/migrations'));
const db = createDb(config.DATABASE_URL);
const bus = await connectBus(config.NATS_URL, SERVICE, { eventConsumersStartAt: config.EVENT_CONSUMERS_START_AT });
const relay = await startOutboxRelay({ databaseUrl: config.DATABASE_URL, bus, log });
const secretsKey = parseSecretsKey(config.STRATA_SECRETS_KEY);
const clock = () => new Date();
const catalog = createCatalogClient({ baseUrl: config.BACKUP_CATALOG_URL, sign: await createStrataPrincipalSigner(JSON.parse(config.INTERNAL_JWT_PRIVATE_KEY)) });
const runtime = config.SANDBOX_RUNTIME === 'kubernetes' ? await kubernetesRuntime() : createLocalRuntime({ baseDir: config.SANDBOX_DIR });
const notify: TellConsole = (event) => bus.notify(strataConsoleSubject(config.CONSUMER_PREFIX), event);
const exclusive = await createExclusiveWork(config.DATABASE_URL, log);
const reconciler = createReconciler({ db, runtime, catalog, secretsKey, clock, log, notify, exclusive });
const kick = () => void setImmediate(() => void reconciler.pass().catch((error: unknown) => log.error({ err: error }, 'sandbox pass failed')));
const reports = await startRestoreReportConsumer({ db, secretsKey, clock, log, cell: config.CONSUMER_PREFIX, kick, notify }, bus);
const timer = setInterval(kick, config.SANDBOX_INTERVAL_MS);
kick();
const verifyPrincipal = await createStrataPrincipalVerifier(JSON.parse(config.INTERNAL_JWT_PUBLIC_KEY));
const { app, health, sandboxes } = await createApp({
  db,
  log,
  catalog,
  secretsKey,
  clock,
  cell: config.CONSUMER_PREFIX,
  defaultTtl: config.SANDBOX_DEFAULT_TTL,
  maxTtl: config.SANDBOX_MAX_TTL,
  kick,
  notify,
  queryTimeoutMs: config.SANDBOX_QUERY_TIMEOUT_MS,
  verifyPrincipal,
  readiness: { nats: async () => void (await bus.nc.flush()) },
});
const jobs = await startSandboxJobConsumer({ bus, log, secretsKey, cell: config.CONSUMER_PREFIX, sandboxes });
const running = await runServer({
  app,
  host: config.HOST,
  port: config.PORT,
  log,
  health,
  resources: [async () => clearInterval(timer), () => exclusive.close(), () => closeQueryPools(), () => jobs.stop(), () => reports.stop(), () => relay.stop(), () => bus.close(), () => db.$disconnect()],
});
attachTunnel(running.server, { db, sandboxes, verifyPrincipal, log, cell: config.CONSUMER_PREFIX, clock });

/**
 * Pods in SANDBOX_NAMESPACE, through the cluster's own credentials ($KUBECONFIG, ~/.kube/config or the service account).
 * Loaded only for this runtime: the Kubernetes client alone costs a local-runtime process ~70 MiB.
 */
async function kubernetesRuntime() {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const { createKubernetesRuntime } = await import('./runtime/kubernetes.ts');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return createKubernetesRuntime({
    kubeConfig,
    namespace: config.SANDBOX_NAMESPACE,
    images: { postgres: (major) => config.SANDBOX_POSTGRES_IMAGE.replace('{major}', String(major)), mysql: config.SANDBOX_MYSQL_IMAGE },
    ...(config.SANDBOX_STORAGE_CLASS ? { storageClass: config.SANDBOX_STORAGE_CLASS } : {}),
    ...(config.SANDBOX_CPU ? { cpu: config.SANDBOX_CPU } : {}),
    ...(config.SANDBOX_MEMORY ? { memory: config.SANDBOX_MEMORY } : {}),
    sizeLimitBytes: (spec) => spec.sizeLimitBytes,
  });
}
