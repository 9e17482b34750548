import { createHash, randomBytes } from 'node:crypto';
import { setImmediate as tick } from 'node:timers/promises';
import { PassThrough, Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { createByteCounter, createCoalescer, createHashTap, createManualClock, createStallWatchdog, createVirtualClock, createThrottle, stallMessage } from '../src/taps.ts';

async function drain(stream: AsyncIterable<Buffer>): Promise<number> {
  let n = 0;
  for await (const c of stream) n += c.length;
  return n;
}

describe('hash tap and byte counter', () => {
  it('hashes and counts what passes, digest only after the end', async () => {
    const data = randomBytes(1_000_003);
    const tap = createHashTap();
    let seen = 0;
    const counter = createByteCounter((chunk, total) => {
      seen += chunk;
      expect(total).toBe(seen);
    });
    expect(() => tap.digest()).toThrow(/before the stream ended/);
    const out = await (async () => {
      let n = 0;
      await pipeline(Readable.from([data.subarray(0, 10), data.subarray(10, 500_000), data.subarray(500_000)]), tap, counter, async (s: AsyncIterable<Buffer>) => {
        n = await drain(s);
      });
      return n;
    })();
    expect(out).toBe(data.length);
    expect(tap.bytes).toBe(data.length);
    expect(counter.bytes).toBe(data.length);
    expect(seen).toBe(data.length);
    expect(tap.digest()).toBe(createHash('sha256').update(data).digest('hex'));
  });

  it('empty input has the SHA-256 of nothing', async () => {
    const tap = createHashTap();
    await pipeline(Readable.from([]), tap, async (s: AsyncIterable<Buffer>) => drain(s));
    expect(tap.digest()).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});

describe('throttle', () => {
  it('paces output to the rate with a manual clock (token bucket, debt for big chunks)', async () => {
    const clock = createManualClock();
    const rate = 1_000_000; // bytes per second; the bucket holds 250 kB
    const throttle = createThrottle(rate, clock);
    const chunk = Buffer.alloc(100_000);
    const total = 30;
    const arrivals: number[] = [];
    throttle.on('data', () => arrivals.push(clock.now()));
    const source = Readable.from(Array.from({ length: total }, () => chunk));
    const done = pipeline(source, throttle, new PassThrough().resume());
    for (let i = 0; i < 10_000 && arrivals.length < total; i++) {
      await tick();
      clock.advance(10);
    }
    await done;
    expect(arrivals).toHaveLength(total);
    // 3 MB at 1 MB/s, minus the initial bucket: 2.75 s of simulated time, give or take a step.
    const elapsed = arrivals.at(-1)! - arrivals[0]!;
    expect(elapsed).toBeGreaterThanOrEqual(2_700);
    expect(elapsed).toBeLessThanOrEqual(2_900);
    // Never more than the bucket ahead of the rate at any moment.
    arrivals.forEach((t, i) => expect((i + 1) * chunk.length).toBeLessThanOrEqual(250_000 + (t * rate) / 1000 + chunk.length));
    expect(clock.pending()).toBe(0);
  });

  it('a chunk larger than the bucket passes, and the next waits for the debt', async () => {
    const clock = createManualClock();
    const throttle = createThrottle(100_000, clock); // bucket 64 KiB
    const times: number[] = [];
    throttle.on('data', () => times.push(clock.now()));
    throttle.write(Buffer.alloc(300_000));
    throttle.write(Buffer.alloc(1));
    for (let i = 0; i < 1000 && times.length < 2; i++) {
      await tick();
      clock.advance(50);
    }
    expect(times).toHaveLength(2);
    // 300 kB against a 65.5 kB bucket at 100 kB/s: about 2.35 s before the first chunk leaves.
    expect(times[0]).toBeGreaterThanOrEqual(2_300);
    expect(times[1]! - times[0]!).toBeLessThanOrEqual(50);
    throttle.destroy();
  });

  it('0 is unlimited; destroy clears a pending wait', async () => {
    const unlimited = createThrottle(0);
    expect(await (async () => {
      let n = 0;
      await pipeline(Readable.from([randomBytes(5_000_000)]), unlimited, async (s: AsyncIterable<Buffer>) => {
        n = await drain(s);
      });
      return n;
    })()).toBe(5_000_000);
    const clock = createManualClock();
    const slow = createThrottle(1000, clock);
    slow.resume();
    slow.write(Buffer.alloc(100_000));
    slow.write(Buffer.alloc(100_000));
    await tick();
    expect(clock.pending()).toBe(1);
    slow.destroy();
    expect(clock.pending()).toBe(0);
    expect(() => createThrottle(-1)).toThrow(/bandwidth/);
  });

  it('in a real pipeline, 300 kB at 1 MB/s takes 50 ms past the 250 kB bucket (clock time)', async () => {
    const clock = createVirtualClock();
    await pipeline(Readable.from(Array.from({ length: 30 }, () => Buffer.alloc(10_000))), createThrottle(1_000_000, clock), new PassThrough().resume());
    expect(clock.now()).toBeGreaterThanOrEqual(50);
    expect(clock.now()).toBeLessThan(60);
  });
});

describe('stall watchdog', () => {
  it('fires once after the timeout without bytes, not while bytes flow, and stops at the end', async () => {
    const clock = createManualClock();
    let stalls = 0;
    const dog: Transform = createStallWatchdog(60_000, () => stalls++, clock);
    dog.resume();
    for (let i = 0; i < 10; i++) {
      clock.advance(50_000);
      dog.write(Buffer.from('x'));
      await tick();
    }
    expect(stalls).toBe(0);
    clock.advance(59_999);
    expect(stalls).toBe(0);
    clock.advance(1);
    expect(stalls).toBe(1);
    clock.advance(600_000);
    expect(stalls).toBe(1);
    expect(clock.pending()).toBe(0);

    const ending = createStallWatchdog(1000, () => stalls++, clock);
    ending.resume();
    ending.end(Buffer.from('done'));
    await new Promise((resolve) => ending.once('end', resolve));
    expect(clock.pending()).toBe(0);
    clock.advance(5000);
    expect(stalls).toBe(1);

    const destroyed = createStallWatchdog(1000, () => stalls++, clock);
    expect(clock.pending()).toBe(1);
    destroyed.destroy();
    expect(clock.pending()).toBe(0);
    expect(() => createStallWatchdog(-5, () => {})).toThrow(/stall timeout/);
  });

  it('with pauseWhileBackpressured, a consumer that stops reading is not a stall, a silent producer is', async () => {
    const clock = createManualClock();
    let stalls = 0;
    const dog = createStallWatchdog(10_000, () => stalls++, clock, { pauseWhileBackpressured: true });
    // Nobody reads: bytes wait in the watchdog for ten minutes (an index build on the restore side).
    dog.write(Buffer.alloc(100_000));
    for (let i = 0; i < 600; i++) clock.advance(1000);
    expect(stalls).toBe(0);
    // The consumer drains it; then the producer is silent.
    dog.resume();
    await tick();
    clock.advance(9_999);
    expect(stalls).toBe(0);
    clock.advance(1);
    expect(stalls).toBe(1);
    // Without the option the same consumer pause is a stall.
    const strict = createStallWatchdog(10_000, () => stalls++, clock);
    strict.write(Buffer.alloc(100_000));
    clock.advance(10_000);
    expect(stalls).toBe(2);
    strict.destroy();
  });

  it('catches a source that never starts, and a pipeline torn down with its message', async () => {
    const clock = createVirtualClock();
    const hanging = new Readable({ read() {} });
    hanging.push(Buffer.from('some bytes, then nothing'));
    const dog = createStallWatchdog(100, () => dog.destroy(new Error(stallMessage(100))), clock);
    await expect(pipeline(hanging, dog, new PassThrough().resume())).rejects.toThrow('no data flowed for 100ms');
    expect(clock.now()).toBe(100);
    expect(hanging.destroyed).toBe(true);
    expect(stallMessage(60_000)).toBe('no data flowed for 60s');
    expect(stallMessage(1500)).toBe('no data flowed for 1.5s');
  });
});

describe('createCoalescer', () => {
  it('passes every byte in order in blocks of at least the target size, and the rest at the end', async () => {
    const input = Array.from({ length: 40 }, (_, i) => Buffer.alloc(1000, i));
    const blocks: Buffer[] = [];
    const coalescer = createCoalescer(4096);
    coalescer.on('data', (block: Buffer) => blocks.push(block));
    await pipeline(Readable.from(input), coalescer);
    expect(Buffer.concat(blocks).equals(Buffer.concat(input))).toBe(true);
    expect(blocks.slice(0, -1).every((b) => b.length >= 4096)).toBe(true);
    expect(blocks).toHaveLength(8); // 5 chunks of 1000 bytes pass 4096
  });
});
