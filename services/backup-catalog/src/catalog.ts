import type { Bus, RunningConsumer } from '@sigil/kit/bus';
import { createExclusiveWork } from '@sigil/kit/db';
import type { Logger } from '@sigil/kit/log';
import type { BackupDeps } from './backups/backups.ts';
import type { CatalogConfig } from './config.ts';
import { createDb, type Db } from './db.ts';
import { connectEventFeed, createEventHub, type EventHub } from './console/events.ts';
import { mirrorStore, mirrorStores } from './scheduling/mirror.ts';
import type { BackupStoreSpec as StoreSpec } from '@sigil/proto/resources';
import { strataConsoleSubject } from '@sigil/proto/strata-jobs';
import { followProgress, startReportConsumer } from './backups/reports.ts';
import { createResourceRepository } from './resources/resources.ts';
import { createRestoreService, type RestoreService } from './restores/restores.ts';
import { createSandboxRestores, type SandboxRestores } from './restores/sandbox-restores.ts';
import { createVerifier, type Verifier } from './restores/verification.ts';
import { createSecretStore } from './resources/secrets.ts';
import { createStatusWriter, type StatusWriter } from './resources/status.ts';
import { createStreamSupervisor } from './change-capture/streams.ts';
import { createTargetService, type TargetService } from './console/targets.ts';
import { strataStreamControlSubject } from '@sigil/proto/strata-jobs';
import { createAuditLog } from './console/audit.ts';
import { createLifecycle, type Lifecycle } from './lifecycle/lifecycle.ts';

export interface CatalogRuntime {
  deps: BackupDeps & { targets: TargetService; restores: RestoreService; sandboxRestores: SandboxRestores; status: StatusWriter; hub: EventHub; kick: () => void; mirrorStore: (namespace: string, name: string) => Promise<number>; lifecycle: Lifecycle };
  /** Retention and garbage collection: tests await `lifecycle.idle()` after a pass. */
  lifecycle: Lifecycle;
  /** Scheduled verification restores: tests run a pass with `verifier.tick()`. */
  verifier: Verifier;
  db: Db;
  /** One scheduler pass now (tests drive time through the clock); it starts a status pass without waiting for it. */
  tick(): Promise<void>;
  /** The resources' status: tests await `status.refreshDue()` after moving the clock. */
  status: StatusWriter;
  mirror(): Promise<number>;
  reports: RunningConsumer;
  stop(): Promise<void>;
}

export interface CatalogOptions {
  config: Pick<CatalogConfig, 'DATABASE_URL' | 'SCHEDULER_INTERVAL_MS' | 'MIRROR_INTERVAL_MS' | 'DOWNLOAD_URL_TTL_SECONDS' | 'CONSUMER_PREFIX'> & Partial<Pick<CatalogConfig, 'RETENTION_INTERVAL_MS' | 'GC_INTERVAL_MS' | 'GC_SKEW_MARGIN_MS'>>;
  bus: Bus;
  log: Logger;
  secretsKey: Buffer;
  clock?: () => Date;
  /** Tests drive the scheduler themselves. */
  timers?: boolean;
}

/** Wires the catalog's moving parts: scheduler and dispatcher loop, store mirror, mover reports, console events. */
export async function startCatalog(options: CatalogOptions): Promise<CatalogRuntime> {
  const { config, bus, log, secretsKey } = options;
  const db = createDb(config.DATABASE_URL);
  const secrets = createSecretStore(secretsKey);
  const resources = createResourceRepository(db, secrets);
  const hub = createEventHub();
  const feed = await connectEventFeed(bus, hub, strataConsoleSubject(config.CONSUMER_PREFIX));
  const clock = options.clock ?? (() => new Date());
  let ticking: Promise<void> | undefined;
  let again = false;
  const base: BackupDeps = { db, resources, secrets, secretsKey, notify: (e) => feed.notify(e), clock, cell: config.CONSUMER_PREFIX };
  const targets = createTargetService({ ...base, log });
  const restores = createRestoreService({ ...base, downloadTtlSeconds: config.DOWNLOAD_URL_TTL_SECONDS });
  const sandboxRestores = createSandboxRestores({ ...base, targets });
  const verifier = createVerifier({ ...base, sandboxRestores, log });
  const status = createStatusWriter({ ...base, log });
  // Passes that one replica at a time runs (advisory locks on a connection of their own).
  const exclusive = await createExclusiveWork(config.DATABASE_URL, log);
  const lifecycle = createLifecycle({ ...base, log, exclusive, audit: createAuditLog(db), gcIntervalMs: config.GC_INTERVAL_MS ?? 6 * 3600_000, retentionIntervalMs: config.RETENTION_INTERVAL_MS ?? 60_000, gcSkewMarginMs: config.GC_SKEW_MARGIN_MS ?? 60_000 });
  const streams = createStreamSupervisor({ ...base, control: (message) => bus.notify(strataStreamControlSubject(config.CONSUMER_PREFIX), message) });
  const tick = async (): Promise<void> => {
    if (ticking) {
      again = true;
      return ticking;
    }
    ticking = (async () => {
      do {
        again = false;
        await targets.tick().catch((error: unknown) => log.error({ err: error }, 'scheduler pass failed'));
        await streams.tick().catch((error: unknown) => log.error({ err: error }, 'streamer pass failed'));
        await verifier.tick().catch((error: unknown) => log.error({ err: error }, 'verification pass failed'));
        await lifecycle.tick().catch((error: unknown) => log.error({ err: error }, 'retention pass failed'));
      } while (again);
      // Reaching stores and database servers can take seconds: it never holds up the scheduler.
      void status.refreshDue();
    })().finally(() => (ticking = undefined));
    return ticking;
  };
  const kick = () => void setImmediate(() => void tick());
  const mirror = () => mirrorStores(base);
  const reports = await startReportConsumer(base, bus, log, config.CONSUMER_PREFIX, kick, streams);
  const progress = await followProgress(base, bus, log);
  const timers: NodeJS.Timeout[] = [];
  if (options.timers !== false) {
    timers.push(setInterval(() => void tick(), config.SCHEDULER_INTERVAL_MS));
    // Two replicas importing the same manifest at once would fail one of them on the backup's key: one at a time.
    const scheduledMirror = () => exclusive.tryExclusive('strata-mirror', mirror);
    timers.push(setInterval(() => void scheduledMirror().catch((error: unknown) => log.error({ err: error }, 'store mirror failed')), config.MIRROR_INTERVAL_MS));
    void mirror().then(() => tick()).catch((error: unknown) => log.error({ err: error }, 'store mirror failed'));
  }
  return {
    deps: {
      ...base,
      targets,
      restores,
      sandboxRestores,
      status,
      hub,
      kick,
      mirrorStore: async (namespace, name) => {
        const store = await resources.get<StoreSpec>(db, 'BackupStore', namespace, name);
        return store ? mirrorStore(base, store) : 0;
      },
      lifecycle,
    },
    lifecycle,
    db,
    verifier,
    tick,
    status,
    mirror,
    reports,
    async stop() {
      for (const timer of timers) clearInterval(timer);
      await reports.stop();
      progress.stop();
      await feed.stop();
      hub.stop();
      await ticking?.catch(() => undefined);
      await lifecycle.idle();
      await exclusive.close();
      await status.idle();
      await db.$disconnect();
    },
  };
}
