import { describe, expect, it } from 'vitest';
import { runTogether } from '../src/engines/together.ts';

/** A promise settled from outside, and whether it has settled yet. */
function pending<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const state = { settled: false };
  const promise = new Promise<T>((res, rej) => {
    resolve = (value) => {
      state.settled = true;
      res(value);
    };
    reject = (error) => {
      state.settled = true;
      rej(error);
    };
  });
  return { promise, resolve, reject, state };
}

describe('runTogether', () => {
  it("returns the feeder's value once both have finished", async () => {
    await expect(runTogether(Promise.resolve(42), Promise.resolve(), () => expect.unreachable('nothing failed'))).resolves.toBe(42);
  });

  it('stops the consumer when the feeder fails, and throws only after the consumer has settled', async () => {
    const consumer = pending<void>();
    let stops = 0;
    const run = runTogether(Promise.reject(new Error('checksum mismatch')), consumer.promise, () => {
      stops += 1;
      // The consumer (pg_restore) is killed and drops its database before it settles.
      setTimeout(() => consumer.reject(new Error('pg_restore was stopped')), 20);
    });
    let thrownWhileConsumerRan: boolean | undefined;
    await run.catch((error: unknown) => {
      thrownWhileConsumerRan = !consumer.state.settled;
      expect((error as Error).message).toBe('checksum mismatch');
    });
    expect(thrownWhileConsumerRan).toBe(false);
    expect(stops).toBe(1);
  });

  it("stops the feeder when the consumer fails first, and throws the consumer's error", async () => {
    const feeder = pending<number>();
    let stops = 0;
    const run = runTogether(feeder.promise, Promise.reject(new Error('pg_restore: relation exists')), () => {
      stops += 1;
      setTimeout(() => feeder.reject(new Error('write after end')), 20);
    });
    await expect(run).rejects.toThrow('pg_restore: relation exists');
    expect(feeder.state.settled).toBe(true);
    expect(stops).toBe(1);
  });
});
