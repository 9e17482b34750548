// The strata-controller process: `node services/strata-controller/src/main.ts` (in a pod: the service account's
// in-cluster configuration; elsewhere: KUBECONFIG or ~/.kube/config).
import { readFile } from 'node:fs/promises';
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

// client-go's renew deadline: a catalog call never runs longer than this replica may lead without renewing.
const tokenFile = config.STRATA_API_TOKEN_FILE;
const renewDeadlineMs = (config.LEASE_DURATION_SECONDS - config.LEASE_RENEW_SECONDS) * 1000;
let stopping = false;
const shutdown = (code: number) => {
  if (stopping) return;
  stopping = true;
  // Releasing the Lease on the way out lets the next replica lead at once instead of after the duration.
  void Promise.all([controller.stop(), health.close()]).finally(() => process.exit(code));
};

const controller = createController({
  kubeConfig,
  catalog: createCatalog({
    url: config.STRATA_API_URL,
    timeoutMs: Math.min(60_000, renewDeadlineMs),
    ...(tokenFile
      ? // A mounted Secret's file is read at every call: a rotated token is used at once, without a restart.
        { token: async () => (await readFile(tokenFile, 'utf8')).trim() }
      : {
          token: config.STRATA_API_TOKEN ?? '',
          // An environment variable is read once, at start: a 401 (expired or revoked) ends the process, and the
          // restarted pod gets the Secret's current token.
          onUnauthorized: () => {
            log.error('Strata refused the API token (401); exiting so the pod restarts with the current token');
            shutdown(1);
          },
        }),
  }),
  namespaces: config.WATCH_NAMESPACES,
  lease: { namespace: config.LEASE_NAMESPACE, name: config.LEASE_NAME, identity: config.POD_NAME, durationSeconds: config.LEASE_DURATION_SECONDS, renewMs: config.LEASE_RENEW_SECONDS * 1000 },
  backoff: { baseMs: config.BACKOFF_BASE_MS, maxMs: config.BACKOFF_MAX_MS },
  resyncMs: config.RESYNC_SECONDS * 1000,
  log,
});
const health = await startHealthServer({ host: config.HOST, port: config.PORT, synced: () => controller.synced() });
controller.start();
log.info({ health: health.url, namespaces: config.WATCH_NAMESPACES.length ? config.WATCH_NAMESPACES : '(all)' }, 'strata-controller started');

for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => shutdown(0));
