// On demand (issue 12): event to first delivery attempt at 200 events per second to 10 local endpoints (p99 target
// 1 s), and the webhooks service's memory under that load, then with one more endpoint that times out on every attempt.
// The baseline, in the same process: the same events from publish to a plain NATS subscriber (the broker's floor).
// Needs Postgres and NATS (POSTGRES_URL, NATS_URL; the machine's by default). node_modules/.bin/node test/bench/webhooks.ts
// BENCH_RATE (events/s), BENCH_SECONDS, BENCH_ENDPOINTS change the load.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateInternalKeyPair } from '@sigil/kit/auth';
import { connectBus } from '@sigil/kit/bus';
import { parseSecretsKey } from '@sigil/kit/crypto';
import { newId } from '@sigil/kit/ids';
import { freshTestDatabase, testNatsUrl } from '@sigil/kit/testing';
import { createEvent, eventSubject, type DomainEvent } from '@sigil/proto/events';
import { serviceNodeFlags } from '@sigil/local-stack';
import { createDb } from '@sigil/webhooks/db';
import { createSecretBox } from '@sigil/webhooks/secrets';

const RATE = Number(process.env.BENCH_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 10);
const root = path.resolve(import.meta.dirname, '../..');

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] ?? NaN;
const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

const databaseUrl = await freshTestDatabase('sigil_bench_webhooks', path.join(root, 'prisma/webhooks/migrations'));
const db = createDb(databaseUrl);
const secretsKey = randomBytes(32).toString('base64');
const box = createSecretBox(parseSecretsKey(secretsKey));
const organizationId = newId('org');
const prefix = `bench_${randomBytes(4).toString('hex')}_`;

// Receivers: first arrival per (endpoint, event) is the "first attempt".
const published = new Map<string, number>();
const firstAttempt: number[] = [];
const arrived = new Set<string>();
const servers: Server[] = [];
async function receiver(hang = false): Promise<string> {
  const server = createServer((req, res) => {
    const id = String(req.headers['webhook-id']);
    const key = `${req.url} ${id}`;
    if (!hang && !arrived.has(key) && published.has(id)) {
      arrived.add(key);
      firstAttempt.push(performance.now() - (published.get(id) as number));
    }
    req.resume();
    if (!hang) req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/e${servers.length}`;
}
async function addEndpoint(url: string): Promise<void> {
  const id = newId('we');
  await db.webhookEndpoint.create({ data: { id, organizationId, testMode: true, url, events: [], secret: box.seal(id, `whsec_${randomBytes(32).toString('base64')}`), createdAt: new Date(Date.now() - 60_000) } });
}
for (let i = 0; i < ENDPOINTS; i++) await addEndpoint(await receiver());

const listenFile = path.join(mkdtempSync(path.join(tmpdir(), 'bench-webhooks-')), 'url');
// The stack's flags for its services: a small young generation, a capped old one.
const service: ChildProcess = spawn(process.execPath, [...serviceNodeFlags(), path.join(root, 'services/webhooks/src/main.ts')], {
  env: {
    PATH: process.env.PATH,
    LISTEN_URL_FILE: listenFile,
    PORT: '0',
    DATABASE_URL: databaseUrl,
    NATS_URL: testNatsUrl(),
    INTERNAL_JWT_PUBLIC_KEY: JSON.stringify((await generateInternalKeyPair()).publicJwk),
    CONSUMER_PREFIX: prefix,
    WEBHOOK_SECRETS_KEY: secretsKey,
    WEBHOOK_ALLOWED_ORIGINS: 'http://127.0.0.1:*',
    LOG_LEVEL: 'error',
    MALLOC_ARENA_MAX: '2',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
for (let i = 0; i < 600 && !existsSync(listenFile); i++) await new Promise((r) => setTimeout(r, 50));
const bus = await connectBus(testNatsUrl(), 'bench-publisher');

function event(): DomainEvent {
  const envelopeId = newId('env');
  return createEvent('envelope.created', organizationId, { envelopeId, templateId: newId('tpl'), testMode: true, envelope: { id: envelopeId, object: 'envelope', status: 'rendering', seal: 'not_started', testMode: true, recipients: [] } } as never);
}

/** Publishes `rate` events a second for `seconds`, paced by the clock; returns the ids. */
async function load(rate: number, seconds: number): Promise<string[]> {
  const ids: string[] = [];
  const start = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const e = event();
    published.set(e.id, performance.now());
    ids.push(e.id);
    await bus.publish(eventSubject('envelope.created'), e, { msgId: e.id });
  }
  return ids;
}

// Baseline: publish to a plain subscriber on the same subject, same pacing, for a few seconds.
const baseline: number[] = [];
const sub = bus.nc.subscribe(eventSubject('envelope.created'), {
  callback: (_error, msg) => {
    const id = (JSON.parse(msg.string()) as { id: string }).id;
    if (published.has(id) && !arrived.has(`baseline ${id}`)) {
      arrived.add(`baseline ${id}`);
      baseline.push(performance.now() - (published.get(id) as number));
    }
  },
});
await load(RATE, Math.min(5, SECONDS));
sub.unsubscribe();
await new Promise((r) => setTimeout(r, 2_000));
firstAttempt.length = 0;

let peak = 0;
const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(service.pid as number))), 200);
const ids = await load(RATE, SECONDS);
const expected = ids.length * ENDPOINTS;
const deadline = Date.now() + 60_000;
while (firstAttempt.length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
const loadPeak = peak;
console.log(`\nWebhooks: ${RATE} events/s for ${SECONDS} s to ${ENDPOINTS} local endpoints (${expected.toLocaleString('en')} deliveries)`);
console.log(`  baseline: publish to a plain NATS subscriber          p50 ${quantile(baseline, 0.5).toFixed(1)} ms  p99 ${quantile(baseline, 0.99).toFixed(1)} ms`);
console.log(`  event to first delivery attempt (${firstAttempt.length.toLocaleString('en')} arrived)   p50 ${quantile(firstAttempt, 0.5).toFixed(1)} ms  p99 ${quantile(firstAttempt, 0.99).toFixed(1)} ms  (target p99 <= 1000 ms)`);
console.log(`  webhooks service RSS: peak ${loadPeak.toFixed(0)} MiB under load`);

// The same load with one more endpoint that never answers: every attempt times out (10 s) and is retried.
await addEndpoint(await receiver(true));
firstAttempt.length = 0;
peak = 0;
const ids2 = await load(RATE, SECONDS);
const deadline2 = Date.now() + 60_000;
while (firstAttempt.length < ids2.length * ENDPOINTS && Date.now() < deadline2) await new Promise((r) => setTimeout(r, 100));
console.log(`  with an 11th endpoint timing out on every attempt: first attempts to the others p50 ${quantile(firstAttempt, 0.5).toFixed(1)} ms, p99 ${quantile(firstAttempt, 0.99).toFixed(1)} ms; RSS peak ${peak.toFixed(0)} MiB`);
clearInterval(sampler);

service.kill('SIGTERM');
await bus.close();
for (const s of servers) {
  s.closeAllConnections();
  s.close();
}
await db.$disconnect();
