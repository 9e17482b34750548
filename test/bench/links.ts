// On demand (issue 29): node_modules/.bin/node test/bench/links.ts. Target: `POST /v1/links/{id}/start` p99 <= 50 ms
// at 100 requests a second, against `GET /v1/links/{id}` (the baseline) in the same run.
// The real signing app, its real links client calling the real envelopes app over HTTP (links-stack.ts), one active
// signing link created through envelopes' API with its default limits. Open-loop load: requests are sent on a fixed
// schedule (every 10 ms), whether or not earlier ones have answered, and each latency counts from the request's
// scheduled time (a stalled server shows as latency, not as a slower rate). Every start has its own e-mail and its own
// client address (X-Forwarded-For, as the gateway adds it; signing trusts one proxy, as in production), so neither cap
// (3 starts per e-mail a day, 20 per address an hour) refuses: every start is a full start (both caps counted, the
// verification stored, the code e-mailed through SMTP). The series alternate in blocks: BENCH_ROUNDS rounds (default 4)
// of BENCH_SECONDS (default 5) per series, each round starting with the other; BENCH_RATE (default 100) requests/s.
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { createMailer } from '@sigil/mail';
import { startBenchServices } from './links-stack.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const RATE = Number(process.env.BENCH_RATE ?? 100);
const TARGET_MS = 50;
/** Also a third series: the start on a signing app whose mailer accepts at once (BENCH_MAIL_STUB=0 leaves it out). */
const MAIL_STUB = process.env.BENCH_MAIL_STUB !== '0';
/** And one whose SMTP transport is pooled (BENCH_MAIL_POOLED=0 leaves it out). */
const MAIL_POOLED = process.env.BENCH_MAIL_POOLED !== '0';
/** Its connections (nodemailer's default is 5). */
const POOL_CONNECTIONS = Number(process.env.BENCH_POOL_CONNECTIONS ?? 5);

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * q) - 1)] ?? NaN;
const ms = (x: number) => `${x.toFixed(1)} ms`;
const load = () => execFileSync('uptime', { encoding: 'utf8' }).trim().replace(/^.*load average: /, '');

interface Series {
  name: string;
  latencies: number[];
  failures: Map<string, number>;
  request(i: number): { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string };
  expect: number;
  pool: Pool;
}

console.log(`load average at start: ${load()}`);
const services = await startBenchServices('links', { events: false });
const pool = new Pool(services.signingUrl, { connections: 256, keepAliveTimeout: 65_000, pipelining: 1 });
const pools = [pool];
const closers: Array<() => void> = [];
try {
  const created = await services.api('POST', '/v1/signing-links', {
    template: services.templateId,
    role: 'client',
    title: 'Client onboarding',
    recipients: [{ role: 'counsel', name: 'Grace Hopper', email: 'grace@example.com' }],
    variables: { company: 'Acme' },
  });
  if (created.status !== 201) throw new Error(`POST /v1/signing-links answered ${created.status} ${JSON.stringify(created.body)}`);
  const linkId = created.body.id as string;
  console.log(`signing link ${linkId}, limits ${JSON.stringify(created.body.limits)}; mail to ${services.smtp}`);

  let visitor = 0;
  // 10.a.b.c: a fresh client address per start (at most one start each, far under 20 an hour).
  const address = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  const series: Series[] = [
    { name: 'GET /v1/links/{id} (baseline)', latencies: [], failures: new Map(), expect: 200, pool, request: (i) => ({ method: 'GET', path: `/v1/links/${linkId}`, headers: { 'x-forwarded-for': address(1_000_000 + i) } }) },
    {
      name: 'POST /v1/links/{id}/start',
      latencies: [],
      failures: new Map(),
      expect: 202,
      pool,
      request: () => {
        const n = ++visitor;
        return { method: 'POST', path: `/v1/links/${linkId}/start`, headers: { 'content-type': 'application/json', 'x-forwarded-for': address(n) }, body: JSON.stringify({ name: `Visitor ${n}`, email: `visitor-${n}@example.com` }) };
      },
    },
  ];
  if (MAIL_POOLED) {
    // The same start on a second signing app whose mailer is the real one with a pooled SMTP transport (nodemailer's
    // `?pool=true` in the URL: BENCH_POOL_CONNECTIONS connections kept open, each greeted once), to the same SMTP server.
    const pooledMailer = createMailer({ url: `${services.smtp.replace(/\/?$/, '/')}?pool=true&maxConnections=${POOL_CONNECTIONS}`, from: 'Sigil <no-reply@sigil.test>' });
    closers.push(() => pooledMailer.close());
    const pooledPool = new Pool(await services.startSigning(pooledMailer), { connections: 256, keepAliveTimeout: 65_000, pipelining: 1 });
    pools.push(pooledPool);
    series.push({ ...(series[1] as Series), name: 'POST start, SMTP pooled', latencies: [], failures: new Map(), pool: pooledPool });
  }
  if (MAIL_STUB) {
    // The same start on a second signing app (same database, same envelopes) whose mailer accepts at once: what the
    // start costs without the SMTP conversation.
    const stubUrl = await services.startSigning({ send: async () => ({ messageId: '<bench@stub>' }), close: () => undefined });
    const stubPool = new Pool(stubUrl, { connections: 256, keepAliveTimeout: 65_000, pipelining: 1 });
    pools.push(stubPool);
    const start = series[1] as Series;
    series.push({ ...start, name: 'POST start, mail stubbed', latencies: [], failures: new Map(), pool: stubPool });
  }

  async function send(s: Series, i: number, scheduledAt: number, record: boolean): Promise<void> {
    const { method, path, headers, body } = s.request(i);
    try {
      const res = await s.pool.request({ method, path, headers, body });
      await res.body.text();
      if (res.statusCode !== s.expect) s.failures.set(String(res.statusCode), (s.failures.get(String(res.statusCode)) ?? 0) + 1);
    } catch (error) {
      s.failures.set(String((error as Error).message), (s.failures.get(String((error as Error).message)) ?? 0) + 1);
    }
    if (record) s.latencies.push(performance.now() - scheduledAt);
  }

  /** `seconds` of `s` at RATE a second on a fixed schedule; each latency from its scheduled time. */
  async function run(s: Series, seconds: number, record = true): Promise<void> {
    const total = Math.round(seconds * RATE);
    const interval = 1000 / RATE;
    const start = performance.now();
    const pending: Array<Promise<void>> = [];
    let sent = 0;
    while (sent < total) {
      const now = performance.now();
      for (; sent < total && start + sent * interval <= now; sent++) pending.push(send(s, sent, start + sent * interval, record));
      if (sent < total) await sleep(Math.max(0, start + sent * interval - performance.now()));
    }
    await Promise.all(pending);
  }

  // Warm-up: 2 s of each, not recorded (the first requests compile the handlers and open the connections).
  for (const s of series) await run(s, 2, false);
  for (const s of series) s.failures.clear();
  const loadBefore = load();
  const cpu = process.cpuUsage();
  const startedAt = performance.now();
  const perRound = new Map<Series, string[]>(series.map((s) => [s, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of round % 2 === 0 ? series : [...series].reverse()) {
      const from = s.latencies.length;
      await run(s, SECONDS);
      perRound.get(s)?.push(quantile(s.latencies.slice(from), 0.99).toFixed(0));
    }
  }
  const wall = (performance.now() - startedAt) / 1000;
  const used = process.cpuUsage(cpu);

  console.log(`\n${ROUNDS} rounds x ${SECONDS} s per series at ${RATE} requests/s (open loop), alternating; load average ${loadBefore} → ${load()}`);
  for (const s of series) {
    const failures = [...s.failures].map(([what, n]) => `${n} x ${what}`).join(', ');
    console.log(`  ${s.name.padEnd(30)} n ${s.latencies.length}  p50 ${ms(quantile(s.latencies, 0.5))}  p90 ${ms(quantile(s.latencies, 0.9))}  p99 ${ms(quantile(s.latencies, 0.99))}  max ${ms(Math.max(...s.latencies))}${failures ? `  NOT ${s.expect}: ${failures}` : ''}`);
    console.log(`  ${''.padEnd(30)} p99 of each round: ${perRound.get(s)?.join(', ')} ms`);
  }
  const [get, start] = series as [Series, Series];
  const p99 = quantile(start.latencies, 0.99);
  console.log(`  p99 start / p99 view: ${(p99 / quantile(get.latencies, 0.99)).toFixed(2)}x   target start p99 <= ${TARGET_MS} ms: ${p99 <= TARGET_MS && start.failures.size === 0 ? 'met' : 'MISSED'}`);
  console.log(`  this process (both apps, the client): ${((used.user + used.system) / 1e6 / wall * 100).toFixed(0)} % of a CPU over ${wall.toFixed(1)} s`);
  const verifications = await services.signingDb.linkVerification.count();
  console.log(`  verifications stored: ${verifications} (starts sent: ${visitor})`);
  // The codes go out off the request path: how long after the last start every one of them was mailed.
  const drainStarted = performance.now();
  let unsent = await services.signingDb.linkVerification.count({ where: { codeSentAt: null } });
  const unsentAtEnd = unsent;
  while (unsent > 0 && performance.now() - drainStarted < 120_000) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    unsent = await services.signingDb.linkVerification.count({ where: { codeSentAt: null } });
  }
  console.log(`  codes not yet mailed when the load stopped: ${unsentAtEnd}; all mailed ${unsent === 0 ? `${((performance.now() - drainStarted) / 1000).toFixed(1)} s later` : `NOT within 120 s (${unsent} left)`}`);
} finally {
  for (const p of pools) await p.close();
  for (const close of closers) close();
  await services.close();
}
