// The strata-controller process: `node services/strata-controller/src/main.ts` (in a pod: the service account's
// in-cluster configuration; elsewhere: KUBECONFIG or ~/.kube/config).
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '@sigil/kit/log';
import { createCatalog } from './catalog.ts';
import { loadControllerConfig } from './config.ts';
import { createController } from './controller.ts';
import { startHealthServer } from './health.ts';

const config = loadControllerConfig();
const log = createLogger('strata-controller', config.LOG_LEVEL);
const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();

const controller = createController({
  kubeConfig,
  catalog: createCatalog({ url: config.STRATA_API_URL, token: config.STRATA_API_TOKEN }),
  namespaces: config.WATCH_NAMESPACES,
  lease: { namespace: config.LEASE_NAMESPACE, name: config.LEASE_NAME, identity: config.POD_NAME, durationSeconds: config.LEASE_DURATION_SECONDS, renewMs: config.LEASE_RENEW_SECONDS * 1000 },
  backoff: { baseMs: config.BACKOFF_BASE_MS, maxMs: config.BACKOFF_MAX_MS },
  resyncMs: config.RESYNC_SECONDS * 1000,
  log,
});
const health = await startHealthServer({ host: config.HOST, port: config.PORT, synced: () => controller.synced() });
controller.start();
log.info({ health: health.url, namespaces: config.WATCH_NAMESPACES.length ? config.WATCH_NAMESPACES : '(all)' }, 'strata-controller started');

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    // Releasing the Lease on the way out lets the next replica lead at once instead of after the duration.
    void Promise.all([controller.stop(), health.close()]).finally(() => process.exit(0));
  });
}
