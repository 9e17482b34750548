import { CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import type { Logger } from '@sigil/kit/log';
import { statusOf } from './kube.ts';

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it (the JavaScript client
 * has none): the holder renews `renewTime` every `renewMs`; another replica takes the Lease only when it is free
 * (no holder) or its record has not changed for `leaseDurationSeconds` of this replica's own clock (so clocks of
 * different nodes never need to agree). Every write carries the resourceVersion read, so two replicas racing for a
 * free Lease cannot both win (one gets 409 Conflict). A holder stops leading once its last successful renewal is
 * older than the renew deadline (the duration minus one renewal interval), before any other replica may take over:
 * `isLeader()` answers false from that moment even while a Lease call still hangs (each call is cut off at the
 * renew deadline), and a timer tells the controller at the deadline so its queue pauses.
 */
export interface LeaseApi {
  read(namespace: string, name: string): Promise<V1Lease | undefined>;
  create(namespace: string, lease: V1Lease): Promise<V1Lease>;
  replace(namespace: string, name: string, lease: V1Lease): Promise<V1Lease>;
}

export function kubeLeaseApi(kubeConfig: KubeConfig): LeaseApi {
  const api = kubeConfig.makeApiClient(CoordinationV1Api);
  return {
    async read(namespace, name) {
      try {
        return await api.readNamespacedLease({ namespace, name });
      } catch (error) {
        if (statusOf(error) === 404) return undefined;
        throw error;
      }
    },
    create: (namespace, body) => api.createNamespacedLease({ namespace, body }),
    replace: (namespace, name, body) => api.replaceNamespacedLease({ namespace, name, body }),
  };
}

export interface LeaderElectionOptions {
  leases: LeaseApi;
  namespace: string;
  name: string;
  identity: string;
  durationSeconds: number;
  renewMs: number;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  log: Logger;
  now?: () => number;
}

export interface LeaderElection {
  start(): void;
  /** Stops trying; a holder releases the Lease (no holder) so another replica takes over at once. */
  stop(): Promise<void>;
  isLeader(): boolean;
}

/** A Lease call that has not answered within `ms` counts as failed (a hanging API server must not extend leadership). */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`the Lease call did not answer in ${ms} ms`), { code: 0 })), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function createLeaderElection(options: LeaderElectionOptions): LeaderElection {
  const { leases, namespace, name, identity, log } = options;
  const now = options.now ?? Date.now;
  const durationMs = options.durationSeconds * 1000;
  // client-go's renewDeadline: a holder gives up this long after its last successful renewal.
  const renewDeadlineMs = Math.max(options.renewMs, durationMs - options.renewMs);
  let leading = false;
  let lastRenewed = 0;
  let observed = { record: '', at: 0 };
  let timer: NodeJS.Timeout | undefined;
  let deadlineTimer: NodeJS.Timeout | undefined;
  let stopped = true;
  let round: Promise<void> = Promise.resolve();

  const withinDeadline = () => now() - lastRenewed < renewDeadlineMs;

  /** At the renew deadline (on `now`'s clock, checked again when the timer fires) leadership ends without a renewal. */
  const armDeadline = () => {
    if (deadlineTimer) clearTimeout(deadlineTimer);
    if (!leading) return;
    deadlineTimer = setTimeout(() => {
      if (!leading) return;
      if (withinDeadline()) armDeadline();
      else {
        log.warn({ lease: `${namespace}/${name}`, renewDeadlineMs }, 'no renewal of the Lease within the renew deadline');
        setLeading(false);
      }
    }, Math.max(1, lastRenewed + renewDeadlineMs - now()));
  };

  const setLeading = (value: boolean) => {
    if (value) armDeadline();
    if (value === leading) return;
    leading = value;
    log.info({ lease: `${namespace}/${name}`, identity }, value ? 'became the leader' : 'stopped leading');
    if (value) {
      armDeadline();
      options.onStartedLeading();
    } else {
      if (deadlineTimer) clearTimeout(deadlineTimer);
      options.onStoppedLeading();
    }
  };

  const spec = (previous: V1Lease | undefined) => {
    const held = previous?.spec?.holderIdentity === identity;
    return {
      holderIdentity: identity,
      leaseDurationSeconds: options.durationSeconds,
      acquireTime: held && previous?.spec?.acquireTime ? previous.spec.acquireTime : new V1MicroTime(now()),
      renewTime: new V1MicroTime(now()),
      leaseTransitions: (previous?.spec?.leaseTransitions ?? 0) + (held ? 0 : 1),
    };
  };

  /** One attempt to acquire or renew (client-go's tryAcquireOrRenew); true when this replica holds the Lease. */
  async function tryAcquireOrRenew(): Promise<boolean> {
    const current = await withTimeout(leases.read(namespace, name), renewDeadlineMs);
    if (!current) {
      await withTimeout(leases.create(namespace, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec: { ...spec(undefined), leaseTransitions: 0 } }), renewDeadlineMs);
      return true;
    }
    const holder = current.spec?.holderIdentity ?? '';
    const record = `${holder}|${String(current.spec?.renewTime ?? '')}|${current.metadata?.resourceVersion ?? ''}`;
    if (record !== observed.record) observed = { record, at: now() };
    const duration = (current.spec?.leaseDurationSeconds ?? options.durationSeconds) * 1000;
    if (holder && holder !== identity && now() < observed.at + duration) return false;
    await withTimeout(leases.replace(namespace, name, { ...current, spec: { ...current.spec, ...spec(current) } }), renewDeadlineMs);
    return true;
  }

  async function tick() {
    try {
      const started = now();
      const held = await tryAcquireOrRenew();
      // The renewal counts from when it was sent: the API server may have answered late.
      if (held) lastRenewed = started;
      setLeading(held && withinDeadline());
    } catch (error) {
      const status = statusOf(error);
      // 409: another replica wrote the Lease first; it holds it now.
      if (status === 409) setLeading(false);
      else log.warn({ err: error, lease: `${namespace}/${name}` }, 'could not renew the Lease');
      if (leading && !withinDeadline()) setLeading(false);
    }
  }

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      round = tick().finally(schedule);
    }, options.renewMs);
  };

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      round = tick().finally(schedule);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await round;
      if (deadlineTimer) clearTimeout(deadlineTimer);
      if (!leading) return;
      setLeading(false);
      try {
        const current = await withTimeout(leases.read(namespace, name), renewDeadlineMs);
        if (current?.spec?.holderIdentity === identity) {
          // client-go's ReleaseOnCancel: no holder, so the next replica need not wait out the duration.
          await withTimeout(leases.replace(namespace, name, { ...current, spec: { ...current.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: new V1MicroTime(now()) } }), renewDeadlineMs);
        }
      } catch (error) {
        log.warn({ err: error }, 'could not release the Lease; it expires on its own');
      }
    },
    isLeader: () => leading && withinDeadline(),
  };
}
