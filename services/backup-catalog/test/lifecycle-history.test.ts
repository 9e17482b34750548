/**
 * Two years of a store's life (issue 25, "Done means"): a store that has run for two years of simulated history holds
 * exactly what `retain: { daily: 7, weekly: 4, monthly: 12, yearly: 2 }` keeps, in the policy's time zone
 * (Europe/Paris).
 *
 * The test plays the mover for one Postgres target taking physical fulls with change capture. For each simulated day it
 * writes to the test S3 what a mover leaves there: one or two succeeded fulls (a small base object, then the manifest
 * last), some failed runs (sometimes with a data object the run's cleanup left behind), and the WAL: a segment every
 * two days with its report beside it. It records each in the catalog as the catalog holds it: a succeeded full as the
 * row `scheduling/mirror.ts` builds from the manifest (phase Succeeded, the manifest and its key), a failed run as the
 * row a `backup.failed` report leaves, a segment as the row `recordSegment` writes from its report. The rows are
 * inserted directly rather than imported with `runtime.mirror()`: the mirror reads every manifest and report back from
 * the store and recomputes the target's chain after each segment, which over two years costs more than the rest of
 * the test on a loaded two-core machine. The rows are built from the very objects written, and the bucket is compared
 * with them key by key at the end; a catalog rebuilt by the mirror after collection is
 * test/integration/strata-retention.test.ts's. Pins go through the API. (A second, dump-only target on the same store
 * doubled the writes, which are most of the test's time, for no code path this one does not take.)
 *
 * Every four simulated weeks the catalog's clock moves on and the lifecycle runs as the scheduler runs it
 * (`lifecycle.tick()`: retention when due, then the store's collection in the background, which goes on while the
 * mover writes the next four weeks). After each pass the Succeeded set, and each kept full's `retainedBy`, must equal
 * what a plain reading of restic's rule computes for the history so far (`referenceKept`, written here from the
 * rule, not from `decideRetention`). At the end: every other succeeded full is Expired with its reason, pins held
 * until their expiry, failed runs left nothing, the bucket lists exactly the kept fulls' objects (a pinned one's pin.json too) and the WAL from the
 * segment holding the oldest kept full's start on (the catalog the same segments), the target's window starts at
 * that full and runs unbroken to the end of the WAL, and the collections' audit records add up to what left the
 * store.
 *
 * The history lies after today's date on purpose. The store's objects carry real (wall clock) modification times, and
 * `GC_SKEW_MARGIN_MS: 0` lets a pass delete anything written before its start, to the second. The lifecycle finds a
 * store due for collection when a backup expired after the store's `lastGCTime`, comparing `expiredAt` (the catalog's
 * clock) with `lastGCTime` (the wall clock): with the catalog's clock behind the wall clock, expiring backups never make
 * the store due (only expired segments and the wall-clock interval do), and the bucket fills up.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackupTargetSpec } from '@sigil/proto/resources';
import { backupPrefix, chainIdOf, manifestKey, pinKeyOfManifest, segmentKey, segmentReportKey } from '@sigil/proto/strata-jobs';
import { createS3Client, ensureBucket, listKeys, type S3Client } from '@strata/stream';
import { chainReport } from '../src/change-capture/chain-inputs.ts';
import { bumpCatalogVersion } from '../src/db.ts';
import type { Prisma } from '../src/generated/prisma/client.ts';
import { s3Env, stackDocuments } from './fixtures.ts';
import { generateAgeIdentity, startCatalogHarness, type CatalogHarness } from './helpers.ts';

const ZONE = 'Europe/Paris';
const RETAIN = { daily: 7, weekly: 4, monthly: 12, yearly: 2 } as const;
const RULES = ['daily', 'weekly', 'monthly', 'yearly'] as const;
type Rule = (typeof RULES)[number];
type Reason = 'newest' | Rule | 'pinned';
const REASON_ORDER: readonly Reason[] = ['newest', ...RULES, 'pinned'];

const DAY = 86_400_000;
/** Midnight in Paris on 2027-03-15 (CET): 730 days from here cross two new years and four daylight saving changes. */
const START = Date.UTC(2027, 2, 14, 23, 0, 0);
const DAYS = 730;
/** The lifecycle runs every four simulated weeks (27 passes), the last at the end of the two years. */
const PASS_EVERY = 28;
const NAMESPACE = 'default';
const STORE_PREFIX = 'strata';
const SYSTEM_ID = '7321987654321098765';
const TIMELINE = 1;
const WAL_SEGMENT = 16n * 1024n * 1024n;
/** The first WAL segment number of the simulation (every two simulated days fill one segment). */
const FIRST_SEGMENT = 0x300n;

const TARGET = 'pg-main';
const SEED = 0x5eed_0001;
/**
 * Pins, each set at the end of the stretch holding `day` on its first succeeded full (or the next day's), until
 * `untilDay` (noon UTC) or forever: one older than every rule reaches (the WAL after it stays), some that run out,
 * one still holding at the end. The first one keeps the bucket at 500-700 keys in the second year.
 */
const PINS: Array<{ day: number; untilDay: number | null }> = [
  { day: 200, untilDay: null },
  { day: 300, untilDay: 430 },
  { day: 500, untilDay: 800 },
  { day: 650, untilDay: 700 },
  { day: 705, untilDay: 716 },
];

interface SimBackup {
  id: string;
  day: number;
  /** The consistent-at time (ms): what puts the full in its calendar buckets. */
  time: number;
  succeeded: boolean;
  prefix: string;
  /** Every object written under its prefix, and the manifest last. */
  objects: Array<{ key: string; body: Buffer }>;
  /** Its catalog row. */
  row: Prisma.BackupCreateManyInput;
  buckets: Record<Rule, string>;
  pin?: { at: number; until: number | null };
}

interface SimSegment {
  /** Its number from the simulation's first segment (segment n covers days 2n and 2n + 1). */
  index: number;
  key: string;
  reportKey: string;
  body: Buffer;
  report: Buffer;
  row: Prisma.SegmentCreateManyInput;
  lastTime: number;
}

const bucket = `strata-history-${randomBytes(3).toString('hex')}`;
const history: SimBackup[] = [];
const segments: SimSegment[] = [];
const pinKeyOf = (b: SimBackup) => pinKeyOfManifest(manifestKey(b.prefix));

/** Every object written to the store (the pins the catalog wrote included), key → size. */
const written = new Map<string, number>();
const pinsApplied: SimBackup[] = [];
let h: CatalogHarness;
let client: S3Client;
let passes = 0;

const iso = (ms: number) => new Date(ms).toISOString();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** mulberry32: a small seeded generator, so every run simulates the same two years. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

// ---- The reference: restic's rule read plainly ----

const localDate = new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit' });

/** The calendar day, ISO week, month and year of an instant in Paris. */
function bucketsOf(ms: number): Record<Rule, string> {
  const [year, month, day] = localDate.format(ms).split('-').map(Number) as [number, number, number];
  const date = Date.UTC(year, month - 1, day);
  const weekday = (new Date(date).getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
  const thursday = date + (3 - weekday) * DAY; // an ISO week belongs to the year of its Thursday
  const weekYear = new Date(thursday).getUTCFullYear();
  const week = Math.floor((thursday - Date.UTC(weekYear, 0, 1)) / DAY / 7) + 1;
  return { daily: `${year}-${month}-${day}`, weekly: `${weekYear}-W${week}`, monthly: `${year}-${month}`, yearly: `${year}` };
}

/**
 * What the rules keep of a history at `now`, and why: the newest succeeded full; for each rule, walking the fulls
 * newest first, the first full met in each new bucket until the rule has its count of buckets; every full whose pin
 * was set by `now` and has not run out.
 */
function referenceKept(backups: SimBackup[], now: number): Map<string, Reason[]> {
  const fulls = backups.filter((b) => b.succeeded).sort((a, b) => b.time - a.time);
  const kept = new Map<string, Set<Reason>>();
  const keep = (b: SimBackup, why: Reason) => kept.set(b.id, (kept.get(b.id) ?? new Set()).add(why));
  if (fulls[0]) keep(fulls[0], 'newest');
  for (const rule of RULES) {
    const seen = new Set<string>();
    for (const b of fulls) {
      if (seen.has(b.buckets[rule])) continue;
      if (seen.size === RETAIN[rule]) break;
      seen.add(b.buckets[rule]);
      keep(b, rule);
    }
  }
  for (const b of fulls) if (b.pin && b.pin.at <= now && (b.pin.until === null || b.pin.until > now)) keep(b, 'pinned');
  return new Map([...kept].map(([id, why]) => [id, REASON_ORDER.filter((r) => why.has(r))]));
}

// ---- The simulated mover ----

/** The WAL segment holding day `day`'s changes: segment n covers days 2n and 2n + 1. */
function segmentOf(day: number) {
  const index = Math.floor(day / 2);
  const number = FIRST_SEGMENT + BigInt(index);
  const start = number * WAL_SEGMENT;
  const hex = (n: bigint, width: number) => n.toString(16).toUpperCase().padStart(width, '0');
  return {
    index,
    name: `${hex(BigInt(TIMELINE), 8)}${hex(number / 256n, 8)}${hex(number % 256n, 8)}`,
    start,
    /** Where the `run`-th full of `day` starts: its own spot in the segment, its end 512 KiB further. */
    fullStart: (run: number) => start + BigInt(1 + (day % 2) * 4 + 2 * run) * 0x100000n,
  };
}

const position = (lsn: bigint) => `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
const sha256 = (body: Buffer) => createHash('sha256').update(body).digest('hex');
const runId = (time: number, suffix: string) => `${iso(time).replace(/[-:]/g, '').replace(/\.\d+Z$/, 'z').toLowerCase()}-${suffix}`;

function fullBackup(day: number, time: number, run: number, next: () => number): SimBackup {
  const id = runId(time, (SEED + day * 4 + run).toString(16).slice(-8));
  const prefix = backupPrefix(STORE_PREFIX, NAMESPACE, TARGET, id);
  const objects = [{ key: `${prefix}data/base.tar.zst.age`, body: randomBytes(64 + Math.floor(next() * 192)) }];
  const started = time - 60_000 - Math.floor(next() * 600_000);
  const segment = segmentOf(day);
  const manifest = {
    id,
    engine: 'postgres',
    policy: 'nightly',
    reason: 'scheduled',
    target: { namespace: NAMESPACE, name: TARGET },
    startedAt: iso(started),
    consistentAt: iso(time),
    completedAt: iso(time + 5_000),
    mode: 'physical',
    databases: ['shop'],
    server: { systemID: SYSTEM_ID, version: '17.2' },
    position: { startLSN: position(segment.fullStart(run)), endLSN: position(segment.fullStart(run) + 0x80000n), startWAL: segment.name, timeline: TIMELINE },
    objects: objects.map((o) => ({ key: o.key, sha256: sha256(o.body), role: 'data', format: 'pg_basebackup-tar', name: 'base', compression: 'zstd', size: o.body.length, rawSize: o.body.length * 3 })),
    stats: { rawBytes: objects.reduce((n, o) => n + o.body.length * 3, 0), storedBytes: objects.reduce((n, o) => n + o.body.length, 0) },
  };
  objects.push({ key: manifestKey(prefix), body: Buffer.from(JSON.stringify(manifest)) });
  const row = {
    id, namespace: NAMESPACE, name: `${TARGET}-${id}`, targetName: TARGET, store: 'local', policy: 'nightly', engine: 'postgres', phase: 'Succeeded', reason: 'scheduled',
    queuedAt: new Date(started), startedAt: new Date(started), completedAt: new Date(time + 5_000), manifestKey: manifestKey(prefix), manifest: manifest as never,
    rawBytes: BigInt(manifest.stats.rawBytes), storedBytes: BigInt(manifest.stats.storedBytes),
  };
  return { id, day, time, succeeded: true, prefix, objects, row, buckets: bucketsOf(time) };
}

function failedRun(day: number, time: number, next: () => number): SimBackup {
  const id = runId(time, `f${(SEED + day).toString(16).slice(-7)}`);
  const prefix = backupPrefix(STORE_PREFIX, NAMESPACE, TARGET, id);
  // A failed run removes what it wrote; when that cleanup fails too, a partial object is left for garbage collection.
  const objects = next() < 0.7 ? [{ key: `${prefix}data/base.tar.zst.age`, body: randomBytes(100) }] : [];
  const row = {
    id, namespace: NAMESPACE, name: `${TARGET}-${id}`, targetName: TARGET, store: 'local', policy: 'nightly', engine: 'postgres', phase: 'Failed', reason: 'scheduled',
    message: 'pg_basebackup: error: connection to server at "127.0.0.1", port 9 failed: Connection refused',
    queuedAt: new Date(time - 120_000), startedAt: new Date(time - 60_000), completedAt: new Date(time),
  };
  return { id, day, time, succeeded: false, prefix, objects, row, buckets: bucketsOf(time) };
}

/** The segment of days `day` and `day + 1`, uploaded once they are over, with its report beside it. */
function walSegment(day: number): SimSegment {
  const segment = segmentOf(day);
  const chainId = chainIdOf(SYSTEM_ID, TIMELINE);
  const key = segmentKey(STORE_PREFIX, NAMESPACE, TARGET, chainId, segment.name, true);
  const body = randomBytes(128);
  const [firstTime, lastTime] = [START + day * DAY + 1_000, START + (day + 2) * DAY - 1_000];
  const [start, end] = [segment.start, segment.start + WAL_SEGMENT];
  const report = {
    streamId: `${TARGET}-stream`,
    namespace: NAMESPACE,
    name: TARGET,
    segment: {
      chainID: chainId, timeline: TIMELINE, name: segment.name, key, startPos: position(start), endPos: position(end), firstTime: iso(firstTime), lastTime: iso(lastTime),
      commits: 500, sha256: sha256(body), size: body.length, rawSize: Number(WAL_SEGMENT), partial: false, compression: 'zstd', uploadedAt: iso(lastTime + 500),
    },
  };
  // The row `recordSegment` writes from that report.
  const row = {
    key, namespace: NAMESPACE, targetName: TARGET, chainId, timeline: TIMELINE, name: segment.name, startPos: position(start), endPos: position(end), startLsn: start, endLsn: end,
    firstTime: new Date(firstTime), lastTime: new Date(lastTime), commits: 500, sha256: sha256(body), size: BigInt(body.length), rawSize: WAL_SEGMENT, partial: false, compression: 'zstd',
    uploadedAt: new Date(lastTime + 500),
  };
  return { index: segment.index, key, reportKey: segmentReportKey(key), body, report: Buffer.from(JSON.stringify(report)), row, lastTime };
}

/** One simulated day: its runs in time order (and the segment of the two days ending with it). */
function simulateDay(day: number, next: () => number): { runs: SimBackup[]; segment?: SimSegment } {
  const r = next();
  const fulls = r < 0.05 ? 0 : r < 0.25 ? 2 : 1;
  const failed = fulls === 0 || next() < 0.08 ? 1 : 0;
  // Distinct minutes over the whole day: some land near midnight in Paris, on either side of it.
  const minutes = new Set<number>();
  while (minutes.size < fulls + failed) minutes.add(Math.floor(next() * 1440));
  const times = [...minutes].sort((a, b) => a - b).map((m) => START + day * DAY + m * 60_000 + Math.floor(next() * 59_000));
  const failedAt = failed ? Math.floor(next() * times.length) : -1;
  const runs: SimBackup[] = [];
  for (const [i, time] of times.entries()) runs.push(i === failedAt ? failedRun(day, time, next) : fullBackup(day, time, runs.filter((b) => b.succeeded).length, next));
  return { runs, ...(day % 2 === 1 ? { segment: walSegment(day - 1) } : {}) };
}

/** Runs `work` over `items`, `limit` at a time. */
async function inPool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++] as T);
  }));
}

async function put(key: string, body: Buffer): Promise<void> {
  await client.putObject(bucket, key, body, body.length);
  written.set(key, body.length);
}

async function bucketKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of listKeys(client, bucket, `${STORE_PREFIX}/`)) keys.push(key);
  return keys.sort();
}

const sortedMap = <V>(map: Map<string, V>) => new Map([...map].sort(([a], [b]) => (a < b ? -1 : 1)));

/** The catalog's view after a pass: the Succeeded fulls with their retainedBy, by id. */
async function keptInCatalog(): Promise<Map<string, string[]>> {
  const rows = await h.runtime.db.backup.findMany({ where: { namespace: NAMESPACE, targetName: TARGET, phase: 'Succeeded' }, select: { id: true, retainedBy: true } });
  return sortedMap(new Map(rows.map((r) => [r.id, r.retainedBy])));
}

interface Stretch {
  /** The catalog's clock at its end, when the lifecycle runs. */
  now: number;
  runs: SimBackup[];
  segments: SimSegment[];
  pins: Array<{ backup: SimBackup; untilDay: number | null }>;
}

/** Days `fromDay` to `toDay` (excluded). */
function stretch(fromDay: number, toDay: number, next: () => number): Stretch {
  const result: Stretch = { now: START + toDay * DAY, runs: [], segments: [], pins: [] };
  for (let day = fromDay; day < toDay; day++) {
    const simulated = simulateDay(day, next);
    result.runs.push(...simulated.runs);
    if (simulated.segment) result.segments.push(simulated.segment);
  }
  for (const pin of PINS.filter((p) => p.day < toDay && p.day >= fromDay)) {
    const backup = result.runs.find((b) => b.succeeded && b.day >= pin.day);
    if (backup) result.pins.push({ backup, untilDay: pin.untilDay });
  }
  return result;
}

/** The mover's writes, 8 at a time: each backup's data before its manifest, each segment before its report. */
async function writeObjects(s: Stretch): Promise<void> {
  const writes = [
    ...s.runs.map((b) => async () => {
      for (const object of b.objects) await put(object.key, object.body);
    }),
    ...s.segments.map((seg) => async () => {
      await put(seg.key, seg.body);
      await put(seg.reportKey, seg.report);
    }),
  ];
  await inPool(writes, 8, (write) => write());
}

/**
 * The stretch's rows, its pins, then the lifecycle as the scheduler runs it; checks what retention kept. The
 * collection the pass started goes on in the background (`lifecycle.idle()` waits for it).
 */
async function recordAndRetain(s: Stretch): Promise<void> {
  await h.runtime.db.$transaction(async (tx) => {
    await tx.backup.createMany({ data: s.runs.map((b) => b.row) });
    if (s.segments.length) await tx.segment.createMany({ data: s.segments.map((seg) => seg.row) });
    await bumpCatalogVersion(tx);
  });
  history.push(...s.runs);
  segments.push(...s.segments);
  h.setNow(new Date(s.now));
  for (const { backup, untilDay } of s.pins) {
    const until = untilDay === null ? null : START + untilDay * DAY + 12 * 3_600_000;
    const res = await h.call('operator', 'post', `/api/v1/backups/${backup.id}/pin`, { reason: 'kept past its rules', ...(until ? { expires: iso(until) } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // The pin is written to the store beside the manifest (pinSynced): it stays and goes with its backup's objects.
    written.set(pinKeyOf(backup), (await client.statObject(bucket, pinKeyOf(backup))).size);
    backup.pin = { at: s.now, until };
    pinsApplied.push(backup);
    expect((await h.runtime.db.backup.findUniqueOrThrow({ where: { id: backup.id } })).pinExpires?.getTime() ?? null).toBe(until);
  }
  // A pin kicks a scheduler pass (which runs the lifecycle): let it finish, then the scheduler's own pass.
  if (s.pins.length) await h.runtime.tick();
  await h.runtime.lifecycle.tick(new Date(s.now));
  passes += 1;
  expect(await keptInCatalog(), `the fulls kept at ${iso(s.now)} (pass ${passes})`).toEqual(sortedMap(referenceKept(history, s.now)));
}

beforeAll(async () => {
  h = await startCatalogHarness('lifecycle_history', { config: { GC_SKEW_MARGIN_MS: 0 } });
  const s3 = s3Env();
  client = createS3Client({ endpoint: s3.endpoint, region: s3.region, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey, pathStyle: true });
  await ensureBucket(client, bucket, s3.region);
  const { identity, recipient } = await generateAgeIdentity();
  // The store and the policy of the fixtures (Europe/Paris), and a suspended target of its own: no scheduled run, no
  // streamer, nothing of the catalog's own reaches for a database. Its endpoint answers nothing.
  const docs = [
    stackDocuments({ bucket, recipients: [recipient], identity, retain: { ...RETAIN } }),
    `apiVersion: v1\nkind: Secret\nmetadata: { name: pg-credentials, namespace: ${NAMESPACE} }\nstringData: { username: postgres, password: "" }`,
    `apiVersion: backups.strata.dev/v1alpha1
kind: BackupTarget
metadata: { name: ${TARGET}, namespace: ${NAMESPACE} }
spec:
  engine: postgres
  endpoint: { host: 127.0.0.1, port: 9 }
  credentials: { secretRef: { name: pg-credentials } }
  scope: { mode: physical }
  suspend: true
  policy: nightly`,
  ].join('\n---\n');
  h.setNow(new Date(START));
  const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
}, 60_000);

afterAll(async () => {
  await h?.close();
});

describe('two years of history under retain {daily: 7, weekly: 4, monthly: 12, yearly: 2} in Europe/Paris', () => {
  let end = START;

  it('after every pass the catalog keeps exactly what the rules keep of the history so far', async () => {
    const rng = random(SEED);
    for (let day = 0; day < DAYS; day += PASS_EVERY) {
      const next = stretch(day, Math.min(day + PASS_EVERY, DAYS), rng);
      // The mover writes the next stretch while the last pass's collection runs: what it writes is younger than the
      // pass, which leaves it alone.
      await Promise.all([writeObjects(next), h.runtime.lifecycle.idle()]);
      await recordAndRetain(next);
      end = next.now;
    }
    await h.runtime.lifecycle.idle();
    expect(passes).toBe(Math.ceil(DAYS / PASS_EVERY));
    expect(history.filter((b) => b.succeeded).length).toBeGreaterThan(DAYS);
    expect(history.filter((b) => !b.succeeded).length).toBeGreaterThan(50);
  }, 240_000);

  it('every other succeeded full is Expired with its reason; pins held until their expiry; failed runs stay Failed', async () => {
    const rows = new Map((await h.runtime.db.backup.findMany()).map((r) => [r.id, r]));
    const rule = 'kept by no rule of retain {daily: 7, weekly: 4, monthly: 12, yearly: 2}';
    let lapsed = 0;
    let pinnedOnly = 0;
    const kept = referenceKept(history, end);
    for (const b of history) {
      const row = rows.get(b.id);
      expect(row, b.id).toBeDefined();
      if (!b.succeeded) {
        expect(row?.phase, b.id).toBe('Failed');
        continue;
      }
      if (kept.has(b.id)) {
        expect(row, b.id).toMatchObject({ phase: 'Succeeded', expiredAt: null });
        if (kept.get(b.id)?.join() === 'pinned') pinnedOnly += 1;
        continue;
      }
      expect(row, b.id).toMatchObject({ phase: 'Expired', retainedBy: [], expiresAt: null, expiredAt: expect.any(Date) });
      expect(row?.expiredReason, b.id).toContain(rule);
      if (b.pin) {
        // A pin that ran out: the backup stayed until the first pass after its expiry, then the rules judged it.
        const until = b.pin.until as number;
        expect(until, `${b.id} expired while pinned forever`).not.toBeNull();
        expect(row?.expiredReason, b.id).toContain(`its pin expired at ${iso(until)}`);
        expect(row?.expiredAt?.getTime(), b.id).toBeGreaterThanOrEqual(until);
        expect(row?.expiredAt?.getTime(), b.id).toBeLessThanOrEqual(until + PASS_EVERY * DAY);
        lapsed += 1;
      }
    }
    // The history exercises what it claims to: pins that ran out and expired, pins that alone keep a full.
    expect(lapsed).toBeGreaterThanOrEqual(2);
    expect(pinnedOnly).toBeGreaterThanOrEqual(2);
    for (const b of pinsApplied.filter((p) => p.pin?.until === null || (p.pin?.until as number) > end)) {
      expect(rows.get(b.id)?.retainedBy, b.id).toContain('pinned');
    }
  });

  it('after the last collection the bucket holds exactly the kept fulls and the change log from the oldest kept full on', async () => {
    // The pass deletes nothing modified in the second it starts: let the last writes age by a second, then run the
    // scheduler's collection once more (nothing is left to expire).
    await sleep(1100);
    h.setNow(new Date(end + 3_600_000));
    await h.runtime.lifecycle.tick();
    await h.runtime.lifecycle.idle();

    const kept = history.filter((b) => referenceKept(history, end + 3_600_000).has(b.id));
    const oldest = kept.reduce((a, b) => (b.time < a.time ? b : a));
    // The segment holding the oldest kept full's start (and end), and every one after it.
    const keptSegments = segments.filter((s) => s.index >= segmentOf(oldest.day).index);
    expect(keptSegments.length).toBeLessThan(segments.length);
    const expectedKeys = [...kept.flatMap((b) => [...b.objects.map((o) => o.key), ...(b.pin ? [pinKeyOf(b)] : [])]), ...keptSegments.flatMap((s) => [s.key, s.reportKey])];
    const stored = await bucketKeys();
    expect(stored).toEqual(expectedKeys.sort());
    // The same, by prefix: the kept fulls' folders and the change log, nothing of an expired full or a failed run.
    const folders = new Set(stored.map((key) => key.split('/').slice(0, 4).join('/')));
    const expectedFolders = [...kept.map((b) => b.prefix.replace(/\/$/, '')), `${STORE_PREFIX}/${NAMESPACE}/${TARGET}/wal`];
    expect([...folders].sort()).toEqual(expectedFolders.sort());

    // The catalog's segments are the store's: the expired ones went with their objects.
    const rows = await h.runtime.db.segment.findMany({ where: { namespace: NAMESPACE, targetName: TARGET }, select: { key: true, expired: true } });
    expect(rows.filter((r) => r.expired)).toEqual([]);
    expect(rows.map((r) => r.key).sort()).toEqual(keptSegments.map((s) => s.key).sort());
    // The target's restorable window, as restores plan it: from the oldest kept full to the end of the change log, whole.
    const target = await h.runtime.deps.resources.get<BackupTargetSpec>(h.runtime.db, 'BackupTarget', NAMESPACE, TARGET);
    expect(target).toBeDefined();
    const chain = await chainReport(h.runtime.db, target as NonNullable<typeof target>);
    expect(chain.windows).toEqual([{ from: iso(oldest.time), to: iso(segments.at(-1)?.lastTime as number) }]);
    expect(chain).toMatchObject({ chainBroken: false, gaps: 0 });

    // What the scheduler's passes recorded adds up to what left the store.
    const audit = await h.runtime.db.auditEvent.findMany({ where: { action: 'collectStoreGarbage' } });
    expect(audit.length).toBeGreaterThan(passes / 2);
    expect(audit.every((a) => a.user === 'scheduler' && a.outcome === 'ok')).toBe(true);
    const freed = audit.reduce((sum, a) => ({ objects: sum.objects + (a.detail as { objects: number }).objects, bytes: sum.bytes + (a.detail as { bytes: number }).bytes }), { objects: 0, bytes: 0 });
    const remaining = stored.reduce((sum, key) => sum + (written.get(key) as number), 0);
    expect(freed).toEqual({ objects: written.size - stored.length, bytes: [...written.values()].reduce((a, b) => a + b, 0) - remaining });
    const store = (await h.call('viewer', 'get', '/api/v1/settings')).body.stores.find((s: { name: string }) => s.name === 'local');
    expect(store.lastGC).toMatchObject({ at: expect.any(String), dryRun: false });
    // Nothing is left to collect.
    const dry = await h.call('restorer-admin', 'post', `/api/v1/stores/${NAMESPACE}/local/gc?dryRun=true`);
    expect(dry.status, JSON.stringify(dry.body)).toBe(200);
    expect(dry.body).toMatchObject({ dryRun: true, objects: 0, keys: [] });
  }, 60_000);
});
