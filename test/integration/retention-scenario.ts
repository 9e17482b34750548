import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@sigil/kit/testing';
import { pinKeyOfManifest } from '@sigil/proto/strata-jobs';
import { startWorker, type Worker } from '@strata/mover';
import { createS3Client, listKeys } from '@strata/stream';
import { s3Env, stackDocuments, startCatalogHarness, type CatalogHarness, type StackDocsOptions } from '@strata/backup-catalog/testing';
import { waitFor } from './wait.ts';

/**
 * Retention and garbage collection for real (issue 25), once per engine: a server of its own streaming its change
 * log (WAL, binlogs) into the test S3 store, three fulls under `retain: { daily: 1 }`, the second one pinned. The
 * rules keep the newest full of the day, the pin keeps the second; the first and the change log only it needed
 * expire, garbage collection deletes exactly their objects, a restore inside the kept window equals the source,
 * the store then holds only what the catalog lists, and a catalog rebuilt from the store agrees.
 *
 * The scenario is written once; each engine's test file gives an adapter (`RetentionEngine`) and calls
 * `retentionScenario`, so the engines run in parallel workers. All state lives inside that call: workers are shared
 * (`isolate: false`), and this module may serve both files in one worker.
 */

export type BackupRow = NonNullable<Awaited<ReturnType<CatalogHarness['runtime']['db']['backup']['findFirst']>>>;

/** A moment to restore to and the ids of the rows committed before it (and none after). */
export type RestoreMoment = { at: string; expected: number[] };

/** The engine's writer: rows into `shop.events` until stopped. */
export interface RetentionWriter {
  stop(): Promise<void>;
  /** A moment restored exactly, at least a little after `from` and before `before` (ms); undefined when none. */
  momentBetween(from: number, before: number): RestoreMoment | undefined;
}

/** A server of the test's own, with the database `shop` and its table `events (id, note)` created. */
export interface RetentionServer {
  /** The stack documents' members naming this server and `shop`. */
  stackFields: Pick<StackDocsOptions, 'postgres' | 'mysql' | 'databases'>;
  /** Where restores go: a new database on this server. */
  restoreInto: { host: string; port: number; credentialsSecret: string };
  startWriter(): RetentionWriter;
  /** Starts a new change-log file (a WAL switch, a binlog rotation), so each full lies in a file of its own; answers the server's position then. */
  rotateChangeLog(): Promise<bigint>;
  idsIn(database: string): Promise<number[]>;
  dropDatabase(database: string): Promise<void>;
  stop(): Promise<void>;
}

/** What the catalog should make of a succeeded full. */
export interface FullFacts {
  /** The time the retention rules count the full on (the manifest's `consistentAt`). */
  consistentAt: number;
  /** The first moment of its window. */
  windowStart: number;
  /** Its position in the change log, ordered as the catalog orders segments' positions. */
  position: bigint;
}

export interface RetentionEngine {
  name: string;
  /** `<namespace>/<name>` of the target `stackDocuments` writes for this engine. */
  target: string;
  /** The catalog harness's database (distinct per file: files run in parallel). */
  catalogName: string;
  start(stateDir: string): Promise<RetentionServer>;
  fullFacts(row: BackupRow): FullFacts;
  /** The start position of the change-log file holding `position`: the first file a chain from there replays. */
  fileStart(position: bigint): bigint;
  /** The start position of the change-log file named so (a WAL file, a binlog). */
  fileStartOfName(name: string): bigint;
  /** What a restore to a moment reports, when the engine says something worth checking. */
  restoreMessage?: RegExp;
}

type Full = FullFacts & { id: string };

type Segment = Awaited<ReturnType<CatalogHarness['runtime']['db']['segment']['findMany']>>[number];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const s3 = () => createS3Client({ ...s3Env(), accessKeyId: s3Env().accessKey, secretAccessKey: s3Env().secretKey, pathStyle: true });
/** The change-log file a segment object (or the report or previews beside it) holds: `.../wal/<chain>/<file>[.partial.<end>][.zst].age[.json|.previews.age]`. */
const segmentFileOf = (key: string) => key.split('/').pop()!.replace(/\.json$/, '').replace(/\.previews\.age$/, '').replace(/\.age$/, '').replace(/\.zst$/, '').split('.partial.')[0]!;
const describeSegment = (s: Segment) => `${s.name}${s.partial ? ' (partial)' : ''} ${s.startPos}..${s.endPos}${s.expired ? ' expired' : ''}`;

/** A fresh age key pair from the age-keygen tool. */
function ageKeys(): { identity: string; recipient: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'strata-age-'));
  const file = path.join(dir, 'identity.txt');
  try {
    execFileSync('age-keygen', ['-o', file], { stdio: 'ignore' });
    return { identity: readFileSync(file, 'utf8'), recipient: execFileSync('age-keygen', ['-y', file]).toString().trim() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Waits for `settled` to hold of what `read` answers, then hands the last answer back (held or not) to be asserted. */
async function settle<T>(what: string, read: () => Promise<T>, settled: (value: T) => boolean, timeoutMs: number): Promise<T> {
  let last!: T;
  const probe = async () => {
    last = await read();
    return settled(last) ? true : undefined;
  };
  await waitFor(what, probe, timeoutMs).catch(() => undefined);
  return last;
}

export function retentionScenario(engine: RetentionEngine): void {
  const bucket = `strata-retention-${engine.name.slice(0, 2)}-${randomBytes(3).toString('hex')}`;
  const stateDir = mkdtempSync(path.join(tmpdir(), `strata-retention-${engine.name}-`));
  const [namespace, targetName] = engine.target.split('/') as [string, string];
  const restored: string[] = [];
  let server: RetentionServer;
  let writer: RetentionWriter | undefined;
  let h: CatalogHarness;
  let worker: Worker;
  let workerStopped: Promise<void> | undefined;
  let ticker: NodeJS.Timeout;
  let docs: string;

  async function fullBackup(reason: string): Promise<BackupRow> {
    const res = await h.call('operator', 'post', `/api/v1/targets/${engine.target}/backup-now`, { reason });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const row = await waitFor(`backup ${reason}`, async () => {
      const found = await h.runtime.db.backup.findFirst({ where: { name: res.body.name } });
      return found && (found.phase === 'Succeeded' || found.phase === 'Failed') ? found : undefined;
    });
    expect(row.phase, row.message).toBe('Succeeded');
    return row;
  }

  const stopWorker = () => (workerStopped ??= worker.stop());
  const backupView = async (id: string) => (await h.call('viewer', 'get', `/api/v1/backups/${id}`)).body.backup;
  const targetView = async () => (await h.call('viewer', 'get', `/api/v1/targets/${engine.target}`)).body.target;
  const segments = async () => await h.runtime.db.segment.findMany({ where: { namespace, targetName }, orderBy: [{ startLsn: 'asc' }, { endLsn: 'asc' }] });
  const storeView = async () => (await h.call('viewer', 'get', '/api/v1/settings')).body.stores.find((s: { name: string }) => s.name === 'local');

  async function bucketKeys(): Promise<string[]> {
    const keys: string[] = [];
    for await (const key of listKeys(s3(), bucket, 'strata/')) keys.push(key);
    return keys.sort();
  }

  /** Every object the catalog knows a kept backup or a segment by (manifests, data, inventories, segments, reports). */
  async function catalogKeys(): Promise<Set<string>> {
    const keys = new Set<string>();
    for (const backup of await h.runtime.db.backup.findMany({ where: { phase: 'Succeeded' } })) {
      const manifest = backup.manifest as { objects?: Array<{ key: string }> };
      keys.add(backup.manifestKey!);
      for (const object of manifest.objects ?? []) keys.add(object.key);
      // A pinned backup's pin is kept beside its manifest once written (pinSynced).
      if (backup.pinned && !backup.pinSyncPending) keys.add(pinKeyOfManifest(backup.manifestKey!));
    }
    for (const segment of await h.runtime.db.segment.findMany()) {
      keys.add(segment.key);
      keys.add(`${segment.key}.json`);
      if (segment.previewsKey) keys.add(segment.previewsKey);
    }
    return keys;
  }

  /**
   * The stream has passed a full: a recorded segment holds its position, the files before it are all in (no gap),
   * and the window covers the full's first moment (a dump's opens once the change log passes its completion).
   */
  async function changeLogPast(full: Full): Promise<void> {
    await waitFor(`the change log to pass full ${full.id}`, async () => {
      const view = await targetView();
      const covered = (view.windows ?? []).some((w: { from: string; to: string }) => Date.parse(w.from) <= full.windowStart && Date.parse(w.to) > full.windowStart);
      return covered && (await changeLogHolds(full.position, view.gaps)) ? true : undefined;
    }, 60_000);
  }

  /** A recorded segment holds `position` and none is missing before it. */
  async function changeLogHolds(position: bigint, gaps: number): Promise<boolean> {
    return gaps === 0 && (await h.runtime.db.segment.count({ where: { namespace, targetName, expired: false, startLsn: { lte: position }, endLsn: { gte: position } } })) > 0;
  }

  /**
   * What a leftover key says about the product: a segment report whose segment object and catalog row are both gone
   * was orphaned by a garbage collection pass (see the report of the lifecycle tests: gc.ts deletes a segment's row
   * with its object while the report, written a second later, is kept as too recent, and no later pass knows it).
   */
  async function orphanNote(keys: string[]): Promise<string> {
    const stored = new Set(await bucketKeys());
    const rows = new Set((await h.runtime.db.segment.findMany({ select: { key: true } })).map((r) => r.key));
    const orphans = keys.filter((k) => k.includes('/wal/') && k.endsWith('.json') && !stored.has(k.slice(0, -5)) && !rows.has(k.slice(0, -5)));
    return orphans.length ? ` PRODUCT BUG (lifecycle/gc.ts): orphaned segment report(s) ${orphans.join(', ')}: a pass deleted the segment object (last modified a second earlier) and its row, and kept the report as too recent; no later pass collects it` : '';
  }

  /** The change-log objects in the store whose file starts before `from`. */
  const changeLogBefore = (keys: string[], from: bigint) => keys.filter((key) => key.includes('/wal/') && engine.fileStartOfName(segmentFileOf(key)) < from);

  /**
   * Nothing runs in the catalog but what the test asks: the mover stopped (no stream, no report, so no scheduler
   * pass kicked by one; the ticker is off), every report it sent applied, the passes they kicked finished.
   */
  async function quiesce(): Promise<void> {
    clearInterval(ticker);
    await stopWorker();
    await h.runtime.reports.idle(30_000);
    await h.runtime.tick();
    await h.runtime.lifecycle.idle();
  }

  /**
   * Runs `change` while retention's turn (the advisory lock replicas take turns with) is held here, as if another
   * replica had it, and waits for the scheduler pass the change kicked: that pass applies no retention, so the next
   * API call is the first to.
   */
  async function withoutRetention<T>(change: () => Promise<T>): Promise<T> {
    const turn = new pg.Client({ connectionString: h.databaseUrl });
    await turn.connect();
    try {
      await turn.query(`SELECT pg_advisory_lock(hashtext('strata-retention'))`);
      const result = await change();
      await h.runtime.tick();
      await h.runtime.lifecycle.idle();
      return result;
    } finally {
      await turn.end();
    }
  }

  /** A restore into a new database of the source server, waited for: it must succeed. */
  async function restoreNew(at: string) {
    const database = `retention_${randomBytes(3).toString('hex')}`;
    restored.push(database);
    const res = await h.call('restorer', 'post', '/api/v1/restores', { target: engine.target, mode: 'new', at, database, ...server.restoreInto });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const row = await waitFor('the restore', async () => {
      const found = await h.runtime.db.restore.findFirst({ where: { name: res.body.name } });
      return found && (found.phase === 'Succeeded' || found.phase === 'Failed') ? found : undefined;
    });
    expect(row.phase, row.message).toBe('Succeeded');
    return { row, database };
  }

  beforeAll(async () => {
    server = await engine.start(stateDir);
    const { identity, recipient } = ageKeys();
    // Garbage is collected as soon as it expires: the test's objects are seconds old (the store runs on this machine's clock).
    h = await startCatalogHarness(engine.catalogName, { config: { GC_SKEW_MARGIN_MS: 0 } });
    worker = await startWorker({ bus: h.bus, log: silentLogger(), secretsKey: h.secretsKey, concurrency: 2, consumerPrefix: h.cell, retryDelaysMs: [500, 1000] });
    docs = stackDocuments({ bucket, recipients: [recipient], identity, ...server.stackFields, pitr: { enabled: true, partialInterval: '2s' }, retain: { daily: 1 } });
    const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    await h.runtime.mirror();
    await waitFor('the replication check', async () => ((await targetView()).pitr ? true : undefined), 30_000);
    ticker = setInterval(() => void h.runtime.tick(), 500);
    writer = server.startWriter();
  }, 300_000);

  afterAll(async () => {
    await writer?.stop().catch(() => undefined);
    clearInterval(ticker);
    if (worker) await stopWorker();
    await h?.close();
    for (const database of restored) await server?.dropDatabase(database).catch(() => undefined);
    await server?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }, 120_000);

  describe(`retention and garbage collection (${engine.name}, daily: 1)`, () => {
    const fulls: Full[] = [];

    it('keeps the newest full of the day and a pinned one, expires the other with the change log only it needed', async () => {
      for (const reason of ['first', 'second', 'third']) {
        await sleep(4000);
        // The stream holds everything up to now before the full is taken: no file arrives after a newer full.
        const rotated = await server.rotateChangeLog();
        await waitFor(`the change log to reach the rotation before the ${reason} full`, async () => ((await changeLogHolds(rotated, (await targetView()).gaps)) ? true : undefined), 60_000);
        const row = await fullBackup(reason);
        const full = { id: row.id, ...engine.fullFacts(row) };
        fulls.push(full);
        if (reason === 'second') {
          const pinned = await h.call('operator', 'post', `/api/v1/backups/${row.id}/pin`, { reason: 'kept past its rules' });
          expect(pinned.status, JSON.stringify(pinned.body)).toBe(200);
        }
        await changeLogPast(full);
      }
      // The change log was rotated before each full: the first full's file (recorded: the stream passed it) lies
      // before the pinned full's, so it is change log only the first full needed.
      expect(engine.fileStart(fulls[0]!.position), 'the first full lies in an earlier change-log file than the pinned one').toBeLessThan(engine.fileStart(fulls[1]!.position));
      // The scheduler's passes apply retention: no call here, the catalog does it by itself.
      const first = await waitFor('the first full to expire', async () => {
        const view = await backupView(fulls[0]!.id);
        return view.phase === 'Expired' ? view : undefined;
      }, 30_000);
      expect(first).toMatchObject({ restorable: false, retainedBy: [], expiresAt: null, expiredAt: expect.any(String), expiredReason: expect.stringMatching(/daily/) });
      const [second, third] = await Promise.all([backupView(fulls[1]!.id), backupView(fulls[2]!.id)]);
      expect(second).toMatchObject({ phase: 'Succeeded', restorable: true, retainedBy: ['pinned'], expiresAt: null });
      expect(third).toMatchObject({ phase: 'Succeeded', retainedBy: expect.arrayContaining(['newest', 'daily']) });
      expect(Date.parse(third.expiresAt)).toBeGreaterThan(fulls[2]!.consistentAt);
      // The first full's window went with it: the kept windows start at the pinned full, unbroken.
      const target = await targetView();
      expect(target.windows[0].from, `windows ${JSON.stringify(target.windows)}`).toBe(new Date(fulls[1]!.windowStart).toISOString());
      expect(target.chainBroken).toBe(false);
      const list = (await h.call('viewer', 'get', `/api/v1/targets/${engine.target}/backups`)).body.backups as Array<{ id: string; phase: string }>;
      expect(list.find((b) => b.id === fulls[0]!.id)?.phase).toBe('Expired');
    }, 300_000);

    it('keeps exactly the change log from the file holding the pinned full onward', async () => {
      // Retention runs on the passes after each recorded segment; garbage collection then deletes expired rows with their objects.
      const from = engine.fileStart(fulls[1]!.position);
      const tooOld = (rows: Segment[]) => rows.filter((s) => !s.expired && s.startLsn < from);
      const rows = await settle('the change log before the pinned full to expire', segments, (r) => tooOld(r).length === 0, 30_000);
      const all = rows.map(describeSegment).join(', ');
      expect(tooOld(rows).map(describeSegment), `live segments before the file holding the pinned full's position (${from}); all: ${all}`).toEqual([]);
      expect(rows.filter((s) => s.expired && s.startLsn >= from).map(describeSegment), `expired segments a kept full needs; all: ${all}`).toEqual([]);
      const live = rows.filter((s) => !s.expired);
      expect(live.some((s) => s.startLsn === from), `the file holding the pinned full's position (${from}) is kept; all: ${all}`).toBe(true);
      expect(live.filter((s) => s.startLsn > from).length, `the files after it are kept; all: ${all}`).toBeGreaterThan(0);
    }, 60_000);

    it('collects the expired objects by itself after the expiry, and records the pass', async () => {
      const from = engine.fileStart(fulls[1]!.position);
      const left = (keys: string[]) => [...keys.filter((k) => k.includes(`/${fulls[0]!.id}/`)), ...changeLogBefore(keys, from)];
      const gone = await settle("the first full's objects and its change log to be collected", async () => {
        await h.runtime.lifecycle.idle();
        return await bucketKeys();
      }, (keys) => left(keys).length === 0, 60_000);
      expect(left(gone), `objects of the first full, and change log before the file holding the pinned full's position (${from}), still in the store.${await orphanNote(left(gone))}`).toEqual([]);
      expect(gone.some((k) => k.includes(`/${fulls[1]!.id}/`))).toBe(true);
      // Rows go with their objects: an expired segment still recorded is one a later pass will take (written too late for this one).
      const stillExpired = await h.runtime.db.segment.findMany({ where: { expired: true }, select: { key: true } });
      for (const { key } of stillExpired) expect(gone).toContain(key);
      expect((await storeView()).lastGC).toMatchObject({ at: expect.any(String), dryRun: false });
      const audit = (await h.call('operator', 'get', '/api/v1/audit?action=collectStoreGarbage')).body.events as Array<{ user: string; object: string; detail: { objects: number } }>;
      expect(audit.some((e) => e.user === 'scheduler' && e.object === 'BackupStore/default/local' && e.detail.objects > 0)).toBe(true);
    }, 120_000);

    it('restores a moment of the kept window between the pinned full and the newest exactly', async () => {
      const moment = writer!.momentBetween(fulls[1]!.windowStart, fulls[2]!.windowStart);
      expect(moment, `a moment to restore between ${new Date(fulls[1]!.windowStart).toISOString()} and ${new Date(fulls[2]!.windowStart).toISOString()}`).toBeDefined();
      const { at, expected } = moment!;
      await waitFor('the window to reach the moment', async () => ((await targetView()).windows.some((w: { from: string; to: string }) => w.from <= at && w.to >= at) ? true : undefined), 60_000);
      const { row, database } = await restoreNew(at);
      expect(row.backupId).toBe(fulls[1]!.id);
      if (engine.restoreMessage) expect(row.message).toMatch(engine.restoreMessage);
      expect(await server.idsIn(database), `rows at ${at}`).toEqual(expected);
    }, 240_000);

    it('after a pass, the store holds only what the catalog lists, and the catalog nothing the store lacks', async () => {
      // Quiet: no write, the stream past the last one, then no mover and no scheduler pass: nothing lands or goes between the listings.
      await writer!.stop();
      const stoppedAt = Date.now();
      await waitFor('the window to pass the last write', async () => (Date.parse((await targetView()).windows.at(-1).to) > stoppedAt + 1000 ? true : undefined), 60_000);
      await quiesce();
      const pass = await h.call('restorer-admin', 'post', '/api/v1/stores/default/local/gc');
      expect(pass.status, JSON.stringify(pass.body)).toBe(200);
      expect(pass.body.error).toBeUndefined();
      const listed = await catalogKeys();
      const stored = await bucketKeys();
      const unknown = stored.filter((key) => !listed.has(key));
      expect(unknown, `in the store, unknown to the catalog.${await orphanNote(unknown)}`).toEqual([]);
      expect([...listed].filter((key) => !stored.includes(key)), 'in the catalog, missing from the store').toEqual([]);
    }, 120_000);

    it('refuses to pin an expired backup, and to collect a read-only store', async () => {
      const pin = await h.call('operator', 'post', `/api/v1/backups/${fulls[0]!.id}/pin`, {});
      expect(pin.status).toBe(409);
      expect(pin.body.error).toMatch(/expired/);
      const readOnly = docs.split('\n---\n').find((d) => d.includes('kind: BackupStore'))!.replace('name: local,', 'name: mirror-only,').replace('prefix: strata', 'prefix: strata\n  readOnly: true');
      const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', readOnly, 'application/yaml');
      expect(applied.status, JSON.stringify(applied.body)).toBe(200);
      const keysBefore = await bucketKeys();
      const gc = await h.call('restorer-admin', 'post', '/api/v1/stores/default/mirror-only/gc');
      expect(gc.status).toBe(422);
      expect(gc.body.error).toMatch(/read-only/);
      expect(await bucketKeys()).toEqual(keysBefore);
    }, 60_000);

    it('unpinned, the pinned full expires; a dry run lists its objects, the pass deletes exactly them, and a catalog rebuilt from the store agrees', async () => {
      // Unpinning kicks a scheduler pass, which would expire the full and collect it in the background before the dry
      // run looks: that pass finds retention's turn taken. The API's pass applies retention first, so the full expires in it.
      const unpin = await withoutRetention(() => h.call('operator', 'post', `/api/v1/backups/${fulls[1]!.id}/unpin`, {}));
      expect(unpin.status).toBe(200);
      expect(await backupView(fulls[1]!.id)).toMatchObject({ phase: 'Succeeded' });
      const before = await bucketKeys();
      const dry = await h.call('restorer-admin', 'post', '/api/v1/stores/default/local/gc?dryRun=true');
      expect(dry.status, JSON.stringify(dry.body)).toBe(200);
      expect(await backupView(fulls[1]!.id)).toMatchObject({ phase: 'Expired' });
      expect(dry.body).toMatchObject({ store: 'local', dryRun: true });
      expect(dry.body.keys.length, JSON.stringify(dry.body)).toBeGreaterThan(0);
      expect(dry.body.keys.every((k: string) => before.includes(k))).toBe(true);
      expect(dry.body.keys.some((k: string) => k.endsWith(`/${fulls[1]!.id}/manifest.json`))).toBe(true);
      expect(dry.body.keys.every((k: string) => !k.includes(`/${fulls[2]!.id}/`))).toBe(true);
      expect(await bucketKeys()).toEqual(before);

      const pass = await h.call('restorer-admin', 'post', '/api/v1/stores/default/local/gc');
      expect(pass.status, JSON.stringify(pass.body)).toBe(200);
      expect(pass.body).toMatchObject({ dryRun: false, objects: dry.body.objects, bytes: dry.body.bytes, keys: dry.body.keys });
      expect(pass.body.error).toBeUndefined();
      expect(await bucketKeys()).toEqual(before.filter((k) => !dry.body.keys.includes(k)));
      const third = engine.fileStart(fulls[2]!.position);
      const older = changeLogBefore(await bucketKeys(), third);
      expect(older, `change log before the file holding the newest full's position (${third}).${await orphanNote(older)}`).toEqual([]);
      expect((await targetView()).windows[0].from).toBe(new Date(fulls[2]!.windowStart).toISOString());
      expect((await storeView()).lastGC).toMatchObject({ objects: pass.body.objects, bytes: pass.body.bytes, dryRun: false });
      await expectRebuiltCatalogAgrees(fulls[2]!.id);
    }, 180_000);
  });

  /** A fresh catalog given the same resources mirrors the store: it knows the newest full alone and the kept segments. */
  async function expectRebuiltCatalogAgrees(newest: string): Promise<void> {
    const fresh = await startCatalogHarness(`${engine.catalogName}_rebuilt`, { secretsKey: h.secretsKey });
    try {
      const applied = await fresh.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
      expect(applied.status).toBe(200);
      await fresh.runtime.mirror();
      const ids = (await fresh.runtime.db.backup.findMany({ where: { phase: 'Succeeded' } })).map((b) => b.id);
      expect(ids).toEqual([newest]);
      const kept = (await h.runtime.db.segment.findMany({ where: { expired: false }, select: { key: true } })).map((s) => s.key).sort();
      const rebuilt = (await fresh.runtime.db.segment.findMany({ select: { key: true } })).map((s) => s.key).sort();
      expect(rebuilt).toEqual(kept);
    } finally {
      await fresh.close();
    }
  }
}
