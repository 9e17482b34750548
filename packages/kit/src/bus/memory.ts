import { setTimeout as sleep } from 'node:timers/promises';
import { retryThroughOutages } from './outage.ts';
import { DEFAULT_RETRY_DELAYS_MS, retryDelay, subjectMatches, type Bus, type BusMessage, type ConsumeOptions, type RunningConsumer } from './types.ts';

interface StoredMessage {
  seq: number;
  subject: string;
  id: string | undefined;
  /** Serialised like on the wire, so a consumer never shares objects with the publisher. */
  json: string;
}

interface Pending {
  message: StoredMessage;
  deliveries: number;
  /** Not before this time (a redelivery after a failure). */
  dueAt: number;
}

/** One logical consumer (stream + durable + subjects): every `consume` with the same name shares its queue. */
interface Group {
  stream: string;
  subjects: readonly string[];
  queue: Pending[];
  inFlight: number;
  wake: () => void;
  changed: Promise<void>;
}

export interface MemoryBus extends Bus {
  /** Everything published so far, in order (for assertions). */
  published(): Array<{ subject: string; id: string | undefined; payload: unknown }>;
}

/**
 * The in-memory transport of the bus, for unit tests of consumers and publishers: durable publishes are kept and
 * de-duplicated by id, every logical consumer sees every matching message from the start (like a JetStream consumer
 * with DeliverPolicy.All), a failed handling is redelivered after its delay, an undecodable message is dropped.
 * `streams` maps a stream name to its subject patterns; without it every stream holds every subject.
 */
export function createMemoryBus(options: { streams?: Record<string, readonly string[]> } = {}): MemoryBus {
  const log: StoredMessage[] = [];
  const seenIds = new Set<string>();
  const groups = new Map<string, Group>();
  const listeners = new Set<{ pattern: string; handler: (payload: unknown, subject: string) => void }>();
  let seq = 0;

  const inStream = (stream: string, subject: string) => {
    const patterns = options.streams?.[stream];
    return !patterns || patterns.some((pattern) => subjectMatches(pattern, subject));
  };
  const offer = (group: Group, message: StoredMessage) => {
    if (!inStream(group.stream, message.subject) || !group.subjects.some((s) => subjectMatches(s, message.subject))) return;
    group.queue.push({ message, deliveries: 0, dueAt: 0 });
    group.wake();
  };
  const newGroup = (stream: string, subjects: readonly string[]): Group => {
    const group: Group = { stream, subjects, queue: [], inFlight: 0, wake: () => undefined, changed: Promise.resolve() };
    rearm(group);
    for (const message of log) offer(group, message);
    return group;
  };

  return {
    async publish(subject, payload, publishOptions = {}) {
      const id = publishOptions.msgId;
      if (id !== undefined) {
        if (seenIds.has(id)) return;
        seenIds.add(id);
      }
      const message = { seq: ++seq, subject, id, json: JSON.stringify(payload) };
      log.push(message);
      for (const group of groups.values()) offer(group, message);
    },
    notify(subject, payload) {
      const json = JSON.stringify(payload);
      for (const listener of [...listeners]) if (subjectMatches(listener.pattern, subject)) listener.handler(JSON.parse(json), subject);
    },
    async listen(subject, handler) {
      const listener = { pattern: subject, handler };
      listeners.add(listener);
      return { unsubscribe: () => void listeners.delete(listener) };
    },
    async consume<T>(consumeOptions: ConsumeOptions<T>): Promise<RunningConsumer> {
      const key = `${consumeOptions.stream}/${consumeOptions.durable}/${consumeOptions.subjects.join(',')}`;
      let group = groups.get(key);
      if (!group) {
        group = newGroup(consumeOptions.stream, consumeOptions.subjects);
        groups.set(key, group);
      }
      return runGroup(group, consumeOptions);
    },
    onReconnect: () => ({ unsubscribe: () => undefined }),
    async ping() {},
    async close() {
      listeners.clear();
    },
    published: () => log.map((m) => ({ subject: m.subject, id: m.id, payload: JSON.parse(m.json) as unknown })),
  };
}

function rearm(group: Group): void {
  group.changed = new Promise((resolve) => {
    group.wake = () => {
      resolve();
      rearm(group);
    };
  });
}

function runGroup<T>(group: Group, options: ConsumeOptions<T>): RunningConsumer {
  const { log, maxDeliver = 20 } = options;
  const delays = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  const stopping = new AbortController();
  const stopped = new Promise<void>((resolve) => stopping.signal.addEventListener('abort', () => resolve()));

  const take = (): Pending | undefined => {
    const now = Date.now();
    if (options.inOrder) {
      // The head only, and only while no consumer of the group handles one (as the broker's max_ack_pending of 1).
      const head = group.queue[0];
      return group.inFlight === 0 && head && head.dueAt <= now ? group.queue.shift() : undefined;
    }
    const index = group.queue.findIndex((pending) => pending.dueAt <= now);
    return index === -1 ? undefined : group.queue.splice(index, 1)[0];
  };
  const handleOne = async (pending: Pending): Promise<void> => {
    pending.deliveries += 1;
    let data: T;
    try {
      const raw = JSON.parse(pending.message.json) as unknown;
      data = options.decode ? options.decode(raw, pending.message.subject) : (raw as T);
    } catch (error) {
      log.error({ err: error, subject: pending.message.subject }, 'terminating a message that cannot be decoded');
      return;
    }
    const message: BusMessage<T> = { subject: pending.message.subject, id: pending.message.id, data, deliveryCount: pending.deliveries, working: () => undefined };
    try {
      await retryThroughOutages(() => options.handle(message), { signal: stopping.signal, working: () => undefined, log, subject: message.subject });
    } catch (error) {
      if (pending.deliveries >= maxDeliver) {
        log.error({ err: error, subject: message.subject, attempt: pending.deliveries }, 'giving up on a message after its last delivery');
        return;
      }
      const delay = retryDelay(delays, pending.deliveries);
      log.warn({ err: error, subject: message.subject, attempt: pending.deliveries, retryInMs: delay }, 'message handling failed; it will be redelivered');
      pending.dueAt = Date.now() + delay;
      if (options.inOrder) group.queue.unshift(pending); // it holds the ones after it back
      else group.queue.push(pending);
      if (delay > 0) void sleep(delay, undefined, { signal: stopping.signal }).then(() => group.wake(), () => undefined);
    }
  };
  const loops = Array.from({ length: options.inOrder ? 1 : Math.max(1, options.concurrency ?? 1) }, async () => {
    while (!stopping.signal.aborted) {
      const pending = take();
      if (!pending) {
        // A message waiting for its retry is taken when it is due, even if the timer that wakes the group fired a
        // millisecond early by the clock (which left it waiting for a wake that never came).
        const due = group.queue.reduce((first, p) => Math.min(first, p.dueAt), Number.POSITIVE_INFINITY);
        const waitForDue = Number.isFinite(due) ? [sleep(Math.max(1, due - Date.now() + 1), undefined, { signal: stopping.signal }).catch(() => undefined)] : [];
        await Promise.race([group.changed, stopped, ...waitForDue]);
        continue;
      }
      group.inFlight += 1;
      try {
        await handleOne(pending);
      } finally {
        group.inFlight -= 1;
        group.wake();
      }
    }
  });

  return {
    async stop() {
      stopping.abort();
      await Promise.allSettled(loops);
    },
    async idle(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (group.queue.length > 0 || group.inFlight > 0) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`consumer ${options.durable} still busy after ${timeoutMs} ms`);
        await Promise.race([group.changed, sleep(Math.min(left, 50))]);
      }
    },
  };
}
