// On demand (issue 28): node_modules/.bin/node test/bench/billing.ts. Two targets, each against a baseline in the
// same process:
//  1. the entitlements check adds at most 1 ms p50 to `POST /v1/envelopes`: two envelopes apps on one database, one
//     with the check (a cache over a real billing app on 127.0.0.1) and one without, a Free organization in live mode
//     with completed envelopes this period and thousands in its and others' history; rounds of sequential keep-alive
//     requests alternating between the two; p50/p90, the difference of p50s, and CPU per request of this process;
//  2. counting keeps up with 500 completions per second: the sustained rate at which billing's usage consumer counts
//     a backlog of `envelope.completed` on JetStream, against a consumer of the same backlog that only acknowledges;
//     then 500 events/s for 10 s published while it runs, and how far behind it was when publishing stopped.
// Needs Postgres and NATS (POSTGRES_URL, NATS_URL; the machine's by default) and S3 (S3_ENDPOINT and keys, else an
// embedded s3rver). BENCH_ROUNDS, BENCH_REQUESTS, BENCH_WARMUP, BENCH_EVENTS, BENCH_RATE, BENCH_SECONDS,
// BENCH_CONCURRENCY (the usage consumer's, 32 as billing's default) change the load; BENCH_PART=check|count runs one.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import { createApp as createBillingApp } from '@sigil/billing';
import { createDb as createBillingDb } from '@sigil/billing/db';
import { createApp as createEnvelopesApp } from '@sigil/envelopes';
import { createDb as createEnvelopesDb } from '@sigil/envelopes/db';
import { PRINCIPAL_HEADER } from '@sigil/kit/auth';
import { billingEntitlementsSource, createEntitlementsCache } from '@sigil/kit/entitlements';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal, createTestAuth, freshTestDatabase, silentLogger, testPostgresAdminUrl } from '@sigil/kit/testing';
import type { TemplateVersionSnapshot } from '@sigil/proto/internal-templates';
import { startS3, type S3Handle } from '@sigil/local-stack';
import { createS3FileStore } from '@strata/stream/file-store';
import { testFileStoreOptions } from '@strata/stream/testing';
import { countingBench } from './billing-count.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 100);
const PART = process.env.BENCH_PART ?? 'all';
const root = path.resolve(import.meta.dirname, '../..');
const tag = randomBytes(4).toString('hex');

type Processor = Parameters<typeof createBillingApp>[0]['processor'];
type TemplatesClient = Parameters<typeof createEnvelopesApp>[0]['templates'];
type Mailer = Parameters<typeof createEnvelopesApp>[0]['mail']['mailer'];

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * q) - 1)] ?? NaN;
const ms = (x: number) => `${x.toFixed(2)} ms`;

async function listen(app: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(app);
  server.keepAliveTimeout = 65_000; // as runServer sets it
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** The processor is never called on the measured paths (entitlements read the account row); a call would fail loudly. */
const unused = (name: string) => () => Promise.reject(new Error(`the bench's processor was asked to ${name}`));
const processor: Processor = {
  createCustomer: unused('createCustomer'),
  createCheckout: unused('createCheckout'),
  switchPlan: unused('switchPlan'),
  createPortal: unused('createPortal'),
  retrieveSubscription: unused('retrieveSubscription'),
  reportUsage: unused('reportUsage'),
  parseWebhook: unused('parseWebhook'),
};

const databases: string[] = [];
const servers: Server[] = [];
const cleanups: Array<() => Promise<unknown> | unknown> = [];
async function database(name: string, service: string): Promise<string> {
  databases.push(name);
  return freshTestDatabase(name, path.join(root, `prisma/${service}/migrations`));
}

try {
  const auth = await createTestAuth();
  const log = silentLogger();

  // Billing, as envelopes reaches it: its own database, its app over HTTP.
  const billingDb = createBillingDb(await database(`sigil_bench_billing_${tag}`, 'billing'));
  cleanups.push(() => billingDb.$disconnect());
  const billing = await createBillingApp({ db: billingDb, log, verifyPrincipal: auth.verify, processor, dashboardUrl: 'http://127.0.0.1:1/app', notifyPlanChanged: () => undefined });
  const billingServer = await listen(billing.app);
  servers.push(billingServer.server);

  // Envelopes: one database, two apps; the templates service answered in memory (as the service tests do).
  const envelopesDb = createEnvelopesDb(await database(`sigil_bench_envelopes_${tag}`, 'envelopes'));
  cleanups.push(() => envelopesDb.$disconnect());
  let s3: S3Handle | undefined;
  let storeOptions = testFileStoreOptions('sigil-bench-billing');
  if (!process.env.S3_ENDPOINT) {
    const stateDir = await mkdtemp(path.join(tmpdir(), 'sigil-bench-billing-'));
    s3 = await startS3({ stateDir, log: () => undefined });
    cleanups.push(async () => {
      await s3?.stop();
      await rm(stateDir, { recursive: true, force: true });
    });
    storeOptions = { ...storeOptions, endpoint: s3.endpoint, region: s3.region, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey };
  }
  const store = await createS3FileStore(storeOptions);
  const mailer: Mailer = { send: () => Promise.reject(new Error('the bench sends no mail')), close: () => undefined }; // creating sends none
  const templateId = newId('tpl');
  const snapshot: TemplateVersionSnapshot = {
    templateId,
    templateName: 'Services agreement',
    version: 1,
    roles: [{ name: 'client', order: 1 }, { name: 'counsel', order: 2 }],
    fields: [
      { id: 'company', role: 'client', type: 'text', required: true, page: 1, x: 72, y: 100, width: 300, height: 24, variable: 'company' },
      { id: 'client_signature', role: 'client', type: 'signature', required: true, page: 2, x: 72, y: 600, width: 200, height: 40 },
      { id: 'counsel_signature', role: 'counsel', type: 'signature', required: true, page: 2, x: 320, y: 600, width: 200, height: 40 },
    ],
    variables: [{ name: 'company', required: true }],
    pageCount: 2,
    pages: [{ width: 612, height: 792 }, { width: 612, height: 792 }],
    sha256: '0'.repeat(64),
    publishedAt: new Date().toISOString(),
  };
  const templates: TemplatesClient = {
    version: async (_caller, id) => (id === templateId ? snapshot : undefined),
    use: async (_caller, id) => (id === templateId ? snapshot : undefined),
    document: async () => Buffer.alloc(0),
  };
  let billingReads = 0;
  const source = billingEntitlementsSource({ baseUrl: billingServer.url, signPrincipal: auth.sign, actorId: 'envelopes' });
  const entitlements = await createEntitlementsCache({ source: (organizationId) => (billingReads++, source(organizationId)) });
  cleanups.push(() => entitlements.stop());
  const common = { db: envelopesDb, log, verifyPrincipal: auth.verify, templates, store, mail: { mailer, publicUrl: 'https://sign.example.test' } };
  const series = [
    { name: 'check off (baseline)', ...(await listen((await createEnvelopesApp(common)).app)) },
    { name: 'check on', ...(await listen((await createEnvelopesApp({ ...common, entitlements })).app)) },
  ].map((s) => ({ ...s, pool: new Pool(s.url, { connections: 1, keepAliveTimeout: 65_000 }), latencies: [] as number[], cpuMicros: 0 }));
  for (const s of series) {
    servers.push(s.server);
    cleanups.push(() => s.pool.close());
  }

  // A Free organization (billing has never seen it: Free), in live mode.
  const organizationId = newId('org');
  let principalHeader = await auth.sign(apiKeyPrincipal({ organizationId, mode: 'live' }));
  const resign = setInterval(async () => (principalHeader = await auth.sign(apiKeyPrincipal({ organizationId, mode: 'live' }))), 20_000); // tokens live 60 s
  cleanups.push(() => clearInterval(resign));
  let n = 0;
  async function create(s: (typeof series)[number]): Promise<Record<string, unknown>> {
    const body = JSON.stringify({
      template: templateId,
      recipients: [{ role: 'client', name: `Client ${n}`, email: `client${n}@example.com` }, { role: 'counsel', name: 'Counsel', email: 'counsel@example.com' }],
      variables: { company: `Company ${n++}` },
    });
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    const res = await s.pool.request({ method: 'POST', path: '/v1/envelopes', headers: { [PRINCIPAL_HEADER]: principalHeader, 'content-type': 'application/json' }, body });
    const text = await res.body.text();
    s.latencies.push(performance.now() - t0);
    const used = process.cpuUsage(cpu); // requests go one at a time: what this process did meanwhile is this one's
    s.cpuMicros += used.user + used.system;
    if (res.statusCode !== 201) throw new Error(`${s.name}: POST /v1/envelopes answered ${res.statusCode} ${text.slice(0, 300)}`);
    return JSON.parse(text) as Record<string, unknown>;
  }

  const created = await create(series[0]!);
  const seeded = await seedHistory(envelopesDb, organizationId);
  // The envelope the events of part 2 carry: a real one, as the API answers it, completed.
  const envelopeView = { ...created, status: 'completed', seal: 'pending', testMode: false, recipients: (created.recipients as Array<Record<string, unknown>>).map((r) => ({ ...r, status: 'completed' })) };

  if (PART === 'all' || PART === 'check') {
    const plan = await entitlements.get(organizationId);
    if (plan.plan !== 'free' || plan.overageAllowed) throw new Error(`the organization is on ${plan.plan}: the check would not count`);
    for (let i = 0; i < WARMUP; i++) for (const s of series) await create(s);
    billingReads = 0;
    for (const s of series) {
      s.latencies.length = 0;
      s.cpuMicros = 0;
    }
    const startedAt = performance.now();
    // Interleaved request by request (each round starts with the other series), so the machine's load falls on both.
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? series : [...series].reverse();
      for (let i = 0; i < REQUESTS; i++) for (const s of order) await create(s);
    }
    const seconds = (performance.now() - startedAt) / 1000;
    const [off, on] = series as [(typeof series)[number], (typeof series)[number]];
    console.log(`\nEntitlements check on POST /v1/envelopes: a Free organization in live mode (${seeded.thisPeriod} completed this period,`);
    console.log(`${seeded.total.toLocaleString('en')} envelopes seeded in all), ${ROUNDS} rounds x ${REQUESTS} sequential keep-alive requests per series, alternating, after ${WARMUP} each:`);
    for (const s of series) {
      console.log(`  ${s.name.padEnd(21)} p50 ${ms(quantile(s.latencies, 0.5))}  p90 ${ms(quantile(s.latencies, 0.9))}  p99 ${ms(quantile(s.latencies, 0.99))}  CPU ${(s.cpuMicros / s.latencies.length).toFixed(0)} µs/request (this process)`);
    }
    const diff = quantile(on.latencies, 0.5) - quantile(off.latencies, 0.5);
    console.log(`  difference of p50s: ${diff >= 0 ? '+' : ''}${ms(diff)} (${(quantile(on.latencies, 0.5) / quantile(off.latencies, 0.5)).toFixed(3)}x)   target <= 1 ms: ${diff <= 1 ? 'met' : 'MISSED'}`);
    const paired = quantile(on.latencies.map((t, i) => t - (off.latencies[i] as number)), 0.5);
    console.log(`  median of the paired differences (each request with the other series' next to it): ${ms(paired)}`);
    console.log(`  CPU difference: ${((on.cpuMicros / on.latencies.length - off.cpuMicros / off.latencies.length) / 1000).toFixed(3)} ms/request; billing was asked ${billingReads} times in ${seconds.toFixed(1)} s (5 s cache)`);
    // What the check is made of, each part alone: the cached entitlements, and plan-limits.ts's count through Prisma.
    const alone = async (what: () => Promise<unknown>) => {
      const times: number[] = [];
      for (let i = 0; i < 500; i++) {
        const t0 = performance.now();
        await what();
        times.push(performance.now() - t0);
      }
      return ms(quantile(times, 0.5));
    };
    const where = { organizationId, testMode: false, completedAt: { gte: seeded.periodStart, lt: seeded.periodEnd } };
    console.log(`  alone, p50 of 500: entitlements from the cache ${await alone(() => entitlements.get(organizationId))}, the period's count through Prisma ${await alone(() => envelopesDb.envelope.count({ where }))}`);
    const explain = await envelopesDb.$queryRawUnsafe<Array<{ 'QUERY PLAN': string }>>(
      `EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM (SELECT id FROM envelopes WHERE organization_id = $1 AND test_mode = false
       AND completed_at >= $2 AND completed_at < $3 OFFSET 0) sub`,
      organizationId,
      seeded.periodStart,
      seeded.periodEnd,
    );
    console.log(`  the count, as Prisma shapes it, in Postgres:\n${explain.map((row) => `    ${row['QUERY PLAN']}`).join('\n')}`);
  }

  if (PART === 'all' || PART === 'count') await countingBench({ db: billingDb, log, envelopeView });
} finally {
  for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch((error: unknown) => console.error('cleanup:', error));
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  const admin = new pg.Client({ connectionString: testPostgresAdminUrl() });
  await admin.connect();
  for (const name of databases) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch((error: unknown) => console.error(`dropping ${name}:`, error));
  await admin.end();
}

/**
 * The history the count runs over: 50 live envelopes the organization completed this period (Free's: the UTC month),
 * 500 in its earlier months and 200 in test mode this period, and 5,000 of 40 other organizations over the past year
 * (a fifth in test mode); then VACUUM ANALYZE, as autovacuum would have it.
 */
async function seedHistory(db: ReturnType<typeof createEnvelopesDb>, organizationId: string) {
  const now = new Date();
  const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const periodEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  /** `count` completed envelopes; `org`, `testMode` and `completedAt` are SQL over p (org, period_start, now) and g. */
  const insert = (count: number, org: string, testMode: string, completedAt: string) =>
    db.$executeRawUnsafe(
      `WITH p AS (SELECT $1::text AS org, $2::timestamptz AS period_start, $3::timestamptz AS now)
       INSERT INTO envelopes (id, organization_id, test_mode, status, seal, template_id, template_version, template_name, fields, pages,
         created_by, expires_at, sent_at, completed_at, ended_at, created_at, updated_at)
       SELECT 'env_seed' || substr(md5(random()::text), 1, 20), org, test_mode, 'completed', 'sealed', 'tpl_seed', 1, 'Services agreement',
         '[]'::jsonb, '[{"width":612,"height":792}]'::jsonb, '{"kind":"api_key","id":"key_seed"}'::jsonb,
         t + interval '30 days', t - interval '1 hour', t, t, t - interval '2 hours', t
       FROM (SELECT ${org} AS org, ${testMode} AS test_mode, ${completedAt} AS t FROM p, generate_series(1, ${count}) g) s`,
      organizationId,
      periodStart,
      now,
    );
  const spreadOverPeriod = (count: number) => `p.period_start + (p.now - p.period_start) * (g::float8 / ${count + 1})`;
  await insert(50, 'p.org', 'false', spreadOverPeriod(50));
  await insert(200, 'p.org', 'true', spreadOverPeriod(200));
  await insert(500, 'p.org', 'false', `p.period_start - interval '330 days' * random()`);
  await insert(5_000, `'org_seed' || (g % 40)`, 'g % 5 = 0', `p.now - interval '365 days' * random()`);
  await db.$executeRawUnsafe('VACUUM ANALYZE envelopes');
  return { thisPeriod: 50, total: 5_750, periodStart, periodEnd };
}
