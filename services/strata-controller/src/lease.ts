import { CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import type { Logger } from '@sigil/kit/log';
import { statusOf } from './kube.ts';

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it (the JavaScript client
 * has none): the holder renews `renewTime` every `renewMs`; another replica takes the Lease only when it is free
 * (no holder) or its record has not changed for `leaseDurationSeconds` of this replica's own clock (so clocks of
 * different nodes never need to agree). Every write carries the resourceVersion read, so two replicas racing for a
 * free Lease cannot both win (one gets 409 Conflict). A holder whose renewals fail stops leading once its last
 * successful renewal is older than the duration minus one renewal interval: before any other replica may take over.
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
  let stopped = true;
  let round: Promise<void> = Promise.resolve();

  const setLeading = (value: boolean) => {
    if (value === leading) return;
    leading = value;
    log.info({ lease: `${namespace}/${name}`, identity }, value ? 'became the leader' : 'stopped leading');
    if (value) options.onStartedLeading();
    else options.onStoppedLeading();
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
    const current = await leases.read(namespace, name);
    if (!current) {
      await leases.create(namespace, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec: { ...spec(undefined), leaseTransitions: 0 } });
      return true;
    }
    const holder = current.spec?.holderIdentity ?? '';
    const record = `${holder}|${String(current.spec?.renewTime ?? '')}|${current.metadata?.resourceVersion ?? ''}`;
    if (record !== observed.record) observed = { record, at: now() };
    const duration = (current.spec?.leaseDurationSeconds ?? options.durationSeconds) * 1000;
    if (holder && holder !== identity && now() < observed.at + duration) return false;
    await leases.replace(namespace, name, { ...current, spec: { ...current.spec, ...spec(current) } });
    return true;
  }

  async function tick() {
    try {
      const held = await tryAcquireOrRenew();
      if (held) lastRenewed = now();
      setLeading(held);
    } catch (error) {
      const status = statusOf(error);
      // 409: another replica wrote the Lease first; it holds it now.
      if (status === 409) setLeading(false);
      else log.warn({ err: error, lease: `${namespace}/${name}` }, 'could not renew the Lease');
      if (leading && now() - lastRenewed >= renewDeadlineMs) setLeading(false);
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
      if (!leading) return;
      setLeading(false);
      try {
        const current = await leases.read(namespace, name);
        if (current?.spec?.holderIdentity === identity) {
          // client-go's ReleaseOnCancel: no holder, so the next replica need not wait out the duration.
          await leases.replace(namespace, name, { ...current, spec: { ...current.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: new V1MicroTime(now()) } });
        }
      } catch (error) {
        log.warn({ err: error }, 'could not release the Lease; it expires on its own');
      }
    },
    isLeader: () => leading,
  };
}
