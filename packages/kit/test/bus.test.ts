import { afterAll, describe, expect, it } from 'vitest';
import { randomBase62 } from '@sigil/proto';
import { connectBus, createMemoryBus, subjectMatches, type Bus, type BusMessage } from '../src/bus/index.ts';
import { AppError } from '../src/errors.ts';
import { silentLogger, testNatsUrl } from '../src/testing.ts';

const log = silentLogger();
const opened: Bus[] = [];
afterAll(async () => {
  await Promise.all(opened.map((bus) => bus.close()));
});

/** Waits until `ready()` holds, checking every 10 ms for at most `ms`. */
async function until(ready: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// The same behaviour from both transports: what a consumer's unit test sees on memory is what production sees on NATS.
describe.each([
  ['memory', async () => createMemoryBus()],
  ['nats', async () => connectBus(testNatsUrl(), 'kit-bus-test')],
] as const)('the %s bus', (_name, open) => {
  const fresh = async () => {
    const bus = await open();
    opened.push(bus);
    // Subjects of the events stream, unique per test so runs and transports never see each other's messages.
    return { bus, subject: `sigil.events.bustest.${randomBase62(10)}`, durable: `bustest_${randomBase62(10)}` };
  };

  it('delivers each published message once, dropping a repeated id', async () => {
    const { bus, subject, durable } = await fresh();
    await bus.publish(subject, { n: 1 }, { msgId: `${durable}-1` });
    await bus.publish(subject, { n: 1 }, { msgId: `${durable}-1` });
    await bus.publish(subject, { n: 2 }, { msgId: `${durable}-2` });
    const seen: BusMessage<{ n: number }>[] = [];
    const consumer = await bus.consume<{ n: number }>({ stream: 'SIGIL_EVENTS', durable, subjects: [subject], log, handle: async (m) => void seen.push(m) });
    await until(() => seen.length >= 2);
    await consumer.idle();
    await consumer.stop();
    expect(seen.map((m) => m.data.n)).toEqual([1, 2]);
    expect(seen.map((m) => m.id)).toEqual([`${durable}-1`, `${durable}-2`]);
    expect(seen.every((m) => m.subject === subject && m.deliveryCount === 1)).toBe(true);
  });

  /** Publishes one message and answers the delivery count of each attempt, the handler failing with `failure(attempt)` until it answers undefined. */
  const attemptsOf = async (retryDelaysMs: number[], failure: (attempt: number, deliveryCount: number) => Error | undefined, expected: number): Promise<number[]> => {
    const { bus, subject, durable } = await fresh();
    const attempts: number[] = [];
    const consumer = await bus.consume<{ n: number }>({
      stream: 'SIGIL_EVENTS',
      durable,
      subjects: [subject],
      log,
      retryDelaysMs,
      handle: async (m) => {
        attempts.push(m.deliveryCount);
        const error = failure(attempts.length, m.deliveryCount);
        if (error) throw error;
      },
    });
    await bus.publish(subject, { n: 1 });
    await until(() => attempts.length >= expected, 20_000);
    await consumer.idle();
    await consumer.stop();
    return attempts;
  };

  it('redelivers a message whose handling failed, with a higher delivery count', async () => {
    expect(await attemptsOf([0], (_attempt, deliveryCount) => (deliveryCount < 3 ? new Error('not yet') : undefined), 3)).toEqual([1, 2, 3]);
  });

  it('retries a handler that met an unavailable dependency within the same delivery, without climbing the retry schedule', async () => {
    const unavailable = () => new AppError('service-unavailable', 'The templates service did not answer; try again.', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    // A failure of the message itself would wait an hour: only the outage schedule can bring the next attempt.
    expect(await attemptsOf([3_600_000], (attempt) => (attempt < 4 ? unavailable() : undefined), 4)).toEqual([1, 1, 1, 1]);
  });

  it('hands a message that was being handled when its consumer stopped to the next consumer, long before the ack wait', async () => {
    const { bus, durable } = await fresh();
    const subject = `sigil.jobs.bustest.${randomBase62(10)}`; // a work queue, as jobs are
    let begun!: () => void;
    const handling = new Promise<void>((resolve) => (begun = resolve));
    let finish!: () => void;
    const stopped = new Promise<void>((resolve) => (finish = resolve));
    const first = await bus.consume<{ n: number }>({
      // Room for more than one message: its pull request outlives the consumer at the broker.
      stream: 'SIGIL_JOBS', durable, subjects: [subject], log, ackWaitMs: 60_000, retryDelaysMs: [500], concurrency: 4,
      handle: async () => {
        begun();
        await stopped;
        throw new Error('the process is shutting down');
      },
    });
    await bus.publish(subject, { n: 1 });
    await handling;
    const stopping = first.stop();
    finish();
    await stopping;
    const attempts: number[] = [];
    const second = await bus.consume<{ n: number }>({ stream: 'SIGIL_JOBS', durable, subjects: [subject], log, ackWaitMs: 60_000, handle: async (m) => void attempts.push(m.deliveryCount) });
    await until(() => attempts.length > 0, 20_000);
    await second.stop();
    expect(attempts).toEqual([2]);
  }, 30_000);

  it('terminates a message that cannot be decoded and goes on with the next', async () => {
    const { bus, subject, durable } = await fresh();
    const handled: number[] = [];
    const consumer = await bus.consume<{ n: number }>({
      stream: 'SIGIL_EVENTS',
      durable,
      subjects: [subject],
      log,
      retryDelaysMs: [0],
      decode: (payload) => {
        const n = (payload as { n?: unknown }).n;
        if (typeof n !== 'number') throw new Error('no n');
        return { n };
      },
      handle: async (m) => void handled.push(m.data.n),
    });
    await bus.publish(subject, { wrong: true });
    await bus.publish(subject, { n: 7 });
    await until(() => handled.length >= 1);
    await consumer.idle();
    await consumer.stop();
    expect(handled).toEqual([7]);
  });

  it('shares the work of one durable between consumers and runs at most `concurrency` at once', async () => {
    const { bus, subject, durable } = await fresh();
    let running = 0;
    let most = 0;
    const done: number[] = [];
    const handle = async (m: BusMessage<{ n: number }>) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
      done.push(m.data.n);
    };
    const a = await bus.consume({ stream: 'SIGIL_EVENTS', durable, subjects: [subject], log, concurrency: 2, handle });
    for (let n = 0; n < 10; n++) await bus.publish(subject, { n });
    await until(() => done.length >= 10);
    await a.idle();
    await a.stop();
    expect([...done].sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(most).toBeLessThanOrEqual(2);
  });

  it('handles an in-order durable one message at a time across its consumers, in the stream\'s order, a failure holding the rest back', async () => {
    const { bus, subject, durable } = await fresh();
    let running = 0;
    let most = 0;
    let failedOnce = false;
    const done: number[] = [];
    const handle = async (m: BusMessage<{ n: number }>) => {
      running += 1;
      most = Math.max(most, running);
      try {
        await new Promise((resolve) => setTimeout(resolve, (m.data.n * 7) % 5)); // later messages are sometimes quicker
        if (m.data.n === 3 && !failedOnce) {
          failedOnce = true;
          throw new Error('the database is away for a moment');
        }
        done.push(m.data.n);
      } finally {
        running -= 1;
      }
    };
    // Two replicas of one consumer.
    const options = { stream: 'SIGIL_EVENTS', durable, subjects: [subject], log, inOrder: true, retryDelaysMs: [20], handle };
    const [a, b] = [await bus.consume(options), await bus.consume(options)];
    for (let n = 0; n < 12; n++) await bus.publish(subject, { n });
    await until(() => done.length >= 12, 15_000);
    await Promise.all([a.idle(), b.idle()]);
    await Promise.all([a.stop(), b.stop()]);
    expect(done).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(most).toBe(1);
    expect(failedOnce).toBe(true);
  });

  it('fans notifications out to every listener of a matching subject', async () => {
    const { bus, subject } = await fresh();
    const got: Array<[unknown, string]> = [];
    const first = await bus.listen(`${subject}.*`, (payload, at) => got.push([payload, at]));
    const second = await bus.listen(`${subject}.>`, (payload, at) => got.push([payload, at]));
    bus.notify(`${subject}.x`, { hello: 1 });
    bus.notify(`${subject}.x.y`, { hello: 2 });
    await until(() => got.length >= 3);
    first.unsubscribe();
    second.unsubscribe();
    expect(got).toEqual(
      expect.arrayContaining([
        [{ hello: 1 }, `${subject}.x`],
        [{ hello: 1 }, `${subject}.x`],
        [{ hello: 2 }, `${subject}.x.y`],
      ]),
    );
    expect(got).toHaveLength(3);
  });
});

describe('a bus of a stack that shares the broker', () => {
  it('starts its new consumers of the domain events at the stream\'s end; one that says `all` still reads the history', async () => {
    const bus = await connectBus(testNatsUrl(), 'kit-bus-test-new', { eventConsumersStartAt: 'new' });
    opened.push(bus);
    const subject = `sigil.events.bustest.${randomBase62(10)}`;
    await bus.publish(subject, { n: 1 });
    const seen: number[] = [];
    const history: number[] = [];
    const fresh = await bus.consume<{ n: number }>({ stream: 'SIGIL_EVENTS', durable: `bustest_${randomBase62(10)}`, subjects: [subject], log, handle: async (m) => void seen.push(m.data.n) });
    const reader = await bus.consume<{ n: number }>({ stream: 'SIGIL_EVENTS', durable: `bustest_${randomBase62(10)}`, subjects: [subject], startAt: 'all', log, handle: async (m) => void history.push(m.data.n) });
    await bus.publish(subject, { n: 2 });
    await until(() => seen.length >= 1 && history.length >= 2);
    await Promise.all([fresh.idle(), reader.idle()]);
    await Promise.all([fresh.stop(), reader.stop()]);
    expect(seen).toEqual([2]);
    expect(history).toEqual([1, 2]);
  });
});

describe('subjects', () => {
  it('match NATS wildcards token by token', () => {
    expect(subjectMatches('a.*.c', 'a.b.c')).toBe(true);
    expect(subjectMatches('a.*', 'a.b.c')).toBe(false);
    expect(subjectMatches('a.>', 'a.b.c')).toBe(true);
    expect(subjectMatches('a.>', 'a')).toBe(false);
    expect(subjectMatches('a.b', 'a.b')).toBe(true);
    expect(subjectMatches('a.b', 'a.bc')).toBe(false);
  });
});
