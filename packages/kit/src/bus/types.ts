import type { Logger } from '../log.ts';

/** One message handed to a consumer. Resolving the handler acknowledges it; throwing asks for a later redelivery. */
export interface BusMessage<T = unknown> {
  subject: string;
  /** The publisher's message id (`Nats-Msg-Id`), when it gave one. */
  id: string | undefined;
  data: T;
  /** 1 on the first delivery. */
  deliveryCount: number;
  /** Tells the broker the handler is still at work, so the message is not handed to someone else meanwhile. */
  working(): void;
}

export interface ConsumeOptions<T> {
  stream: string;
  /** The logical consumer: replicas with the same name share the work. See `durableNameFor`. */
  durable: string;
  subjects: readonly string[];
  handle(message: BusMessage<T>): Promise<void>;
  /** Turns the raw payload into T (and validates it). A throw terminates the message: no retry can fix it. */
  decode?: (payload: unknown, subject: string) => T;
  /** Messages handled at once in this process (default 1). */
  concurrency?: number;
  /**
   * One message at a time across every replica, in the stream's order (the durable's `max_ack_pending` is 1): for a
   * consumer whose result depends on the order, like a hash chain. Without it each replica pulls its own messages and
   * two replicas handle two messages at once, in either order. A message that fails holds the ones after it back
   * until it is handled. Implies a `concurrency` of 1.
   */
  inOrder?: boolean;
  /** Deliveries before the broker gives up on a message (default 20). */
  maxDeliver?: number;
  /** How long a delivered message may go without an ack or `working()` before it is handed out again (default 30 s). */
  ackWaitMs?: number;
  /** Delay before each redelivery after a failure, by attempt; the last repeats. */
  retryDelaysMs?: readonly number[];
  /**
   * Where a durable created now starts: `all` (default) the stream's whole history; `new` only what is published from
   * then on (a consumer for which history has no use, like webhook fan-out). An existing durable keeps its position.
   */
  startAt?: 'all' | 'new';
  log: Logger;
}

export interface RunningConsumer {
  stop(): Promise<void>;
  /** Resolves when nothing is pending or being handled (tests and drains). Bounded by `timeoutMs`. */
  idle(timeoutMs?: number): Promise<void>;
}

export interface Subscription {
  unsubscribe(): void;
}

/**
 * The platform's one event-bus interface. Two transports: NATS JetStream (`connectBus`) and memory
 * (`createMemoryBus`, for fast unit tests of consumers).
 */
export interface Bus {
  /** Durable publish to a stream; a repeated `msgId` within the duplicate window is dropped. */
  publish(subject: string, payload: unknown, options?: { msgId?: string }): Promise<void>;
  /** Best-effort fan-out to whoever listens now (progress, cache invalidation); nothing is stored. */
  notify(subject: string, payload: unknown): void;
  /** Every listener gets every notification of the subject (wildcards `*` and `>` allowed). */
  listen(subject: string, handler: (payload: unknown, subject: string) => void): Promise<Subscription>;
  /** A durable consumer of a stream. */
  consume<T>(options: ConsumeOptions<T>): Promise<RunningConsumer>;
  /** Called after the connection to the broker came back: notifications sent meanwhile were lost. */
  onReconnect(handler: () => void): Subscription;
  /** Resolves when the broker answers (readiness checks). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [1_000, 5_000, 30_000, 120_000, 600_000];

/** One naming rule for every durable consumer: one per (logical consumer, subject), since nats-server 2.9 filters one subject. */
export function durableNameFor(durable: string, subject: string): string {
  return `${durable}__${subject.replace(/[.*>]/g, '_')}`;
}

/** The logical name of a consumer in an isolated stack (`CONSUMER_PREFIX`): `<prefix><name>`. */
export function consumerName(prefix: string, name: string): string {
  return `${prefix}${name}`;
}

export function retryDelay(delays: readonly number[], attempt: number): number {
  return delays[Math.min(Math.max(attempt, 1) - 1, delays.length - 1)] ?? 0;
}

/** NATS subject matching: `*` one token, `>` one or more trailing tokens. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const want = pattern.split('.');
  const have = subject.split('.');
  for (let i = 0; i < want.length; i++) {
    if (want[i] === '>') return have.length > i;
    if (i >= have.length || (want[i] !== '*' && want[i] !== have[i])) return false;
  }
  return want.length === have.length;
}
