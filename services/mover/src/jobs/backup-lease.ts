/**
 * The lease on a backup: at most one attempt of a backup works under the backup's prefix at a time, across movers.
 * Without it a job redelivered while its first attempt still ran (a heartbeat late on a starved event loop) cleared the
 * prefix, lost the manifest's put to the first attempt, removed everything in its failure path and reported the
 * finished backup Failed.
 *
 * Each attempt keeps a claim of its own beside the backup's objects, `<backup prefix>lease/<attempt>.json`. To take the
 * lease an attempt writes its claim (state `claiming`), then lists the claims: it holds the lease when no other live
 * claim is listed, and marks its claim `held`; otherwise it removes its claim and waits. Of two attempts that claim,
 * the one that lists last sees the other's claim (written before the other listed), so two attempts never both hold;
 * two that claim at the same moment see each other and both step back, then try again after a random delay. This needs
 * only read-after-write listing, which every S3 store gives. A single lock object written with `If-None-Match: *` (the manifest's
 * conditional put) would not do: the embedded store, like any store with `disableConditionalPut`, ignores the
 * condition, and taking over an expired lock would need a second, compare-and-swap write.
 *
 * The holder renews its claim every `renewMs`; a claim past its expiry is a dead attempt's (a mover that was killed)
 * and the next attempt takes over. Expiry is read on the reader's clock from the holder's: the TTL, minutes, is far
 * longer than the job's ack wait (60 s) and than any skew between movers.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { readSmallObject, removeObjects, type S3Client } from '@strata/stream';

export interface LeaseTiming {
  /** How long a claim stays live without renewal. */
  ttlMs: number;
  /** How often the holder renews its claim. */
  renewMs: number;
  /** How often an attempt waiting for another looks at the claims again. */
  pollMs: number;
}

export const LEASE_TIMING: LeaseTiming = { ttlMs: 5 * 60_000, renewMs: 20_000, pollMs: 5_000 };

/** One attempt's claim, as stored. */
export interface Claim {
  attempt: string;
  /** `mover@<host>`, for logs. */
  holder: string;
  state: 'claiming' | 'held';
  /** When the claim was marked held: after a takeover the later holder keeps the lease (see `stillHeld`). */
  since: string;
  expiresAt: string;
}

/** Where a backup's claims are. */
export interface LeasePlace {
  client: S3Client;
  bucket: string;
  /** The backup's prefix (ends with '/'). */
  base: string;
}

export interface HeldLease {
  /** False once another attempt took the lease over (this one's claim expired while its mover was stalled). */
  stillHeld(): Promise<boolean>;
  /** Stops renewing and removes the claim; never throws (a claim left behind expires). */
  release(): Promise<void>;
}

export type Acquired =
  /** `tookOver`: a dead attempt's claim was found, whose end (and report) nobody saw. */
  | { kind: 'held'; lease: HeldLease; tookOver: boolean }
  /** An attempt seen holding the lease released it: it ended the backup and reports the outcome itself. */
  | { kind: 'ended elsewhere' };

export interface AcquireOptions {
  /** This attempt's id (default: a random one). */
  attempt?: string | undefined;
  timing?: Partial<LeaseTiming> | undefined;
  signal: AbortSignal;
  /** Called once, when this attempt starts waiting for the holder. */
  onWaiting?: ((holder: Claim) => void) | undefined;
}

/** Waiting for another attempt was cut short (the mover stops, or the store failed): this attempt did nothing. */
export class StoodDownError extends Error {
  constructor(base: string, options: ErrorOptions) {
    super(`another attempt holds the backup at ${base}; this one stood down: ${(options.cause as Error | undefined)?.message ?? 'stopped'}`, options);
    this.name = 'StoodDownError';
  }
}

export const leasePrefix = (base: string): string => `${base}lease/`;
const claimKey = (base: string, attempt: string): string => `${leasePrefix(base)}${attempt}.json`;
const isLive = (claim: Claim, now = Date.now()): boolean => Date.parse(claim.expiresAt) > now;

/**
 * Takes the backup's lease, waiting while another attempt holds it. Ends as soon as a holder it saw released the lease
 * (`ended elsewhere`): that attempt finished the backup one way or the other and reported it.
 */
export async function acquireLease(place: LeasePlace, options: AcquireOptions): Promise<Acquired> {
  const me: Attempt = { attempt: options.attempt ?? randomUUID(), holder: `mover@${hostname()}`, timing: { ...LEASE_TIMING, ...options.timing } };
  const seen = new HolderWatch(me.attempt);
  let failures = 0;
  for (;;) {
    try {
      options.signal.throwIfAborted();
      const rivals = seen.update(await readClaims(place, me.timing.ttlMs));
      if (rivals.length === 0) {
        if (seen.ended) return { kind: 'ended elsewhere' };
        const taken = await tryTake(place, me, seen);
        if (taken) return taken;
      }
      const holder = rivals.find((claim) => claim.state === 'held');
      if (holder && !seen.announced) {
        seen.announced = true;
        options.onWaiting?.(holder);
      }
      // A holder may keep the lease for hours: look again now and then. A contender still claiming settles in a moment.
      const pause = holder ? me.timing.pollMs : Math.min(me.timing.pollMs, 250);
      await sleep(pause * (0.5 + Math.random()), undefined, { signal: options.signal });
      failures = 0;
    } catch (error) {
      // Before any other attempt was seen this is the backup's own failure (no bucket, no access): reported as such.
      if (!seen.any) throw error;
      // While another attempt holds the backup, a store that fails once (a 500 under load) is asked again.
      failures += 1;
      if (options.signal.aborted || failures >= WAIT_FAILURES) throw new StoodDownError(place.base, { cause: error });
      await sleep(me.timing.pollMs, undefined, { signal: options.signal }).catch(() => undefined);
    }
  }
}

/** Failures of the store in a row after which an attempt waiting for another stands down (the job is offered again). */
const WAIT_FAILURES = 3;

interface Attempt {
  attempt: string;
  holder: string;
  timing: LeaseTiming;
}

/**
 * What a waiting attempt saw of the others' claims. A holder whose live claim later disappears released the lease (it
 * ended the backup); one whose claim expired died, and its end was never reported.
 */
class HolderWatch {
  private readonly holders = new Set<string>();
  /** A holder seen released the lease. */
  ended = false;
  /** Whether any other attempt's live claim was seen. */
  any = false;
  /** Whether `onWaiting` was called. */
  announced = false;
  private readonly me: string;

  constructor(me: string) {
    this.me = me;
  }

  /** Notes one listing of the claims; returns the live ones of other attempts. */
  update(claims: Claim[]): Claim[] {
    const now = Date.now();
    const rivals = claims.filter((claim) => claim.attempt !== this.me && isLive(claim, now));
    for (const attempt of this.holders) {
      const claim = claims.find((c) => c.attempt === attempt);
      if (claim && isLive(claim, now)) continue;
      this.holders.delete(attempt);
      if (!claim) this.ended = true;
    }
    for (const claim of rivals) if (claim.state === 'held') this.holders.add(claim.attempt);
    this.any ||= rivals.length > 0;
    return rivals;
  }
}

/** Claims, then takes the lease if no rival's claim is live; steps back otherwise. */
async function tryTake(place: LeasePlace, me: Attempt, seen: HolderWatch): Promise<Acquired | undefined> {
  const key = claimKey(place.base, me.attempt);
  await writeClaim(place, claimOf(me, 'claiming', new Date()));
  try {
    const claims = await readClaims(place, me.timing.ttlMs);
    if (seen.update(claims).length > 0) {
      await removeObjects(place.client, place.bucket, [key]);
      return undefined;
    }
    // No rival is live: the others are dead attempts' claims, taken over.
    const dead = claims.filter((claim) => claim.attempt !== me.attempt).map((claim) => claimKey(place.base, claim.attempt));
    if (dead.length > 0) await removeObjects(place.client, place.bucket, dead);
    const mine = claimOf(me, 'held', new Date());
    await writeClaim(place, mine);
    return { kind: 'held', lease: keepRenewed(place, me, mine), tookOver: dead.length > 0 };
  } catch (error) {
    // A claim left behind would hold the others back until it expired.
    await removeObjects(place.client, place.bucket, [key]).catch(() => undefined);
    throw error;
  }
}

/** The held lease: renewed until released, and given up when a later holder took it over. */
function keepRenewed(place: LeasePlace, me: Attempt, claim: Claim): HeldLease {
  const stop = new AbortController();
  let lost = false;
  // One store operation of this lease at a time: a check never reads the claim while the renewal rewrites it.
  let turn: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(operation: () => Promise<T>): Promise<T> => {
    const result = turn.then(operation, operation);
    turn = result.catch(() => undefined);
    return result;
  };
  const check = async (): Promise<boolean> => {
    if (!lost) lost = !holds(await readClaims(place, me.timing.ttlMs), claim);
    return !lost;
  };
  const renew = async (): Promise<void> => {
    if (await check()) await writeClaim(place, { ...claim, expiresAt: expiry(me) });
  };
  const renewing = (async () => {
    while (!stop.signal.aborted && !lost) {
      await sleep(me.timing.renewMs, undefined, { signal: stop.signal }).catch(() => undefined);
      if (stop.signal.aborted) return;
      // A store that did not answer is asked again at the next renewal, long before the claim expires.
      await inTurn(renew).catch(() => undefined);
    }
  })();
  return {
    stillHeld: () => inTurn(check),
    async release() {
      stop.abort();
      await renewing;
      await inTurn(() => removeClaim(place, me.attempt));
    },
  };
}

/** Tries of a released claim's removal, 100 ms apart and doubling (a store answering a burst of 500s under load). */
const CLAIM_REMOVALS = 5;

/**
 * Removes a released claim; never throws. One left behind would keep waiting attempts waiting until it expired (a CI
 * run saw a waiting attempt wait out the whole TTL after three removals in a row failed within a millisecond), so the
 * removal is tried again with a growing pause.
 */
async function removeClaim(place: LeasePlace, attempt: string): Promise<void> {
  for (let tries = 1; tries <= CLAIM_REMOVALS; tries++) {
    const removed = await removeObjects(place.client, place.bucket, [claimKey(place.base, attempt)]).then(() => true, () => false);
    if (removed || tries === CLAIM_REMOVALS) return;
    await sleep(100 * 2 ** (tries - 1));
  }
}

/**
 * Our claim is still listed and no live claim held since after ours exists. Two holders only exist after a takeover
 * of a claim that expired while its attempt still ran; the later one keeps the lease, the earlier one stops.
 */
function holds(claims: Claim[], mine: Claim): boolean {
  if (!claims.some((claim) => claim.attempt === mine.attempt)) return false;
  const later = (claim: Claim) => claim.since > mine.since || (claim.since === mine.since && claim.attempt > mine.attempt);
  return !claims.some((claim) => claim.attempt !== mine.attempt && claim.state === 'held' && isLive(claim) && later(claim));
}

function claimOf(me: Attempt, state: Claim['state'], since: Date): Claim {
  return { attempt: me.attempt, holder: me.holder, state, since: since.toISOString(), expiresAt: expiry(me) };
}

function expiry(me: Attempt): string {
  return new Date(Date.now() + me.timing.ttlMs).toISOString();
}

async function writeClaim(place: LeasePlace, claim: Claim): Promise<void> {
  const body = Buffer.from(JSON.stringify(claim));
  await place.client.putObject(place.bucket, claimKey(place.base, claim.attempt), body, body.length, { 'Content-Type': 'application/json' });
}

/**
 * Every claim under the backup's prefix. A claim read while its holder rewrites it can come back torn from a store
 * whose overwrites are not atomic (the embedded one): it is read again. One that still cannot be read as a claim is
 * taken for a live claim (nobody holds against it) that expires a TTL after it was last written, so a corrupt claim
 * never blocks a backup for long and a torn one is never mistaken for a dead holder's.
 */
export async function readClaims(place: LeasePlace, ttlMs = LEASE_TIMING.ttlMs): Promise<Claim[]> {
  const claims: Claim[] = [];
  const prefix = leasePrefix(place.base);
  for await (const item of place.client.listObjectsV2(place.bucket, prefix, true) as AsyncIterable<{ name?: string; lastModified?: Date }>) {
    if (typeof item.name !== 'string') continue;
    const attempt = item.name.slice(prefix.length).replace(/\.json$/, '');
    const claim = await readClaim(place, item.name, attempt);
    if (claim === 'gone') continue; // released between the listing and the read
    claims.push(claim ?? unreadableClaim(attempt, item.lastModified ?? new Date(), ttlMs));
  }
  return claims;
}

const CLAIM_READS = 3;
/** A claim is a few hundred bytes: a read that stalls this long is broken, and is tried again instead of waited for. */
const CLAIM_READ_IDLE_MS = 5_000;

async function readClaim(place: LeasePlace, key: string, attempt: string): Promise<Claim | 'gone' | undefined> {
  for (let read = 1; read <= CLAIM_READS; read++) {
    const bytes = await readSmallObject(place.client, place.bucket, key, 64 * 1024, CLAIM_READ_IDLE_MS).catch(() => null);
    if (bytes === undefined) return 'gone';
    const claim = bytes && parseClaim(bytes, attempt);
    if (claim) return claim;
    if (read < CLAIM_READS) await sleep(20 * read);
  }
  return undefined;
}

function parseClaim(bytes: Buffer, attempt: string): Claim | undefined {
  try {
    const claim = JSON.parse(bytes.toString('utf8')) as Partial<Claim>;
    const valid = claim.attempt === attempt && (claim.state === 'held' || claim.state === 'claiming') && typeof claim.since === 'string' && typeof claim.expiresAt === 'string';
    return valid ? (claim as Claim) : undefined;
  } catch {
    return undefined;
  }
}

function unreadableClaim(attempt: string, written: Date, ttlMs: number): Claim {
  return { attempt, holder: '?', state: 'claiming', since: written.toISOString(), expiresAt: new Date(written.getTime() + ttlMs).toISOString() };
}
