/**
 * Strata sandboxes, on demand:
 *
 *   POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres NATS_URL=nats://127.0.0.1:4222 \
 *     node_modules/.bin/node test/bench/strata-sandbox.ts [--rounds 2] [--queries 200] [--fresh] [--drop]
 *
 * 1. Makes (or reuses) the Postgres database of STRATA_BENCH_GB GiB (default 1: `strata_bench_1g`, the very database
 *    of test/bench/strata-backup.ts, made by the same generator: customers with an `email` column, orders with
 *    jsonb, bytea and four indexes). `--fresh` recreates it, `--drop` drops it at the end.
 * 2. In this process, as test/integration/strata-sandbox.test.ts runs them: the catalog (`startCatalogHarness`,
 *    served over HTTP), a mover (`startWorker`) and the sandbox service (`startSandboxHarness`, served over HTTP,
 *    its reconciler driven here). The embedded S3 server runs in a child process (test/bench/strata-sandbox-s3.ts)
 *    unless S3_ENDPOINT names one; the real gateway (`gateway/src/main.ts`, the stack's Node flags) runs in a child
 *    process with `SANDBOX_URL` and the Strata dev issuer, and signs principals with a key the sandbox service trusts.
 * 3. Not compared, reported: a logical backup of the database through the catalog and the mover (zstd, age, S3), and
 *    the baseline's archive, `pg_dump --format=custom --compress=0` into a local file.
 * 4. `--rounds` rounds (default 2) of
 *    - the baseline: `createdb` + `pg_restore --no-owner --no-acl --verbose` of that file into a new database of
 *      the same server (download-free); ANALYZE afterwards, timed apart (the mover runs one, the baseline does not);
 *      the database is dropped right after;
 *    - ours: `POST /api/v1/sandboxes` until the sandbox reads Ready: the reconciler's pass runs as the service runs it
 *      (every second, and at once while the sandbox is Pending), the sandbox is read every 100 ms. Broken down from
 *      the records (the catalog's restore, the sandbox), the mover's first progress report and what the sandbox's
 *      server runs (pg_stat_activity, read while it restores). Every sandbox but the last is deleted right after
 *      (DELETE, passes until it answers 404).
 * 5. Query latency on the last sandbox (VACUUMed first, untimed, so autovacuum's first pass over the restored
 *    tables does not run during the series): `--queries` (default 200) runs of a 10-row SELECT of the masked
 *    `customers.email` in four series, interleaved in rounds after a warm-up: straight to the sandbox's server with
 *    `pg` on one open connection (the baseline), the same with a new connection per query, `POST
 *    /api/v1/sandboxes/{name}/query` to the sandbox service, and the same through the gateway.
 * 6. Prints the tables and a one-line summary; deletes the sandbox, the baseline databases and everything else it made.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createStrataPrincipalSigner, createStrataPrincipalVerifier, generateInternalKeyPair } from '@sigil/kit/auth';
import { silentLogger, strataPrincipal, testNatsUrl, testPostgresAdminUrl, type StrataTestAuth } from '@sigil/kit/testing';
import { STRATA } from '@sigil/proto/strata';
import { serviceNodeFlags } from '@sigil/local-stack';
import { strataProgressWildcard } from '@sigil/proto/strata-jobs';
import { stackDocuments, startCatalogHarness, type CatalogHarness } from '@strata/backup-catalog/testing';
import { startWorker, type Worker } from '@strata/mover';
import { accessFromUrl } from '@strata/mover/testing';
import { serve, startSandboxHarness, type SandboxHarness } from '@strata/sandbox/testing';
import { generateAgeIdentity } from '@strata/stream';
import { createS3Client, ensureBucket, listKeys, removeObjects } from '@strata/stream/s3';
import type { S3ChildInfo } from './strata-sandbox-s3.ts';
import { databaseSize, ensureBenchDatabase, gib, pgTool, pgToolEnv } from './bench-postgres.ts';

const args = process.argv.slice(2);
const flag = (name: string): boolean => args.includes(name);
const option = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  const value = i >= 0 ? Number(args[i + 1]) : Number.NaN;
  return Number.isFinite(value) && value > 0 ? value : fallback;
};
const fresh = flag('--fresh');
const dropAtEnd = flag('--drop');
const rounds = Math.floor(option('--rounds', 2));
const queries = Math.floor(option('--queries', 200));

const GB = Number(process.env.STRATA_BENCH_GB ?? 1);
if (!Number.isFinite(GB) || GB <= 0) throw new Error(`STRATA_BENCH_GB must be a positive number of GiB (it is ${process.env.STRATA_BENCH_GB})`);
/** 1 GiB is strata-backup.ts's database, shared; other sizes get one of their own. */
const DATABASE = GB === 1 ? 'strata_bench_1g' : `strata_bench_${String(GB).replace('.', '_')}g`;
const MIN_BYTES = GB * 1024 ** 3;
const AIM_BYTES = 1.04 * MIN_BYTES;
const MAX_BYTES = 1.3 * MIN_BYTES;
/** Same tag as strata-backup.ts: the data is generated the same way, so either bench reuses the other's database. */
const TARGET = 'postgres-main';
/** The service's own reconcile interval (SANDBOX_INTERVAL_MS default). */
const PASS_INTERVAL_MS = 1000;
const POLL_MS = 100;
const READY_TIMEOUT_MS = Math.max(20, 20 * GB) * 60_000;
const QUERY_SQL = 'SELECT id, email, name, country FROM customers ORDER BY id LIMIT 10';
const QUERY_ROUNDS = 4;
const QUERY_WARMUP = 20;
/** The stack's Node flags for its services: the gateway runs as it runs there. */
const STACK_NODE_FLAGS = serviceNodeFlags();

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
const pgAdmin = testPostgresAdminUrl();
const source = accessFromUrl(pgAdmin);

// ---------------------------------------------------------------------------------------------
// Tools


const PG_DUMP = pgTool('pg_dump');
const PG_RESTORE = pgTool('pg_restore');
const CREATEDB = pgTool('createdb');
const connectionArgs = [`--host=${source.host}`, `--port=${source.port}`, `--username=${source.username}`, '--no-password'];


interface ToolRun {
  seconds: number;
  stdout: string;
  stderr: string;
}

/** Runs a tool; `onLine` sees each stderr line as it comes (pg_restore --verbose). Throws on a non-zero exit. */
async function tool(command: string, toolArgs: string[], onLine?: (line: string) => void): Promise<ToolRun> {
  const start = performance.now();
  const child = spawn(command, toolArgs, { env: pgToolEnv(source.password), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let partial = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    const text = d.toString();
    stderr += text;
    if (!onLine) return;
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error(`${path.basename(command)} exited ${code}: ${stderr.trim().slice(-2000)}`);
  return { seconds: (performance.now() - start) / 1000, stdout, stderr };
}

async function connect(database: string): Promise<pg.Client> {
  const client = new pg.Client({ host: source.host, port: source.port, user: source.username, password: source.password, database });
  client.on('error', () => {});
  await client.connect();
  return client;
}

async function adminQuery(sql: string): Promise<void> {
  const admin = await connect('postgres');
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** Busy and total CPU seconds of the machine since boot, from /proc/stat (undefined elsewhere). */
function machineCpu(): { busy: number; total: number } | undefined {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    const idle = fields[3]! + fields[4]!;
    return { busy: (total - idle) / 100, total: total / 100 };
  } catch {
    return undefined;
  }
}

/** Busy share of all CPUs between two /proc/stat readings. */
function busyShare(before: ReturnType<typeof machineCpu>, after: ReturnType<typeof machineCpu>): number | undefined {
  if (!before || !after || after.total === before.total) return undefined;
  return (after.busy - before.busy) / (after.total - before.total);
}

/** CPU time (user + system) a process has used so far, in milliseconds (clock ticks of 10 ms). */
function processCpuMs(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const secs = (start: number): string => `${((performance.now() - start) / 1000).toFixed(1)} s`;
const mib = (bytes: number): string => `${(bytes / 1024 ** 2).toFixed(0)} MiB`;
const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
};
/** The middle value; with an even count, the mean of the two middle ones (of 2 runs: their mean). */
const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const best = (values: number[]): number => Math.min(...values);

// ---------------------------------------------------------------------------------------------
// The database (the generator of test/bench/strata-backup.ts, sized by STRATA_BENCH_GB)


// ---------------------------------------------------------------------------------------------
// Child processes: S3 and the gateway

interface Child {
  child: ChildProcess;
  stop(): Promise<void>;
}

function childHandle(child: ChildProcess): Child {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  return {
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function startS3Child(stateDir: string): Promise<Child & { info: S3ChildInfo }> {
  const child = spawn(process.execPath, [path.join(here, 'strata-sandbox-s3.ts'), stateDir], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'inherit'] });
  const handle = childHandle(child);
  const info = await new Promise<S3ChildInfo>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('the S3 child did not start in 30 s')), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) {
        clearTimeout(timer);
        resolve(JSON.parse(line) as S3ChildInfo);
      }
    });
    child.once('exit', (code) => reject(new Error(`the S3 child exited ${code}`)));
  });
  return { ...handle, info };
}

/** The gateway as the stack runs it (`gateway/src/main.ts`, same Node flags), routing /api/v1/sandboxes to `sandboxUrl`. */
async function startGateway(work: string, sandboxUrl: string, privateJwk: unknown): Promise<Child & { url: string }> {
  const listenFile = path.join(work, 'gateway.url');
  const logFile = path.join(work, 'gateway.log');
  const out = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [...STACK_NODE_FLAGS, path.join(repoRoot, 'gateway/src/main.ts')], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      MALLOC_ARENA_MAX: '2',
      HOST: '127.0.0.1',
      PORT: '0',
      LISTEN_URL_FILE: listenFile,
      SERVICE_URLS: '{}',
      SANDBOX_URL: sandboxUrl,
      INTERNAL_JWT_PRIVATE_KEY: JSON.stringify(privateJwk),
      NATS_URL: testNatsUrl(),
      LOG_LEVEL: 'warn',
      NODE_ENV: 'development',
      STRATA_DEV_ISSUER: 'true',
      STRATA_ACCESS_AUDIENCE: 'strata-bench',
    },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  const handle = childHandle(child);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    const url = fs.existsSync(listenFile) ? fs.readFileSync(listenFile, 'utf8').trim() : '';
    if (url) {
      const ready = await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false);
      if (ready) return { ...handle, url };
    }
    await sleep(100);
  }
  await handle.stop();
  throw new Error(`the gateway did not become ready: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
}

// ---------------------------------------------------------------------------------------------
// Measurements

interface BaselineRun {
  seconds: number;
  createdb: number;
  /** pg_restore until its first post-data entry (the tables' data loaded). */
  data: number;
  /** pg_restore from its first post-data entry to its exit (constraints, indexes, foreign keys). */
  postData: number;
  /** ANALYZE of the restored database, after the measured time (the mover runs one, the baseline does not). */
  analyze: number;
  sizeBytes: number;
  busy?: number;
}

interface SandboxRun {
  name: string;
  seconds: number;
  /** POST /sandboxes answered (the catalog plans the restore). */
  post: number;
  /** The reconciler's pass that started the server (initdb, postgres up) and handed the restore to a mover. */
  serverStart: number;
  /** Handed to the mover → its first progress report (job picked up, manifest read, database created). */
  toMover?: number;
  /** First progress report → pg_restore's first post-data statement (the tables' data loaded). */
  data?: number;
  /** First post-data statement (primary keys, indexes, foreign keys) → the mover's ANALYZE. */
  postData?: number;
  /** The mover's ANALYZE → its restore.succeeded report. */
  analyze?: number;
  /** restore.succeeded → the sandbox recorded Ready (reports consumed, post-restore SQL). */
  toReady?: number;
  /** Ready recorded → seen by our poll. */
  pollSlack: number;
  usedBytes: number;
  busy?: number;
  deleteSeconds?: number;
}

interface Series {
  name: string;
  times: number[];
  run(): Promise<void>;
  /** CPU ms of other processes worth showing (the gateway), read around each round. */
  cpuPid?: number;
  cpuMs: number;
  ownCpuMs: number;
}

async function main(): Promise<void> {
  const started = performance.now();
  const [pgv, server] = await Promise.all([tool(PG_RESTORE, ['--version']), connect('postgres')]);
  const serverVersion = (await server.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v;
  const settings = (await server.query<{ name: string; setting: string }>("SELECT name, current_setting(name) AS setting FROM pg_settings WHERE name IN ('fsync', 'full_page_writes', 'synchronous_commit', 'shared_buffers', 'maintenance_work_mem', 'max_wal_size') ORDER BY name")).rows;
  await server.end();
  console.log(`strata sandbox bench: ${os.availableParallelism()} CPUs, ${(os.totalmem() / 1024 ** 3).toFixed(0)} GiB RAM, node ${process.version}; STRATA_BENCH_GB ${GB}, ${rounds} round(s), ${queries} queries per series`);
  console.log(`postgres ${serverVersion} on ${source.host}:${source.port} (${settings.map((s) => `${s.name}=${s.setting}`).join(', ')}); ${pgv.stdout.trim()} (${PG_RESTORE})`);

  console.log(`\n[1] database ${DATABASE}`);
  const db = await ensureBenchDatabase({ connect, database: DATABASE, minBytes: MIN_BYTES, aimBytes: AIM_BYTES, maxBytes: MAX_BYTES, fresh });
  if (db.generatedSeconds !== undefined) {
    console.log(`  generated ${db.orders.toLocaleString('en-US')} orders + 200,000 customers in ${db.generatedSeconds.toFixed(1)} s: pg_database_size ${db.sizeBytes} bytes (${gib(db.sizeBytes)})`);
  } else {
    console.log(`  reused (generated ${db.reusedFrom}; --fresh recreates it): ${db.orders.toLocaleString('en-US')} orders, pg_database_size ${db.sizeBytes} bytes (${gib(db.sizeBytes)})`);
  }

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-sandbox-bench-'));
  const bucket = `strata-sbx-bench-${Date.now().toString(36)}`;
  const baselineNames: string[] = [];
  let s3: (Child & { info: S3ChildInfo }) | undefined;
  let h: CatalogHarness | undefined;
  let s: SandboxHarness | undefined;
  let worker: Worker | undefined;
  let catalogServer: { url: string; close(): Promise<void> } | undefined;
  let sandboxServer: { url: string; close(): Promise<void> } | undefined;
  let gateway: (Child & { url: string }) | undefined;
  let unsubscribe: (() => void) | undefined;
  try {
    // ------------------------------------------------------------------ the services
    console.log('\n[2] services');
    if (!process.env.S3_ENDPOINT) {
      s3 = await startS3Child(path.join(work, 's3'));
      Object.assign(process.env, { S3_ENDPOINT: s3.info.endpoint, S3_ACCESS_KEY: s3.info.accessKey, S3_SECRET_KEY: s3.info.secretKey, S3_REGION: s3.info.region });
      console.log(`  embedded s3rver on ${s3.info.endpoint} (child process ${s3.child.pid}), data under ${work}`);
    } else {
      console.log(`  S3 at ${process.env.S3_ENDPOINT} (S3_ENDPOINT), bucket ${bucket}`);
    }
    const s3Client = createS3Client({ endpoint: process.env.S3_ENDPOINT!, region: process.env.S3_REGION ?? 'us-east-1', pathStyle: true, accessKeyId: process.env.S3_ACCESS_KEY ?? 'S3RVER', secretAccessKey: process.env.S3_SECRET_KEY ?? 'S3RVER' });
    await ensureBucket(s3Client, bucket, process.env.S3_REGION ?? 'us-east-1');

    h = await startCatalogHarness('sandbox_bench');
    catalogServer = await serve(h.app);
    worker = await startWorker({ bus: h.bus, log: silentLogger(), secretsKey: h.secretsKey, concurrency: 2, consumerPrefix: h.cell });
    // In a deployment one internal key signs and verifies every principal. Here the sandbox service signs its calls to
    // the catalog with the catalog's key and trusts a key of ours for its own callers: the gateway's
    // (INTERNAL_JWT_PRIVATE_KEY below) and the direct series'.
    const keys = await generateInternalKeyPair();
    const signAsGateway = await createStrataPrincipalSigner(keys.privateJwk);
    const sandboxAuth: StrataTestAuth = {
      publicJwk: JSON.stringify(keys.publicJwk),
      privateJwk: JSON.stringify(keys.privateJwk),
      verify: await createStrataPrincipalVerifier(keys.publicJwk),
      headers: async (principal) => ({ [STRATA.principalHeader]: await signAsGateway(principal) }),
      sign: h.auth.sign,
    };
    s = await startSandboxHarness({ name: 'sandbox_bench', auth: sandboxAuth, catalogUrl: catalogServer.url, cell: h.cell, maxTtl: '6h', secretsKey: h.secretsKey });
    const sbx = s;
    const catalog = h;
    sandboxServer = await serve(s.app);
    gateway = await startGateway(work, sandboxServer.url, keys.privateJwk);
    console.log(`  catalog ${catalogServer.url}, sandbox service ${sandboxServer.url}, mover: in this process; sandboxes under ${s.baseDir}`);
    console.log(`  gateway ${gateway.url} (gateway/src/main.ts, child process ${gateway.child.pid}, ${STACK_NODE_FLAGS.join(' ')}; SANDBOX_URL, Strata dev issuer)`);

    const { identity, recipient } = await generateAgeIdentity();
    const docs = stackDocuments({
      bucket,
      recipients: [recipient],
      identity,
      postgres: { host: source.host, port: source.port, username: source.username, password: source.password },
      databases: { postgres: [DATABASE] },
      postgresMode: 'logical',
      mask: ['^email$'],
      targetSandbox: { sizeLimit: `${Math.max(4, Math.ceil(GB * 6))}Gi` },
      policySandbox: { defaultTTL: '2h', maxTTL: '6h' },
    });
    const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
    if (applied.status !== 200) throw new Error(`applying the resources: ${applied.status} ${JSON.stringify(applied.body)}`);
    await h.runtime.mirror();

    // The mover's progress reports, as the catalog hears them: the first one says a restore has begun streaming.
    const firstProgress = new Map<string, number>();
    const subscription = await h.bus.listen(strataProgressWildcard(h.cell), (payload) => {
      const report = payload as { kind?: string; id?: string };
      if (report.kind === 'restore' && report.id && !firstProgress.has(report.id)) firstProgress.set(report.id, Date.now());
    });
    unsubscribe = () => subscription.unsubscribe();

    // ------------------------------------------------------------------ the backup and the baseline's archive
    console.log(`\n[3] the backup (catalog → mover → S3) and the baseline's archive; reported, not compared`);
    const backupStart = performance.now();
    const requested = await h.call('operator', 'post', `/api/v1/targets/default/${TARGET}/backup-now`, { reason: 'sandbox benchmark' });
    if (requested.status !== 202) throw new Error(`backup-now: ${requested.status} ${JSON.stringify(requested.body)}`);
    const backupDeadline = Date.now() + READY_TIMEOUT_MS;
    let backup;
    for (;;) {
      backup = await catalog.runtime.db.backup.findFirst({ where: { name: requested.body.name as string } });
      if (backup && (backup.phase === 'Succeeded' || backup.phase === 'Failed')) break;
      if (Date.now() > backupDeadline) throw new Error('the backup did not finish in time');
      await sleep(250);
    }
    if (backup.phase !== 'Succeeded') throw new Error(`the backup failed: ${backup.message}`);
    const backupSeconds = (performance.now() - backupStart) / 1000;
    console.log(`  logical backup ${backup.name}: ${backupSeconds.toFixed(1)} s (backup-now → Succeeded; zstd fastest, 1 thread, age, S3 parts of 5 MiB); raw ${mib(Number(backup.rawBytes))}, stored ${mib(Number(backup.storedBytes))}`);

    const archive = path.join(work, 'source.dump');
    const dumped = await tool(PG_DUMP, ['--format=custom', '--compress=0', ...connectionArgs, `--dbname=${DATABASE}`, `--file=${archive}`]);
    const archiveBytes = fs.statSync(archive).size;
    console.log(`  pg_dump --format=custom --compress=0 → ${archive}: ${mib(archiveBytes)} in ${dumped.seconds.toFixed(1)} s`);

    // ------------------------------------------------------------------ rounds
    const baselineRun = async (round: number): Promise<BaselineRun> => {
      const name = `${DATABASE}_restore_r${round}`;
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await adminQuery('CHECKPOINT');
      baselineNames.push(name);
      const before = machineCpu();
      const start = performance.now();
      const created = await tool(CREATEDB, [...connectionArgs, name]);
      let postDataAt: number | undefined;
      const restoreStart = performance.now();
      await tool(PG_RESTORE, [...connectionArgs, `--dbname=${name}`, '--no-owner', '--no-acl', '--verbose', archive], (line) => {
        if (postDataAt === undefined && /creating (FK CONSTRAINT|CONSTRAINT|INDEX) /.test(line)) postDataAt = performance.now();
      });
      const end = performance.now();
      const after = machineCpu();
      const client = await connect(name);
      let analyze: number;
      let sizeBytes: number;
      try {
        const a0 = performance.now();
        await client.query('ANALYZE');
        analyze = (performance.now() - a0) / 1000;
        sizeBytes = await databaseSize(client);
      } finally {
        await client.end();
      }
      // Dropped at once: its autovacuum must not run during the next measurement.
      await adminQuery(`DROP DATABASE ${name} WITH (FORCE)`);
      const split = postDataAt ?? end;
      return {
        seconds: (end - start) / 1000,
        createdb: created.seconds,
        data: (split - restoreStart) / 1000,
        postData: (end - split) / 1000,
        analyze,
        sizeBytes,
        ...(busyShare(before, after) !== undefined ? { busy: busyShare(before, after)! } : {}),
      };
    };

    const deleteSandbox = async (name: string): Promise<number> => {
      const start = performance.now();
      const res = await sbx.call('restorer', 'delete', `/api/v1/sandboxes/${name}`);
      if (res.status !== 200) throw new Error(`DELETE ${name}: ${res.status} ${JSON.stringify(res.body)}`);
      const deadline = Date.now() + 120_000;
      for (;;) {
        await sbx.reconciler.pass();
        if ((await sbx.call('viewer', 'get', `/api/v1/sandboxes/${name}`)).status === 404) break;
        if (Date.now() > deadline) throw new Error(`sandbox ${name} was not deleted in 2 minutes`);
        await sleep(POLL_MS);
      }
      return (performance.now() - start) / 1000;
    };

    const sandboxRun = async (): Promise<SandboxRun> => {
      const before = machineCpu();
      const t0 = performance.now();
      const t0Wall = Date.now();
      const res = await sbx.call('restorer', 'post', '/api/v1/sandboxes', { target: `default/${TARGET}`, mode: 'sandbox', reason: 'benchmark' });
      if (res.status !== 202) throw new Error(`POST /api/v1/sandboxes: ${res.status} ${JSON.stringify(res.body)}`);
      const post = (performance.now() - t0) / 1000;
      const name = res.body.name as string;
      const row = await sbx.db.sandbox.findFirstOrThrow({ where: { name } });
      const deadline = Date.now() + READY_TIMEOUT_MS;
      let phase = 'Pending';
      let lastPass = Number.NEGATIVE_INFINITY;
      let serverStart = 0;
      let view: { phase: string; message: string; usedBytes: number };
      // What the sandbox's server is running, read while it restores: when pg_restore's post-data statements and the
      // mover's ANALYZE begin (their query_start, the server's clock: the same machine's).
      let monitor: pg.Client | undefined;
      let postDataAt: number | undefined;
      let analyzeAt: number | undefined;
      const watchServer = async (): Promise<void> => {
        if (!monitor) {
          const c = await sbx.call('restorer', 'get', `/api/v1/sandboxes/${name}/credentials`);
          if (c.status !== 200) return;
          const client = new pg.Client({ host: c.body.host, port: c.body.port, user: c.body.username, password: c.body.password, database: 'postgres' });
          client.on('error', () => {});
          await client.connect();
          monitor = client;
        }
        const active = await monitor.query<{ query: string; started: Date }>(
          "SELECT query, query_start AS started FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND state = 'active' AND query_start IS NOT NULL",
        );
        for (const { query, started: at } of active.rows) {
          const t = at.getTime();
          if (/^\s*ANALYZE\b/i.test(query)) analyzeAt = Math.min(analyzeAt ?? t, t);
          else if (/^\s*(CREATE (UNIQUE )?INDEX|ALTER TABLE)\b/i.test(query)) postDataAt = Math.min(postDataAt ?? t, t);
        }
      };
      for (;;) {
        if (phase === 'Pending' || performance.now() - lastPass >= PASS_INTERVAL_MS) {
          const p0 = performance.now();
          lastPass = p0;
          await sbx.reconciler.pass();
          if (phase === 'Pending') serverStart += (performance.now() - p0) / 1000;
        }
        const got = await sbx.call('viewer', 'get', `/api/v1/sandboxes/${name}`);
        if (got.status !== 200) throw new Error(`GET sandbox ${name}: ${got.status} ${JSON.stringify(got.body)}`);
        view = got.body.sandbox;
        phase = view.phase;
        if (phase === 'Ready') break;
        if (phase === 'Restoring') await watchServer().catch(() => undefined);
        if (!['Pending', 'Restoring'].includes(phase)) throw new Error(`sandbox ${name} is ${phase}: ${view.message}`);
        if (Date.now() > deadline) throw new Error(`sandbox ${name} was not Ready in ${READY_TIMEOUT_MS / 60_000} minutes (${phase}: ${view.message})`);
        await sleep(POLL_MS);
      }
      const end = performance.now();
      const after = machineCpu();
      await (monitor as pg.Client | undefined)?.end().catch(() => undefined);
      const [sandboxRow, restoreRow] = await Promise.all([
        sbx.db.sandbox.findFirstOrThrow({ where: { id: row.id } }),
        catalog.runtime.db.restore.findFirstOrThrow({ where: { id: row.restoreId } }),
      ]);
      const first = firstProgress.get(row.restoreId);
      const readyAt = sandboxRow.readyAt?.getTime();
      const handed = restoreRow.startedAt?.getTime();
      const completed = restoreRow.completedAt?.getTime();
      const span = (from: number | undefined, to: number | undefined): number | undefined => (from !== undefined && to !== undefined ? (to - from) / 1000 : undefined);
      const run: SandboxRun = {
        name,
        seconds: (end - t0) / 1000,
        post,
        serverStart,
        pollSlack: readyAt !== undefined ? Math.max(0, (t0Wall + (end - t0) - readyAt) / 1000) : Number.NaN,
        usedBytes: Number(view!.usedBytes),
      };
      const parts = { toMover: span(handed, first), data: span(first, postDataAt), postData: span(postDataAt, analyzeAt), analyze: span(analyzeAt, completed), toReady: span(completed, readyAt) };
      for (const [key, value] of Object.entries(parts)) if (value !== undefined) Object.assign(run, { [key]: value });
      const share = busyShare(before, after);
      if (share !== undefined) run.busy = share;
      return run;
    };

    console.log(`\n[4] time to Ready against createdb + pg_restore, ${rounds} round(s)`);
    const baselines: BaselineRun[] = [];
    const sandboxes: SandboxRun[] = [];
    for (let round = 1; round <= rounds; round++) {
      const b = await baselineRun(round);
      baselines.push(b);
      console.log(`  r${round} baseline  createdb + pg_restore ${b.seconds.toFixed(1)} s (createdb ${b.createdb.toFixed(2)}, data ${b.data.toFixed(1)}, post-data ${b.postData.toFixed(1)}); then ANALYZE ${b.analyze.toFixed(1)} s; ${gib(b.sizeBytes)}  (${secs(started)} elapsed)`);
      await adminQuery('CHECKPOINT');
      const r = await sandboxRun();
      sandboxes.push(r);
      if (round < rounds) r.deleteSeconds = await deleteSandbox(r.name);
      console.log(
        `  r${round} sandbox   ${r.name} Ready in ${r.seconds.toFixed(1)} s (POST ${r.post.toFixed(2)}, server start ${r.serverStart.toFixed(1)}, to the mover ${r.toMover?.toFixed(1) ?? '?'}, data ${r.data?.toFixed(1) ?? '?'}, post-data ${r.postData?.toFixed(1) ?? '?'}, ANALYZE ${r.analyze?.toFixed(1) ?? '?'}, to Ready ${r.toReady?.toFixed(2) ?? '?'}); data dir ${gib(r.usedBytes)}${r.deleteSeconds !== undefined ? `; deleted in ${r.deleteSeconds.toFixed(1)} s` : ''}  (${secs(started)} elapsed)`,
      );
    }

    // ------------------------------------------------------------------ queries
    const last = sandboxes.at(-1)!;
    console.log(`\n[5] queries on ${last.name}: ${QUERY_SQL}`);
    const credentials = await sbx.call('restorer', 'get', `/api/v1/sandboxes/${last.name}/credentials`);
    if (credentials.status !== 200) throw new Error(`credentials: ${credentials.status} ${JSON.stringify(credentials.body)}`);
    const conn = { host: credentials.body.host as string, port: credentials.body.port as number, user: credentials.body.username as string, password: credentials.body.password as string, database: credentials.body.database as string };
    const open = async (): Promise<pg.Client> => {
      const client = new pg.Client(conn);
      client.on('error', () => {});
      await client.connect();
      return client;
    };
    const persistent = await open();
    const v0 = performance.now();
    await persistent.query('VACUUM');
    console.log(`  VACUUM of the sandbox's database first (untimed: keeps autovacuum's first pass out of the series): ${secs(v0)}`);

    const queryPath = `/api/v1/sandboxes/${last.name}/query`;
    const body = JSON.stringify({ sql: QUERY_SQL });
    const token = await fetch(`${gateway.url}/api/dev/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'bench@example.test', role: 'restorer' }) }).then(
      async (r) => ((await r.json()) as { token: string }).token,
    );
    let principalToken = '';
    const signDirect = async (): Promise<void> => {
      principalToken = (await sandboxAuth.headers(strataPrincipal('restorer')))[STRATA.principalHeader]!;
    };
    await signDirect();
    const check = (label: string, status: number, result: { rows?: unknown[][]; masked?: string[]; error?: string }): void => {
      if (status !== 200 || result.rows?.length !== 10 || !result.masked?.includes('email') || !result.rows.every((row) => row[1] === '***')) {
        throw new Error(`${label}: ${status} ${JSON.stringify(result).slice(0, 500)}`);
      }
    };
    const post = async (label: string, url: string, headers: Record<string, string>): Promise<void> => {
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
      check(label, r.status, (await r.json()) as { rows?: unknown[][]; masked?: string[] });
    };
    const series: Series[] = [
      {
        name: 'pg, one open connection (baseline)',
        times: [],
        cpuMs: 0,
        ownCpuMs: 0,
        async run() {
          const r = await persistent.query(QUERY_SQL);
          if (r.rows.length !== 10) throw new Error('pg: not 10 rows');
        },
      },
      {
        name: 'pg, connect + query + close',
        times: [],
        cpuMs: 0,
        ownCpuMs: 0,
        async run() {
          const client = await open();
          const r = await client.query(QUERY_SQL);
          await client.end();
          if (r.rows.length !== 10) throw new Error('pg: not 10 rows');
        },
      },
      {
        name: 'sandbox service over HTTP (no gateway)',
        times: [],
        cpuMs: 0,
        ownCpuMs: 0,
        run: () => post('sandbox service', `${sandboxServer!.url}${queryPath}`, { [STRATA.principalHeader]: principalToken }),
      },
      {
        name: 'through the gateway',
        times: [],
        cpuPid: gateway.child.pid!,
        cpuMs: 0,
        ownCpuMs: 0,
        run: () => post('gateway', `${gateway!.url}${queryPath}`, { 'cf-access-jwt-assertion': token }),
      },
    ];
    for (const one of series) for (let i = 0; i < QUERY_WARMUP; i++) await one.run();
    const perRound = Math.ceil(queries / QUERY_ROUNDS);
    for (let round = 0; round < QUERY_ROUNDS; round++) {
      await signDirect(); // principal tokens live 60 s
      for (const one of series) {
        const other0 = one.cpuPid ? processCpuMs(one.cpuPid) : 0;
        const own0 = process.cpuUsage();
        for (let i = 0; i < perRound && one.times.length < queries; i++) {
          const t = performance.now();
          await one.run();
          one.times.push(performance.now() - t);
        }
        const own = process.cpuUsage(own0);
        one.ownCpuMs += (own.user + own.system) / 1000;
        if (one.cpuPid) one.cpuMs += processCpuMs(one.cpuPid) - other0;
      }
    }
    await persistent.end();

    // ------------------------------------------------------------------ report
    console.log(`\n[6] results (machine: ${os.availableParallelism()} CPUs; ${rounds} run(s) each; median of 2 = their mean)`);
    const ours = sandboxes.map((r) => r.seconds);
    const theirs = baselines.map((b) => b.seconds);
    const runCells = (values: Array<number | undefined>, digits = 1): string[] => Array.from({ length: rounds }, (_, i) => (values[i] !== undefined && Number.isFinite(values[i]) ? values[i]!.toFixed(digits) : '—'));
    const stat = (values: Array<number | undefined>, digits = 1): string[] => {
      const known = values.filter((v): v is number => v !== undefined && Number.isFinite(v));
      return known.length ? [best(known).toFixed(digits), median(known).toFixed(digits)] : ['—', '—'];
    };
    const readyRows: string[][] = [
      ['sandbox: POST → Ready, s', ...runCells(ours), ...stat(ours)],
      ['  POST answered (catalog plans the restore)', ...runCells(sandboxes.map((r) => r.post), 2), ...stat(sandboxes.map((r) => r.post), 2)],
      ['  server start (initdb + postgres up; the pass)', ...runCells(sandboxes.map((r) => r.serverStart)), ...stat(sandboxes.map((r) => r.serverStart))],
      ['  handed → mover streaming', ...runCells(sandboxes.map((r) => r.toMover)), ...stat(sandboxes.map((r) => r.toMover))],
      ['  data: S3 → age → zstd → pg_restore', ...runCells(sandboxes.map((r) => r.data)), ...stat(sandboxes.map((r) => r.data))],
      ['  post-data: keys, indexes, foreign keys', ...runCells(sandboxes.map((r) => r.postData)), ...stat(sandboxes.map((r) => r.postData))],
      ['  ANALYZE (the mover) + its report', ...runCells(sandboxes.map((r) => r.analyze)), ...stat(sandboxes.map((r) => r.analyze))],
      ['  restore.succeeded → Ready', ...runCells(sandboxes.map((r) => r.toReady), 2), ...stat(sandboxes.map((r) => r.toReady), 2)],
      ['  Ready → seen by the poll', ...runCells(sandboxes.map((r) => r.pollSlack), 2), ...stat(sandboxes.map((r) => r.pollSlack), 2)],
      ['baseline: createdb + pg_restore, s', ...runCells(theirs), ...stat(theirs)],
      ['  createdb', ...runCells(baselines.map((b) => b.createdb), 2), ...stat(baselines.map((b) => b.createdb), 2)],
      ['  pg_restore: data', ...runCells(baselines.map((b) => b.data)), ...stat(baselines.map((b) => b.data))],
      ['  pg_restore: post-data', ...runCells(baselines.map((b) => b.postData)), ...stat(baselines.map((b) => b.postData))],
      ['  (ANALYZE afterwards, not counted)', ...runCells(baselines.map((b) => b.analyze)), ...stat(baselines.map((b) => b.analyze))],
      ['ratio sandbox / baseline', ...runCells(ours.map((o, i) => o / theirs[i]!), 2), `${(best(ours) / best(theirs)).toFixed(2)}×`, `${(median(ours) / median(theirs)).toFixed(2)}×`],
      ['machine CPU busy: sandbox / baseline', ...Array.from({ length: rounds }, (_, i) => `${pct(sandboxes[i]?.busy)} / ${pct(baselines[i]?.busy)}`), '', ''],
    ];
    table(['seconds', ...Array.from({ length: rounds }, (_, i) => `run ${i + 1}`), 'best', 'median'], readyRows);
    console.log('  ratio columns: best ÷ best and median ÷ median. Sandbox servers run with fsync=off, full_page_writes=off, shared_buffers=32MB;');
    console.log(`  the baseline restores into the machine's server (settings above). Deleting a sandbox took ${sandboxes.filter((r) => r.deleteSeconds !== undefined).map((r) => `${r.deleteSeconds!.toFixed(1)} s`).join(', ') || '—'}.`);

    const base = series[0]!;
    const baseP50 = percentile(base.times, 0.5);
    const queryRows = series.map((one) => [
      one.name,
      String(one.times.length),
      percentile(one.times, 0.5).toFixed(2),
      percentile(one.times, 0.9).toFixed(2),
      percentile(one.times, 0.99).toFixed(2),
      `${(percentile(one.times, 0.5) / baseP50).toFixed(1)}×`,
      `${((one.ownCpuMs + one.cpuMs) / one.times.length).toFixed(2)}${one.cpuPid ? ` (gateway ${(one.cpuMs / one.times.length).toFixed(2)})` : ''}`,
    ]);
    console.log('');
    table(['series', 'n', 'p50 ms', 'p90 ms', 'p99 ms', 'p50 ratio', 'CPU ms/query*'], queryRows);
    console.log('  * this process (client, and the sandbox service for its series) plus the gateway process for its series; the sandbox\'s postgres not counted.');
    const through = series[3]!;
    const service = series[2]!;
    console.log(`  the gateway adds ${(percentile(through.times, 0.5) - percentile(service.times, 0.5)).toFixed(2)} ms at p50 (${(percentile(through.times, 0.5) / percentile(service.times, 0.5)).toFixed(2)}× the service alone)`);

    console.log(
      `\nsummary: a sandbox of the ${gib(db.sizeBytes)} database was Ready in ${best(ours).toFixed(1)} s best / ${median(ours).toFixed(1)} s median, against ${best(theirs).toFixed(1)} / ${median(theirs).toFixed(1)} s for createdb + pg_restore of a local file (${(best(ours) / best(theirs)).toFixed(2)}× / ${(median(ours) / median(theirs)).toFixed(2)}×); a masked 10-row query through the gateway: p50 ${percentile(through.times, 0.5).toFixed(2)} ms, p99 ${percentile(through.times, 0.99).toFixed(2)} ms, against ${baseP50.toFixed(2)} / ${percentile(base.times, 0.99).toFixed(2)} ms with pg on an open connection (${(percentile(through.times, 0.5) / baseP50).toFixed(1)}× at p50)`,
    );

    last.deleteSeconds = await deleteSandbox(last.name);
    console.log(`\n  deleted ${last.name} in ${last.deleteSeconds.toFixed(1)} s`);
  } finally {
    unsubscribe?.();
    await gateway?.stop();
    // Stops and wipes every sandbox server still there (a run that failed half-way).
    await s?.close().catch((error: unknown) => console.error(`closing the sandbox service: ${(error as Error).message}`));
    await worker?.stop();
    await sandboxServer?.close();
    await catalogServer?.close();
    await h?.close().catch((error: unknown) => console.error(`closing the catalog: ${(error as Error).message}`));
    if (process.env.S3_ENDPOINT && !s3) {
      const client = createS3Client({ endpoint: process.env.S3_ENDPOINT, region: process.env.S3_REGION ?? 'us-east-1', pathStyle: true, accessKeyId: process.env.S3_ACCESS_KEY ?? 'S3RVER', secretAccessKey: process.env.S3_SECRET_KEY ?? 'S3RVER' });
      const keys: string[] = [];
      for await (const key of listKeys(client, bucket, '')) keys.push(key);
      if (keys.length) await removeObjects(client, bucket, keys).catch(() => undefined);
    }
    await s3?.stop();
    fs.rmSync(work, { recursive: true, force: true });
    for (const name of baselineNames) await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    for (const url of [h?.databaseUrl, s?.databaseUrl]) {
      const name = url ? new URL(url).pathname.slice(1) : '';
      if (name) await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
    }
    if (dropAtEnd) {
      await adminQuery(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
      console.log(`dropped ${DATABASE}`);
    }
  }
  console.log(`\ndone in ${secs(started)}`);
}

const pct = (share: number | undefined): string => (share === undefined ? '—' : `${(100 * share).toFixed(0)}%`);

function table(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
  for (const row of rows) console.log(line(row));
}

await main();
