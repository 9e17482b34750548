/**
 * The store sweep against the tests' S3 (s3rver): what a dry run lists, what a real pass deletes
 * (exactly the garbage, in batches of at most batchSize, reported batch by batch), and where it
 * stops on a failed delete, a refused key or an abort, leaving reported = really deleted.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { createS3Client, ensureBucket, listKeys, type S3Client } from '../src/s3.ts';
import { cutoffMs, sweepStore, type SweepOptions, type SweptBatch } from '../src/sweep.ts';
import { testFileStoreOptions } from '../src/testing.ts';

const bucket = `strata-sweep-${randomBytes(4).toString('hex')}`;
const run = `run-${randomBytes(3).toString('hex')}`;
const store = testFileStoreOptions(bucket);
let client: S3Client;
let passStartedAt: Date;

/** One scenario's objects under its own prefix, and two look-alikes outside it. */
interface Scenario {
  prefix: string;
  needed: Set<string>;
  /** Not needed, written before the pass: what a sweep deletes, key → size. */
  garbage: Map<string, number>;
  /** Not needed, written after the pass began. */
  recent: string[];
  outside: string[];
}

function scenario(name: string): Scenario {
  const prefix = `${run}/${name}/`;
  const garbageKeys = ['g/1', 'g/2', 'g/3', 'g/4', 'seg/0001', 'seg/0002', 'seg/0003', 'seg/dir/x'];
  return {
    prefix,
    needed: new Set(['keep/a', 'keep/b', 'manifest.json'].map((k) => prefix + k)),
    garbage: new Map(garbageKeys.map((k, i) => [prefix + k, 100 + i * 37])),
    recent: ['g/new-1', 'seg/new-2'].map((k) => prefix + k),
    outside: [`${run}/${name}-sibling/g/1`, `${run}/other-${name}`],
  };
}

const scenarios = Object.fromEntries(['dry', 'real', 'failed', 'flaky', 'listing', 'refused', 'abort', 'margin'].map((n) => [n, scenario(n)])) as Record<string, Scenario>;

async function put(key: string, size: number): Promise<void> {
  const body = randomBytes(size);
  await client.putObject(bucket, key, body, body.length);
}

async function keysUnder(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of listKeys(client, bucket, prefix)) keys.push(key);
  return keys.sort();
}

const sorted = (keys: Iterable<string>): string[] => [...keys].sort();
const sum = (values: Iterable<number>): number => [...values].reduce((a, b) => a + b, 0);

/** A sweep of `s` with the test's pass, no skew margin and batches of 3, recording what onBatch saw. */
function optionsFor(s: Scenario, overrides: Partial<SweepOptions> = {}): { options: SweepOptions; batches: SweptBatch[] } {
  const batches: SweptBatch[] = [];
  const options: SweepOptions = {
    client,
    bucket,
    prefix: s.prefix,
    isNeeded: (key) => s.needed.has(key),
    passStartedAt,
    skewMarginMs: 0,
    batchSize: 3,
    onBatch: (batch) => void batches.push(batch),
    ...overrides,
  };
  return { options, batches };
}

/** A client of its own whose DeleteObjects calls go through `remove` (the call's number, from 1). */
function clientWithRemove(remove: (call: number, original: S3Client['removeObjects'], ...args: Parameters<S3Client['removeObjects']>) => ReturnType<S3Client['removeObjects']>): S3Client {
  const wrapped = createS3Client(store);
  const original = wrapped.removeObjects.bind(wrapped);
  let calls = 0;
  wrapped.removeObjects = (bucketName, objects) => remove(++calls, original, bucketName, objects);
  return wrapped;
}

beforeAll(async () => {
  client = createS3Client(store);
  await ensureBucket(client, bucket, store.region);
  const all = Object.values(scenarios);
  await Promise.all(all.flatMap((s) => [...[...s.needed].map((k) => put(k, 10)), ...[...s.garbage].map(([k, size]) => put(k, size)), ...s.outside.map((k) => put(k, 7))]));
  // Last-modified times are whole seconds: the pass begins in a later second than the old objects.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  passStartedAt = new Date();
  await Promise.all(all.flatMap((s) => s.recent.map((k) => put(k, 50))));
});

describe('sweepStore', () => {
  it('a dry run lists exactly the garbage and deletes nothing', async () => {
    const s = scenarios.dry!;
    const before = await keysUnder(`${run}/`);
    const { options, batches } = optionsFor(s, { dryRun: true });
    const result = await sweepStore(options);
    expect(result.error).toBeUndefined();
    expect(sorted(result.keys)).toEqual(sorted(s.garbage.keys()));
    expect(result).toMatchObject({ objects: s.garbage.size, bytes: sum(s.garbage.values()), kept: s.needed.size + s.recent.length, recent: s.recent.length, truncated: false });
    expect(batches).toEqual([]);
    expect(await keysUnder(`${run}/`)).toEqual(before);
  });

  it('a pass deletes exactly the garbage, in batches of at most batchSize that add up to the result', async () => {
    const s = scenarios.real!;
    const { options, batches } = optionsFor(s);
    const result = await sweepStore(options);
    expect(result.error).toBeUndefined();
    expect(sorted(result.keys)).toEqual(sorted(s.garbage.keys()));
    expect(result).toMatchObject({ objects: s.garbage.size, bytes: sum(s.garbage.values()), kept: s.needed.size + s.recent.length, recent: s.recent.length });
    expect(batches.map((b) => b.keys.length)).toEqual([3, 3, 2]);
    expect(sorted(batches.flatMap((b) => b.keys))).toEqual(sorted(result.keys));
    expect(sum(batches.map((b) => b.bytes))).toBe(result.bytes);
    for (const b of batches) expect(b.bytes).toBe(sum(b.keys.map((k) => s.garbage.get(k)!)));
    expect(await keysUnder(s.prefix)).toEqual(sorted([...s.needed, ...s.recent]));
    for (const key of s.outside) expect(await keysUnder(key)).toEqual([key]);
  });

  it('stops at a failed DeleteObjects: only the batches before it are reported, and they are gone', async () => {
    const s = scenarios.failed!;
    const failing = clientWithRemove(async (call, original, ...args) => {
      if (call >= 2) throw new Error('injected: the store is down');
      return await original(...args);
    });
    const { options, batches } = optionsFor(s, { client: failing, attempts: 2 });
    const result = await sweepStore(options);
    expect(result.error).toMatch(/injected: the store is down/);
    expect(batches).toHaveLength(1);
    expect(result.objects).toBe(3);
    expect(sorted(result.keys)).toEqual(sorted(batches[0]!.keys));
    const left = await keysUnder(s.prefix);
    for (const key of batches[0]!.keys) expect(left).not.toContain(key);
    expect(left).toEqual(sorted([...s.needed, ...s.recent, ...[...s.garbage.keys()].filter((k) => !batches[0]!.keys.includes(k))]));
  });

  it('retries a DeleteObjects request that failed once and goes on', async () => {
    const s = scenarios.flaky!;
    const flaky = clientWithRemove(async (call, original, ...args) => {
      if (call === 2) throw new Error('injected: 503 SlowDown');
      return await original(...args);
    });
    const { options, batches } = optionsFor(s, { client: flaky });
    const result = await sweepStore(options);
    expect(result.error).toBeUndefined();
    expect(result.objects).toBe(s.garbage.size);
    expect(batches).toHaveLength(3);
    expect(await keysUnder(s.prefix)).toEqual(sorted([...s.needed, ...s.recent]));
  });

  it('resumes a listing that failed after the last key seen, counting no key twice', async () => {
    const s = scenarios.listing!;
    const resumedAfter: (string | undefined)[] = [];
    const breaking = createS3Client(store);
    const list = breaking.listObjectsV2.bind(breaking);
    breaking.listObjectsV2 = (bucketName, prefix, recursive, startAfter) => {
      resumedAfter.push(startAfter);
      if (resumedAfter.length > 1) return list(bucketName, prefix, recursive, startAfter);
      return Readable.from(
        (async function* () {
          let n = 0;
          for await (const item of list(bucketName, prefix, recursive, startAfter) as AsyncIterable<unknown>) {
            if (++n > 5) throw new Error('injected: listing broke');
            yield item;
          }
        })(),
      ) as never;
    };
    const { options, batches } = optionsFor(s, { client: breaking });
    const result = await sweepStore(options);
    expect(result.error).toBeUndefined();
    expect(resumedAfter).toEqual([undefined, sorted([...s.needed, ...s.garbage.keys(), ...s.recent])[4]]);
    expect(sorted(result.keys)).toEqual(sorted(s.garbage.keys()));
    expect(sum(batches.map((b) => b.keys.length))).toBe(s.garbage.size);
    expect(await keysUnder(s.prefix)).toEqual(sorted([...s.needed, ...s.recent]));
  });

  it('stops when the store refuses a key, reporting the rest of that batch that it did delete', async () => {
    const s = scenarios.refused!;
    let refusedKey = '';
    const refusing = clientWithRemove(async (call, original, bucketName, objects) => {
      if (call !== 2) return await original(bucketName, objects);
      const keys = objects as string[];
      refusedKey = keys[1]!;
      await original(bucketName, keys.filter((k) => k !== refusedKey));
      // minio-js hands back the answer's <Error> elements as they are.
      return [{ Key: refusedKey, Code: 'AccessDenied', Message: 'Access Denied' } as never];
    });
    const { options, batches } = optionsFor(s, { client: refusing });
    const result = await sweepStore(options);
    expect(result.error).toMatch(/refused to delete 1 object.*AccessDenied|Access Denied/);
    expect(batches.map((b) => b.keys.length)).toEqual([3, 2]);
    expect(batches[1]!.keys).not.toContain(refusedKey);
    expect(result.objects).toBe(5);
    const left = await keysUnder(s.prefix);
    for (const key of result.keys) expect(left).not.toContain(key);
    expect(left).toContain(refusedKey);
  });

  it('an abort stops it after the batch in flight', async () => {
    const s = scenarios.abort!;
    const controller = new AbortController();
    const { options, batches } = optionsFor(s, { signal: controller.signal, onBatch: (b) => void (batches.push(b), controller.abort(new Error('shutting down'))) });
    const result = await sweepStore(options);
    expect(result.error).toBe('aborted: shutting down');
    expect(batches).toHaveLength(1);
    expect(result.objects).toBe(3);
    const left = await keysUnder(s.prefix);
    expect(left).toHaveLength(s.needed.size + s.recent.length + s.garbage.size - 3);
    for (const key of batches[0]!.keys) expect(left).not.toContain(key);

    const aborted = await sweepStore({ ...options, signal: AbortSignal.abort() });
    expect(aborted).toMatchObject({ objects: 0, error: 'aborted: This operation was aborted' });
    expect(await keysUnder(s.prefix)).toEqual(left);
  });

  it('keeps what was written within the skew margin before the pass', async () => {
    const s = scenarios.margin!;
    const { options } = optionsFor(s, { dryRun: true, skewMarginMs: undefined });
    const result = await sweepStore(options);
    expect(result).toMatchObject({ objects: 0, kept: s.needed.size + s.recent.length + s.garbage.size, recent: s.recent.length + s.garbage.size });
    expect(cutoffMs(new Date('2026-01-01T00:01:00.700Z'), 0)).toBe(Date.parse('2026-01-01T00:01:00Z'));
    expect(cutoffMs(new Date('2026-01-01T00:01:00.700Z'), 60_000)).toBe(Date.parse('2026-01-01T00:00:00Z'));
  });

  it('an empty prefix needs wholeBucket, and then covers the whole bucket', async () => {
    const isNeeded = (): boolean => true;
    await expect(sweepStore({ client, bucket, prefix: '', isNeeded, passStartedAt })).rejects.toThrow(/wholeBucket/);
    await expect(sweepStore({ client, bucket, prefix: 'x/', wholeBucket: true, isNeeded, passStartedAt })).rejects.toThrow(/empty prefix/);
    await expect(sweepStore({ client, bucket, prefix: 'x/', batchSize: 1001, isNeeded, passStartedAt })).rejects.toThrow(/batchSize/);
    const whole = await sweepStore({ client, bucket, prefix: '', wholeBucket: true, isNeeded: () => false, passStartedAt, skewMarginMs: 0, dryRun: true });
    expect(whole.error).toBeUndefined();
    expect(whole.keys).toEqual(expect.arrayContaining(Object.values(scenarios).flatMap((s) => s.outside)));
  });
});
