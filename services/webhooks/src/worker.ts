import { attemptDelivery, claimDue, type Claimed, type DeliveryDeps } from './deliver.ts';
import { createAttemptRecorder } from './recorder.ts';

export interface WorkerOptions {
  /** Attempts in flight at once in this process. */
  concurrency?: number;
  perEndpoint?: number;
  /** The fallback poll (notifications wake the worker sooner). */
  pollMs?: number;
  /** How long a claimed delivery is this worker's: longer than an attempt can take; after a crash, the wait before a retry. */
  leaseMs?: number;
}

/** The delivery loop of one replica: woken by notifications and a poll, it keeps up to `concurrency` attempts running. */
export function startDeliveryWorker(deps: DeliveryDeps, options: WorkerOptions = {}) {
  const concurrency = options.concurrency ?? 64;
  const perEndpoint = options.perEndpoint ?? 4;
  const inFlight = new Map<string, number>();
  let running = 0;
  let stopped = false;
  let claiming: Promise<void> | null = null;
  let again = false;
  const settled: Array<Promise<void>> = [];
  const recorder = createAttemptRecorder(deps.db, deps.log);

  const busy = () => [...inFlight].filter(([, n]) => n >= perEndpoint).map(([id]) => id);
  const claim = async (): Promise<void> => {
    do {
      again = false;
      const free = concurrency - running;
      if (stopped || free <= 0) return;
      let batch: Claimed[];
      try {
        batch = await claimDue(deps.db, { now: deps.clock(), limit: free, perEndpoint, busyEndpoints: busy(), leaseMs: options.leaseMs ?? 30_000 });
      } catch (error) {
        deps.log.error({ err: error }, 'claiming due webhook deliveries failed; retrying at the next poll');
        return;
      }
      for (const delivery of batch) start(delivery);
      if (batch.length === free) again = true;
    } while (again && !stopped);
  };
  const wake = () => {
    if (claiming) {
      again = true;
      return claiming;
    }
    claiming = claim().finally(() => (claiming = null));
    return claiming;
  };
  const start = (delivery: Claimed) => {
    running++;
    inFlight.set(delivery.endpoint_id, (inFlight.get(delivery.endpoint_id) ?? 0) + 1);
    const done = attemptDelivery(deps, delivery)
      .then((record) => {
        // The endpoint's slot is free once the receiver answered; the record follows in the next batch.
        release(delivery);
        return recorder.record(record);
      })
      .catch((error: unknown) => deps.log.error({ err: error, deliveryId: delivery.id }, 'a webhook attempt could not be recorded; its lease will expire and it is tried again'))
      .finally(() => {
        release(delivery);
        settled.splice(settled.indexOf(done), 1);
      });
    settled.push(done);
  };
  const released = new WeakSet<Claimed>();
  const release = (delivery: Claimed) => {
    if (released.has(delivery)) return;
    released.add(delivery);
    running--;
    const left = (inFlight.get(delivery.endpoint_id) ?? 1) - 1;
    if (left > 0) inFlight.set(delivery.endpoint_id, left);
    else inFlight.delete(delivery.endpoint_id);
    void wake();
  };
  const timer = setInterval(() => void wake(), options.pollMs ?? 1_000);
  timer.unref();
  void wake();
  return {
    wake,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await claiming;
      await Promise.all([...settled]);
      await recorder.flush();
    },
  };
}

export type DeliveryWorker = ReturnType<typeof startDeliveryWorker>;
