// On demand (issue 29): node_modules/.bin/node test/bench/viewers.ts. Target: a viewer's `update` arrives at most 1 s
// after the change, with 1,000 viewer streams open; the baseline is the same measure with 1 stream open, in the same run.
// The real envelopes and signing apps (links-stack.ts), envelopes' outbox relay publishing to the machine's NATS, and
// signing's viewer streams listening there, as in production. One envelope (sent through envelopes' API) with
// BENCH_VIEWERS viewers (default 1,000) added through the API, plus one spare viewer per change. Their link tokens are
// minted and stored as envelopes' mail consumer does it (`mail/viewer-link.ts`: `sglv_` + 40 base62, its SHA-256
// kept), and each is exchanged through signing's `POST /v1/viewer/exchange` (which calls envelopes' internal route)
// for an access token; each stream is `GET /v1/viewer/stream?access_token=…` on its own connection. A change is a real
// change through the API: `DELETE /v1/envelopes/{id}/viewers/{spare}` (envelopes commits the revocation and its
// `viewer.revoked` event, the relay publishes it, signing wakes every stream of the envelope). Each stream's latency
// is from just before the DELETE is sent until its `update` event is read. Rounds (BENCH_ROUNDS, default 2) of
// BENCH_CHANGES changes (default 5) with 1 stream open, then the same with all open.
import { execFileSync } from 'node:child_process';
import { Agent, request as httpRequest, type ClientRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { sha256Hex } from '@sigil/kit/crypto';
import { randomBase62 } from '@sigil/kit/ids';
import { startBenchServices } from './links-stack.ts';

const VIEWERS = Number(process.env.BENCH_VIEWERS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 5);
const TARGET_MS = 1000;
const WARMUP = 3;

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * q) - 1)] ?? NaN;
const ms = (x: number) => `${x.toFixed(1)} ms`;
const load = () => execFileSync('uptime', { encoding: 'utf8' }).trim().replace(/^.*load average: /, '');
const address = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

/** Runs `work` over `items` with `concurrency` at a time. */
async function each<T>(items: T[], concurrency: number, work: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) {
      const i = next++;
      await work(items[i] as T, i);
    }
  }));
}

interface Stream {
  req: ClientRequest;
  /** When each update arrived (performance.now()), in order. */
  updates: number[];
  open: boolean;
  ended: boolean;
}

const published = new Map<string, number>();
console.log(`load average at start: ${load()}`);
const services = await startBenchServices('viewers', {
  events: true,
  onPublish: (payload) => {
    const event = payload as { type?: string; data?: { viewerId?: string } };
    if (event.type === 'viewer.revoked' && event.data?.viewerId) published.set(event.data.viewerId, performance.now());
  },
});
const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
const streams: Stream[] = [];
try {
  // The envelope, sent through the API.
  const created = await services.api('POST', '/v1/envelopes', {
    template: services.templateId,
    recipients: [{ role: 'client', name: 'Ada Lovelace', email: 'ada@example.com' }, { role: 'counsel', name: 'Grace Hopper', email: 'grace@example.com' }],
    variables: { company: 'Acme' },
  });
  if (created.status !== 201) throw new Error(`POST /v1/envelopes answered ${created.status} ${JSON.stringify(created.body)}`);
  const envelopeId = created.body.id as string;

  // The viewers, through the API (at most 100 a request), then their link tokens as the mail consumer mints them.
  const spares = ROUNDS * CHANGES * 2 + WARMUP;
  const emails = Array.from({ length: VIEWERS + spares }, (_, i) => `viewer-${i}@example.com`);
  const viewerIds: string[] = [];
  for (let i = 0; i < emails.length; i += 100) {
    const added = await services.api('POST', `/v1/envelopes/${envelopeId}/viewers`, { viewers: emails.slice(i, i + 100).map((email) => ({ email })) });
    if (added.status !== 201) throw new Error(`adding viewers answered ${added.status} ${JSON.stringify(added.body)}`);
    viewerIds.push(...(added.body.data as Array<{ id: string }>).map((v) => v.id));
  }
  const watching = viewerIds.slice(0, VIEWERS);
  const spare = viewerIds.slice(VIEWERS);
  const linkTokens = watching.map(() => `sglv_${randomBase62(40)}`);
  await each(watching, 8, async (id, i) => void (await services.envelopesDb.envelopeViewer.update({ where: { id }, data: { linkTokenHash: sha256Hex(linkTokens[i] as string) } })));
  await services.relay?.drain(); // envelope.created, viewer.added: out before anything is measured

  // Access tokens through signing's exchange (a client address each: the exchange allows 60 a minute per client).
  const accessTokens: string[] = new Array(VIEWERS);
  let exchangeMs = performance.now();
  await each(linkTokens, 16, async (token, i) => {
    const res = await fetch(`${services.signingUrl}/v1/viewer/exchange`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': address(i + 1) }, body: JSON.stringify({ token }) });
    const body = (await res.json()) as { accessToken?: string };
    if (res.status !== 200 || !body.accessToken) throw new Error(`exchange ${i} answered ${res.status} ${JSON.stringify(body)}`);
    accessTokens[i] = body.accessToken;
  });
  exchangeMs = performance.now() - exchangeMs;
  console.log(`envelope ${envelopeId}: ${VIEWERS} viewers (+${spares} spares), ${VIEWERS} access tokens exchanged in ${(exchangeMs / 1000).toFixed(1)} s`);

  /** Opens the stream of access token `i`; resolves once its first bytes (`retry:`) arrived. */
  function openStream(i: number): Promise<Stream> {
    return new Promise((resolve, reject) => {
      const stream: Stream = { req: undefined as unknown as ClientRequest, updates: [], open: false, ended: false };
      let tail = '';
      stream.req = httpRequest(`${services.signingUrl}/v1/viewer/stream?access_token=${accessTokens[i]}`, { agent, headers: { accept: 'text/event-stream' } }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream ${i} answered ${res.statusCode}`));
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const now = performance.now();
          const text = tail + chunk;
          for (let at = text.indexOf('event: update\n'); at !== -1; at = text.indexOf('event: update\n', at + 1)) stream.updates.push(now);
          tail = text.slice(-13);
          if (!stream.open) {
            stream.open = true;
            resolve(stream);
          }
        });
        res.on('end', () => void (stream.ended = true));
        res.on('error', () => void (stream.ended = true));
      });
      stream.req.on('error', (error) => (stream.open ? void (stream.ended = true) : reject(error)));
      stream.req.end();
    });
  }

  async function until(ready: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    while (!ready() && performance.now() < deadline) await sleep(5);
    return ready();
  }

  // Warm-up: changes with no stream open, not recorded (the first DELETE compiles its path in both apps and the relay).
  let nextSpare = 0;
  for (let w = 0; w < WARMUP; w++) {
    const viewerId = spare[nextSpare++] as string;
    if ((await services.api('DELETE', `/v1/envelopes/${envelopeId}/viewers/${viewerId}`)).status !== 204) throw new Error('a warm-up change failed');
    await until(() => published.has(viewerId), 10_000);
  }

  const results: Record<'one' | 'all', number[]> = { one: [], all: [] };
  const stages: Record<'one' | 'all', { api: number[]; publish: number[]; first: number[] }> = { one: { api: [], publish: [], first: [] }, all: { api: [], publish: [], first: [] } };
  const loadBefore = load();
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of ['one', 'all'] as const) {
      const count = kind === 'one' ? 1 : VIEWERS;
      let openMs = performance.now();
      const open: Stream[] = [];
      await each(Array.from({ length: count }, (_, i) => i), 50, async (i) => void open.push(await openStream(i)));
      openMs = performance.now() - openMs;
      streams.push(...open);
      await sleep(500); // the last subscriptions settle
      const lines: string[] = [];
      for (let c = 0; c < CHANGES; c++) {
        const before = open.map((s) => s.updates.length);
        const viewerId = spare[nextSpare++] as string;
        const t0 = performance.now();
        const res = await services.api('DELETE', `/v1/envelopes/${envelopeId}/viewers/${viewerId}`);
        const answered = performance.now() - t0;
        if (res.status !== 204) throw new Error(`revoking a spare viewer answered ${res.status} ${JSON.stringify(res.body)}`);
        const arrived = await until(() => open.every((s, k) => s.updates.length > (before[k] as number)), 10_000);
        const latencies = open.flatMap((s, k) => (s.updates.length > (before[k] as number) ? [(s.updates[before[k] as number] as number) - t0] : []));
        results[kind].push(...latencies);
        await until(() => published.has(viewerId), 1000); // the publisher's ack can come back after subscribers have the event
        const publishedAt = (published.get(viewerId) ?? NaN) - t0;
        stages[kind].api.push(answered);
        stages[kind].publish.push(publishedAt);
        stages[kind].first.push(Math.min(...latencies));
        lines.push(`    change ${c + 1}: API answered ${ms(answered)}, relay's publish acknowledged ${ms(publishedAt)}; updates p50 ${ms(quantile(latencies, 0.5))} p99 ${ms(quantile(latencies, 0.99))} max ${ms(Math.max(...latencies))}${arrived ? '' : `  MISSING at ${open.length - latencies.length} streams after 10 s`}`);
        await sleep(300);
      }
      const endedEarly = open.filter((s) => s.ended).length;
      for (const s of open) s.req.destroy();
      console.log(`\nround ${round + 1}, ${count} stream${count === 1 ? '' : 's'} open (opened in ${(openMs / 1000).toFixed(2)} s; load ${load()}):\n${lines.join('\n')}`);
      if (endedEarly > 0) console.log(`    ${endedEarly} streams ended before the bench closed them`);
      await sleep(500); // the server forgets the closed streams
    }
  }

  console.log(`\nAll changes (${ROUNDS} rounds x ${CHANGES}), per stream, from just before the change's request to its update; load ${loadBefore} → ${load()}:`);
  for (const kind of ['one', 'all'] as const) {
    const xs = results[kind];
    const st = stages[kind];
    console.log(`  ${kind === 'one' ? '1 stream (baseline)' : `${VIEWERS} streams`.padEnd(19)}  n ${String(xs.length).padStart(5)}  p50 ${ms(quantile(xs, 0.5))}  p99 ${ms(quantile(xs, 0.99))}  max ${ms(Math.max(...xs))}   (medians: API answered ${ms(quantile(st.api, 0.5))}, relay's publish acknowledged ${ms(quantile(st.publish, 0.5))}, first update ${ms(quantile(st.first, 0.5))})`);
  }
  const expected = ROUNDS * CHANGES * VIEWERS;
  const worst = Math.max(...results.all);
  console.log(`  p99 ${VIEWERS} / p99 1: ${(quantile(results.all, 0.99) / quantile(results.one, 0.99)).toFixed(2)}x   target every update <= ${TARGET_MS} ms at ${VIEWERS} streams: ${worst <= TARGET_MS && results.all.length === expected ? 'met' : `MISSED (${results.all.length} of ${expected} arrived)`}`);
} finally {
  for (const s of streams) s.req.destroy();
  agent.destroy();
  console.log(`\ncleaning up: ${services.published()} events the relay published, 2 databases`);
  await services.close();
}
