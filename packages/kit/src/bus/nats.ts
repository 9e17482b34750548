import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type StreamConfig,
} from '@nats-io/jetstream';
import { EVENTS_STREAM, JOBS_STREAM } from '@sigil/proto/events';
import { STRATA_EVENTS_STREAM, STRATA_EVENTS_SUBJECTS, STRATA_JOBS_STREAM, STRATA_JOBS_SUBJECTS } from '@sigil/proto/strata-jobs';
import { retryThroughOutages } from './outage.ts';
import { DEFAULT_RETRY_DELAYS_MS, durableNameFor, retryDelay, type Bus, type BusMessage, type ConsumeOptions, type RunningConsumer } from './types.ts';

/** The NATS transport; the raw handles stay reachable for what the interface does not cover. */
export interface NatsBus extends Bus {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

const DAY_NS = 24 * 60 * 60 * 1e9;
const DUPLICATE_WINDOW_NS = 10 * 60 * 1e9;
/**
 * How long one pull request waits at the broker. A consumer that stops leaves its last pull there until it expires.
 * A message handed back during a shutdown is redelivered only after that, when no pull of the stopped consumer can
 * take it: with a short delay nats-server 2.9 was seen to lose the redelivery until the whole ack wait had passed
 * (a mover's stream job resumed after a minute instead of seconds).
 */
const PULL_EXPIRES_MS = 5_000;
const SHUTDOWN_REDELIVERY_MS = PULL_EXPIRES_MS + 1_000;

/** The platform streams. Events fan out to many durable consumers; jobs are a work queue. */
export const STREAMS: Array<Partial<StreamConfig> & { name: string }> = [
  { name: EVENTS_STREAM, subjects: ['sigil.events.>'], retention: RetentionPolicy.Limits, storage: StorageType.File, max_age: 7 * DAY_NS, duplicate_window: DUPLICATE_WINDOW_NS },
  { name: JOBS_STREAM, subjects: ['sigil.jobs.>'], retention: RetentionPolicy.Workqueue, storage: StorageType.File, duplicate_window: DUPLICATE_WINDOW_NS },
  // Strata: the mover's reports, and backup/restore jobs (work queue).
  { name: STRATA_EVENTS_STREAM, subjects: [STRATA_EVENTS_SUBJECTS], retention: RetentionPolicy.Limits, storage: StorageType.File, max_age: 7 * DAY_NS, duplicate_window: DUPLICATE_WINDOW_NS },
  { name: STRATA_JOBS_STREAM, subjects: [STRATA_JOBS_SUBJECTS], retention: RetentionPolicy.Workqueue, storage: StorageType.File, duplicate_window: DUPLICATE_WINDOW_NS },
];

export interface BusOptions {
  /**
   * Where a durable consumer of the domain events (`SIGIL_EVENTS`) created now starts when it does not say: `all`, the
   * stream's history (a deployment's first start counts what happened before it), or `new`. Stacks that share one
   * broker (test stacks) use `new`: the history there is other deployments' events.
   */
  eventConsumersStartAt?: 'all' | 'new';
}

export async function connectBus(url: string, name: string, busOptions: BusOptions = {}): Promise<NatsBus> {
  const nc = await connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
  const jsm = await jetstreamManager(nc);
  await ensureStreams(jsm);
  const js = jetstream(nc);
  return {
    nc,
    js,
    jsm,
    async publish(subject, payload, options = {}) {
      await js.publish(subject, JSON.stringify(payload), options.msgId ? { msgID: options.msgId } : undefined);
    },
    notify(subject, payload) {
      nc.publish(subject, JSON.stringify(payload));
    },
    async listen(subject, handler) {
      const subscription = nc.subscribe(subject, {
        callback: (error, msg) => {
          if (error) return;
          let payload: unknown;
          try {
            payload = JSON.parse(msg.string());
          } catch {
            return; // not ours to understand; notifications are best effort
          }
          handler(payload, msg.subject);
        },
      });
      await nc.flush();
      return { unsubscribe: () => subscription.unsubscribe() };
    },
    consume: (options) => consumeStream(js, jsm, { ...options, startAt: options.startAt ?? (options.stream === EVENTS_STREAM ? busOptions.eventConsumersStartAt : undefined) }),
    onReconnect(handler) {
      let stopped = false;
      void (async () => {
        for await (const event of nc.status()) {
          if (stopped) break;
          if (event.type === 'reconnect') handler();
        }
      })().catch(() => undefined);
      return { unsubscribe: () => void (stopped = true) };
    },
    async ping() {
      await nc.flush();
    },
    async close() {
      if (!nc.isClosed()) await nc.drain();
    },
  };
}

export async function ensureStreams(jsm: JetStreamManager, streams = STREAMS): Promise<void> {
  for (const config of streams) {
    try {
      await jsm.streams.info(config.name);
      await jsm.streams.update(config.name, config);
    } catch (error) {
      if (!/not found/i.test(String((error as Error)?.message ?? error))) throw error;
      try {
        await jsm.streams.add(config);
      } catch (addError) {
        // Another replica created it between our look-up and add.
        if (!/already in use|exists/i.test(String(addError))) throw addError;
      }
    }
  }
}

/** One durable per subject, each pulled by `concurrency` loops; a failing broker is retried with back-off, never spun on. */
async function consumeStream<T>(js: JetStreamClient, jsm: JetStreamManager, options: ConsumeOptions<T>): Promise<RunningConsumer> {
  const { stream, log, maxDeliver = 20, ackWaitMs = 30_000 } = options;
  const concurrency = options.inOrder ? 1 : Math.max(1, options.concurrency ?? 1);
  // -1 is the broker's default (its own limit); 1 serialises the durable across replicas.
  const maxAckPending = options.inOrder ? 1 : -1;
  const delays = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  const stopping = new AbortController();
  const names = options.subjects.map((subject) => durableNameFor(options.durable, subject));
  for (const [index, subject] of options.subjects.entries()) {
    const name = names[index] as string;
    const config = { durable_name: name, ack_policy: AckPolicy.Explicit, deliver_policy: options.startAt === 'new' ? DeliverPolicy.New : DeliverPolicy.All, filter_subject: subject, max_deliver: maxDeliver, ack_wait: ackWaitMs * 1e6, max_ack_pending: maxAckPending };
    try {
      await jsm.consumers.info(stream, name);
      await jsm.consumers.update(stream, name, { max_deliver: maxDeliver, ack_wait: config.ack_wait, max_ack_pending: maxAckPending });
    } catch {
      await jsm.consumers.add(stream, config);
    }
  }

  const deliver = async (msg: JsMsg): Promise<void> => {
    let data: T;
    try {
      const raw: unknown = msg.json();
      data = options.decode ? options.decode(raw, msg.subject) : (raw as T);
    } catch (error) {
      log.error({ err: error, subject: msg.subject, stream }, 'terminating a message that cannot be decoded');
      msg.term(); // no reason: nats-server 2.9 ignores '+TERM <reason>'
      return;
    }
    const message: BusMessage<T> = {
      subject: msg.subject,
      id: msg.headers?.get('Nats-Msg-Id') || undefined,
      data,
      deliveryCount: msg.info.deliveryCount,
      working: () => msg.working(),
    };
    try {
      await retryThroughOutages(() => options.handle(message), { signal: stopping.signal, working: () => msg.working(), log, subject: msg.subject });
      msg.ack();
    } catch (error) {
      const delay = stopping.signal.aborted ? Math.max(SHUTDOWN_REDELIVERY_MS, retryDelay(delays, message.deliveryCount)) : retryDelay(delays, message.deliveryCount);
      log.warn({ err: error, subject: msg.subject, attempt: message.deliveryCount, retryInMs: delay }, 'message handling failed; it will be redelivered');
      msg.nak(delay);
    }
  };

  // `concurrency` is for the whole consumer, across its subjects. A message is kept alive (`working()`) while it waits
  // for a slot and while it is handled, so the broker does not hand it to someone else meanwhile: the ack wait only
  // decides how soon the message of a consumer that died is handed out again.
  const slots = createSlots(concurrency);
  const running = new Set<Promise<void>>();
  const subscriptions: Array<{ close(): Promise<void | Error> }> = [];
  const keepAliveMs = Math.max(1_000, Math.floor(ackWaitMs / 2));
  const loops = names.map(async (name) => {
    let failures = 0;
    while (!stopping.signal.aborted) {
      try {
        const consumer = await js.consumers.get(stream, name);
        const messages = await consumer.consume({ max_messages: concurrency, expires: PULL_EXPIRES_MS });
        subscriptions.push(messages);
        if (stopping.signal.aborted) await messages.close();
        for await (const msg of messages) {
          failures = 0;
          const keepAlive = setInterval(() => msg.working(), keepAliveMs);
          const release = await slots.take(stopping.signal).then(
            (granted) => granted,
            () => undefined,
          );
          if (!release) {
            clearInterval(keepAlive);
            // Received while stopping (the rest of a batch): back to the broker, for a live consumer.
            msg.nak(SHUTDOWN_REDELIVERY_MS);
            continue;
          }
          const task = deliver(msg).finally(() => {
            clearInterval(keepAlive);
            release();
            running.delete(task);
          });
          running.add(task);
        }
      } catch (error) {
        if (stopping.signal.aborted) break;
        failures += 1;
        const backOff = Math.min(5_000, 100 * 2 ** Math.min(failures, 6));
        log.warn({ err: error, consumer: name, retryInMs: backOff }, 'could not consume from the broker; backing off');
        await sleep(backOff, undefined, { signal: stopping.signal }).catch(() => undefined);
      }
    }
  });

  return {
    async stop() {
      stopping.abort();
      await Promise.allSettled(subscriptions.map((messages) => messages.close()));
      await Promise.allSettled([...loops, ...running]);
    },
    async idle(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const infos = await Promise.all(names.map((name) => jsm.consumers.info(stream, name)));
        if (infos.every((info) => info.num_pending === 0 && info.num_ack_pending === 0)) return;
        if (Date.now() > deadline) throw new Error(`consumer ${options.durable} still busy after ${timeoutMs} ms`);
        await sleep(50);
      }
    },
  };
}

/** A counting semaphore whose waits end when `signal` aborts. */
function createSlots(size: number) {
  let free = size;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else free += 1;
  };
  return {
    async take(signal: AbortSignal): Promise<() => void> {
      if (signal.aborted) throw signal.reason;
      if (free > 0) {
        free -= 1;
        return release;
      }
      await new Promise<void>((resolve, reject) => {
        const grant = () => {
          signal.removeEventListener('abort', abort);
          resolve();
        };
        const abort = () => {
          const index = waiting.indexOf(grant);
          if (index !== -1) waiting.splice(index, 1);
          reject(signal.reason);
        };
        waiting.push(grant);
        signal.addEventListener('abort', abort, { once: true });
      });
      return release;
    },
  };
}
