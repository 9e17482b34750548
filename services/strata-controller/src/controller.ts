import { makeInformer, type Informer, type KubeConfig, type KubernetesObject, type ObjectCache } from '@kubernetes/client-node';
import type { Logger } from '@sigil/kit/log';
import type { Catalog } from './catalog.ts';
import type { CustomResource } from './documents.ts';
import { KINDS, resourcePath, type KindInfo } from './kinds.ts';
import { createCustomObjects } from './kube.ts';
import { createLeaderElection, kubeLeaseApi, type LeaseApi } from './lease.ts';
import { createReconciler, keyOf, needsReconcile, NotLeaderError, refOf } from './reconciler.ts';
import { backoffDelay, createWorkQueue } from './work-queue.ts';

export interface ControllerOptions {
  kubeConfig: KubeConfig;
  catalog: Catalog;
  /** Namespaces to watch; empty: all of them. */
  namespaces: string[];
  lease: { namespace: string; name: string; identity: string; durationSeconds: number; renewMs: number; api?: LeaseApi };
  backoff: { baseMs: number; maxMs: number };
  resyncMs: number;
  log: Logger;
  /** Objects reconciled at once. */
  concurrency?: number;
}

export interface Controller {
  start(): void;
  /** Stops watching and reconciling and releases the Lease. */
  stop(): Promise<void>;
  isLeader(): boolean;
  /** Every informer has listed once (readiness). */
  synced(): boolean;
  /** Resolves when nothing is queued, backing off or being reconciled (tests). */
  idle(): Promise<void>;
  /** Resolves when this replica leads (`true`) or stops leading (`false`) next, or already does. */
  leading(value: boolean): Promise<void>;
}

type CachedInformer = Informer<KubernetesObject> & ObjectCache<KubernetesObject>;
/** The informer's objects are the custom objects API's JSON (timestamps are strings, not the Date its type says). */
const asResource = (object: KubernetesObject) => object as unknown as CustomResource;

/** Informers on the six kinds, a work queue gated by the Lease, and the reconciler behind it. */
export function createController(options: ControllerOptions): Controller {
  const { kubeConfig, log } = options;
  const objects = createCustomObjects(kubeConfig);
  const failures = new Map<string, number>();
  /** Per key: the generation and deletionTimestamp of the last event seen. */
  const lastSeen = new Map<string, string>();
  const informers: Array<{ info: KindInfo; informer: CachedInformer; listed: boolean }> = [];
  const leadershipWaiters: Array<{ value: boolean; resolve: () => void }> = [];
  let stopped = false;
  let resyncTimer: NodeJS.Timeout | undefined;
  // One per leadership term: aborted when it ends, so catalog calls in flight do not outlive the Lease.
  let term = new AbortController();
  term.abort();

  const election = createLeaderElection({
    leases: options.lease.api ?? kubeLeaseApi(kubeConfig),
    namespace: options.lease.namespace,
    name: options.lease.name,
    identity: options.lease.identity,
    durationSeconds: options.lease.durationSeconds,
    renewMs: options.lease.renewMs,
    log,
    onStartedLeading: () => {
      term = new AbortController();
      queue.resume();
      // What changed while another replica led (or none did) is found by reconciling everything once.
      enqueueAll();
      notifyLeadership();
    },
    onStoppedLeading: () => {
      term.abort();
      queue.pause();
      notifyLeadership();
    },
  });
  const reconcile = createReconciler({ objects, catalog: options.catalog, isLeader: () => election.isLeader() && !stopped, signal: () => term.signal, log });

  const queue = createWorkQueue(
    async (key) => {
      let retry: boolean;
      try {
        retry = (await reconcile(refOf(key))) === 'retry';
      } catch (error) {
        if (error instanceof NotLeaderError) return; // the new leader reconciles it
        log.warn({ key, err: error }, 'reconcile failed');
        retry = true;
      }
      if (!retry) {
        failures.delete(key);
        return;
      }
      const count = (failures.get(key) ?? 0) + 1;
      failures.set(key, count);
      queue.add(key, backoffDelay(count, options.backoff));
    },
    { concurrency: options.concurrency ?? 4 },
  );

  function notifyLeadership() {
    const leader = election.isLeader();
    for (const waiter of leadershipWaiters.splice(0)) {
      if (waiter.value === leader) waiter.resolve();
      else leadershipWaiters.push(waiter);
    }
  }

  function enqueueAll(ifIdle = false) {
    for (const { info, informer } of informers) {
      for (const object of informer.list().map(asResource)) {
        const key = keyOf(info.kind, object.metadata.namespace, object.metadata.name);
        if (ifIdle) queue.addIfIdle(key);
        else queue.add(key);
      }
    }
  }

  function watch(info: KindInfo, namespace: string) {
    let restarts = 0;
    const informer = makeInformer<KubernetesObject>(kubeConfig, resourcePath(info, namespace), async () => {
      const list = await objects.list(info, namespace);
      entry.listed = true;
      restarts = 0;
      return list as never;
    });
    const entry = { info, informer, listed: false };
    const key = (object: KubernetesObject) => keyOf(info.kind, object.metadata?.namespace ?? '', object.metadata?.name ?? '');
    const seenOf = (object: KubernetesObject) => `${asResource(object).metadata.generation ?? 1}|${asResource(object).metadata.deletionTimestamp ?? ''}`;
    informer.on('add', (object) => {
      lastSeen.set(key(object), seenOf(object));
      queue.add(key(object));
    });
    informer.on('update', (object) => {
      const seen = seenOf(object);
      const unchanged = lastSeen.get(key(object)) === seen;
      lastSeen.set(key(object), seen);
      // The key is already queued, running or waiting out its back-off, and this event (e.g. of the controller's
      // own finalizer write) changes neither generation nor deletion: that run reads the object anyway. Queuing it
      // again would run it twice, once without its back-off.
      if (unchanged && queue.has(key(object))) return;
      if (needsReconcile(info, asResource(object))) queue.add(key(object));
    });
    informer.on('delete', (object) => {
      queue.forget(key(object));
      failures.delete(key(object));
      lastSeen.delete(key(object));
    });
    // The informer re-lists by itself after 410 Gone; any other error ends its watch: start it again.
    informer.on('error', (error: unknown) => {
      if (stopped) return;
      restarts += 1;
      const delay = backoffDelay(restarts, { baseMs: 500, maxMs: 30_000 });
      log.warn({ kind: info.kind, namespace: namespace || '(all)', err: error, retryInMs: delay }, 'watch failed; starting it again');
      setTimeout(() => {
        if (!stopped) void informer.start();
      }, delay);
    });
    informers.push(entry);
  }

  return {
    start() {
      for (const info of KINDS) for (const namespace of options.namespaces.length ? options.namespaces : ['']) watch(info, namespace);
      for (const { informer } of informers) void informer.start();
      election.start();
      resyncTimer = setInterval(() => {
        if (election.isLeader()) enqueueAll(true);
      }, options.resyncMs);
    },
    async stop() {
      stopped = true;
      if (resyncTimer) clearInterval(resyncTimer);
      term.abort();
      queue.close();
      // Work in flight ends (its writes are refused once stopped) before the Lease is released: the next replica
      // starts at once after the release, and must not meet this one's last writes.
      await queue.idle();
      await Promise.all(informers.map(({ informer }) => informer.stop()));
      await election.stop();
    },
    isLeader: () => election.isLeader(),
    idle: () => queue.idle(),
    synced: () => informers.length > 0 && informers.every((i) => i.listed),
    leading(value) {
      if (election.isLeader() === value) return Promise.resolve();
      return new Promise((resolve) => leadershipWaiters.push({ value, resolve }));
    },
  };
}
