// The backup's lease on its own, on the embedded S3 (which, like any store with disableConditionalPut, has no
// conditional write the lease could lean on).
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { createS3Client, ensureBucket, listKeys, type S3Client } from '@strata/stream';
import { acquireLease, leasePrefix, readClaims, StoodDownError, type Acquired, type Claim, type LeasePlace, type LeaseTiming } from '../src/jobs/backup-lease.ts';

const bucket = `mover-lease-${randomBytes(4).toString('hex')}`;
const FAST: LeaseTiming = { ttlMs: 30_000, renewMs: 100, pollMs: 50 };
let client: S3Client;

beforeAll(async () => {
  const endpoint = process.env.S3_ENDPOINT;
  if (!endpoint) throw new Error('S3_ENDPOINT is not set: run through vitest (the global setup provides S3)');
  const region = process.env.S3_REGION || 'us-east-1';
  client = createS3Client({ endpoint, region, pathStyle: true, accessKeyId: process.env.S3_ACCESS_KEY ?? '', secretAccessKey: process.env.S3_SECRET_KEY ?? '' });
  await ensureBucket(client, bucket, region);
});

const placeFor = (label: string): LeasePlace => ({ client, bucket, base: `strata/default/main/${label}-${randomBytes(4).toString('hex')}/` });

async function claimKeys(place: LeasePlace): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of listKeys(client, bucket, leasePrefix(place.base))) keys.push(key);
  return keys;
}

function held(acquired: Acquired) {
  if (acquired.kind !== 'held') throw new Error(`expected the lease, got ${acquired.kind}`);
  return acquired;
}

describe('the backup lease', () => {
  it('is held by one of two attempts asking at the same moment; the other waits, and ends when the holder releases', async () => {
    const place = placeFor('both');
    const signal = new AbortController().signal;
    const waiting: Array<{ attempt: string; holder: Claim }> = [];
    const ask = (attempt: string) => acquireLease(place, { attempt, timing: FAST, signal, onWaiting: (holder) => waiting.push({ attempt, holder }) }).then((acquired) => ({ attempt, acquired }));
    const asks = [ask('x'), ask('y')];
    const winner = await Promise.race(asks);
    const lease = held(winner.acquired).lease;
    const loser = winner.attempt === 'x' ? 'y' : 'x';
    while (waiting.length === 0) await sleep(10);
    expect(waiting).toEqual([{ attempt: loser, holder: expect.objectContaining({ attempt: winner.attempt, state: 'held' }) }]);
    expect((await readClaims(place)).map((c) => c.attempt)).toEqual([winner.attempt]);
    expect(await lease.stillHeld()).toBe(true);

    await lease.release();
    const ends = await Promise.all(asks);
    expect(ends.find((end) => end.attempt === loser)?.acquired).toEqual({ kind: 'ended elsewhere' });
    expect(await claimKeys(place)).toEqual([]);
  });

  it('is renewed while held', async () => {
    const place = placeFor('renewed');
    const lease = held(await acquireLease(place, { attempt: 'a', timing: FAST, signal: new AbortController().signal })).lease;
    const [before] = await readClaims(place);
    let after = before;
    while (after?.expiresAt === before?.expiresAt) {
      await sleep(FAST.renewMs);
      [after] = await readClaims(place);
    }
    await lease.release();
    expect(after).toMatchObject({ attempt: 'a', state: 'held', since: before!.since });
    expect(Date.parse(after!.expiresAt)).toBeGreaterThan(Date.parse(before!.expiresAt));
  });

  it('is taken over once its claim expired (a stalled or dead holder), and the earlier holder learns it lost it', async () => {
    const place = placeFor('expired');
    const stalled = held(await acquireLease(place, { attempt: 'stalled', timing: { ttlMs: 50, renewMs: 60_000, pollMs: 50 }, signal: new AbortController().signal }));
    expect(stalled.tookOver).toBe(false);
    await sleep(100);
    const next = held(await acquireLease(place, { attempt: 'next', timing: FAST, signal: new AbortController().signal }));
    expect(next.tookOver).toBe(true);
    expect(await stalled.lease.stillHeld()).toBe(false);
    expect(await next.lease.stillHeld()).toBe(true);
    await stalled.lease.release();
    expect((await readClaims(place)).map((c) => c.attempt)).toEqual(['next']);
    await next.lease.release();
    expect(await claimKeys(place)).toEqual([]);
  });

  it('removes its claim on release even when the store refuses the first removals (a burst of 500s)', async () => {
    // A client whose deletes fail for the first three tries of the removal (a multi-object delete and its one-by-one fallback each).
    let refusals = 3;
    const flaky = Object.create(client) as S3Client;
    const refuse = () => Promise.reject(new Error('We encountered an internal error. Please try again.'));
    flaky.removeObjects = ((...args: Parameters<S3Client['removeObjects']>) => (refusals > 0 ? refuse() : client.removeObjects(...args))) as S3Client['removeObjects'];
    flaky.removeObject = ((...args: Parameters<S3Client['removeObject']>) => (refusals-- > 0 ? refuse() : client.removeObject(...args))) as S3Client['removeObject'];
    const place = { ...placeFor('refused'), client: flaky };
    const holder = held(await acquireLease(place, { attempt: 'holder', timing: FAST, signal: new AbortController().signal }));
    const waited = deferredClaim();
    const waiting = acquireLease({ ...place, client }, { attempt: 'waiter', timing: FAST, signal: new AbortController().signal, onWaiting: waited.resolve });
    await waited.promise;
    await holder.lease.release();
    expect(refusals).toBe(0); // three tries refused, the fourth removed it
    expect(await waiting).toEqual({ kind: 'ended elsewhere' });
    expect(await claimKeys(place)).toEqual([]);
  });

  it('lets a waiting attempt stand down when its mover stops, leaving no claim of its own', async () => {
    const place = placeFor('stop');
    const holder = held(await acquireLease(place, { attempt: 'holder', timing: FAST, signal: new AbortController().signal }));
    const stop = new AbortController();
    const waited = deferredClaim();
    const waiting = acquireLease(place, { attempt: 'waiter', timing: FAST, signal: stop.signal, onWaiting: waited.resolve });
    await waited.promise;
    stop.abort(new Error('the mover is shutting down'));
    await expect(waiting).rejects.toBeInstanceOf(StoodDownError);
    expect((await readClaims(place)).map((c) => c.attempt)).toEqual(['holder']);
    await holder.lease.release();
  });
});

function deferredClaim(): { promise: Promise<Claim>; resolve(claim: Claim): void } {
  let resolve!: (claim: Claim) => void;
  const promise = new Promise<Claim>((r) => (resolve = r));
  return { promise, resolve };
}
