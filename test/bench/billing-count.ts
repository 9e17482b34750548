// Part 2 of test/bench/billing.ts (issue 28): counting keeps up with 500 completions per second. A backlog of
// `envelope.completed` events (live mode, distinct envelopes, a handful of organizations) on the events stream, drained
// by billing's usage consumer (the sustained rate: events counted a second), against a consumer of the same backlog
// that only acknowledges (the broker's and the bus client's floor); then a steady rate published while it runs.
// The durables are created at the stream's end before publishing (`new`), so each sees exactly the backlog, not the
// shared stream's history; they, and the events published, are deleted afterwards.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '@sigil/billing/db';
import { COUNTED_EVENTS, startUsageConsumer } from '@sigil/billing/usage';
import { connectBus, consumerName, durableNameFor, type RunningConsumer } from '@sigil/kit/bus';
import { newId } from '@sigil/kit/ids';
import type { Logger } from '@sigil/kit/log';
import { testNatsUrl } from '@sigil/kit/testing';
import { createEvent, EVENTS_STREAM, eventSubject, validateEvent, type DomainEvent } from '@sigil/proto/events';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 5_000);
const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const ORGANIZATIONS = 5;
/** The usage consumer's ack wait (consumer.ts); the durables are made as it would make them. */
const ACK_WAIT_MS = 10_000;


const rate = (events: number, ms: number) => `${Math.round((events / ms) * 1000).toLocaleString('en')} events/s`;

export async function countingBench(deps: { db: Db; log: Logger; envelopeView: Record<string, unknown> }): Promise<void> {
  const { db, log } = deps;
  const bus = await connectBus(testNatsUrl(), 'bench-billing');
  const prefix = `bench_billing_${randomBytes(4).toString('hex')}_`;
  const subjects = COUNTED_EVENTS.map((type) => eventSubject(type));
  const durables: string[] = [];
  const sequences: number[] = [];
  const consumers: RunningConsumer[] = [];
  const organizations = Array.from({ length: ORGANIZATIONS }, () => newId('org'));

  let k = 0;
  function completion(): DomainEvent {
    const envelopeId = newId('env');
    return createEvent('envelope.completed', organizations[k++ % ORGANIZATIONS] as string, {
      envelopeId,
      testMode: false,
      values: {
        variables: { company: `Company ${k}` },
        recipients: { client: { company: `Company ${k}`, client_signature: { kind: 'drawn', sha256: 'a'.repeat(64) } }, counsel: { counsel_signature: { kind: 'drawn', sha256: 'b'.repeat(64) } } },
      },
      envelope: { ...deps.envelopeView, id: envelopeId, completedAt: new Date().toISOString() },
    } as never);
  }
  const subject = eventSubject('envelope.completed');
  async function send(event: DomainEvent): Promise<void> {
    sequences.push((await bus.js.publish(subject, JSON.stringify(event), { msgID: event.id })).seq);
  }
  async function publishAll(events: DomainEvent[], inFlight = 64): Promise<void> {
    let next = 0;
    await Promise.all(Array.from({ length: inFlight }, async () => {
      while (next < events.length) await send(events[next++] as DomainEvent);
    }));
  }
  /** Durables of `durable` positioned at the stream's end now, as `bus.consume` would create them. */
  async function createDurables(durable: string): Promise<void> {
    for (const filter of subjects) {
      const name = durableNameFor(durable, filter);
      await bus.jsm.consumers.add(EVENTS_STREAM, { durable_name: name, ack_policy: 'explicit', deliver_policy: 'new', filter_subject: filter, max_deliver: 20, ack_wait: ACK_WAIT_MS * 1e6 });
      durables.push(name);
    }
  }
  const counted = async () =>
    Number((await db.$queryRawUnsafe<Array<{ n: bigint }>>(`SELECT count(*) AS n FROM usage_records WHERE organization_id = ANY($1::text[])`, organizations))[0]?.n ?? 0);

  try {
    const sample = completion();
    const check = validateEvent(sample);
    if (!check.ok) throw new Error(`the bench's envelope.completed is not valid: ${check.errors.join('; ')}`);
    console.log(`\nCounting: ${EVENTS.toLocaleString('en')} envelope.completed (live, ${ORGANIZATIONS} organizations, ${JSON.stringify(sample).length.toLocaleString('en')} bytes each) waiting on ${EVENTS_STREAM}:`);

    const ackOnly = consumerName(prefix, 'ack-only');
    const usage = consumerName(prefix, 'billing-usage');
    await createDurables(ackOnly);
    await createDurables(usage);
    const backlog = Array.from({ length: EVENTS }, completion);
    const publishStart = performance.now();
    await publishAll(backlog);
    console.log(`  published in ${((performance.now() - publishStart) / 1000).toFixed(1)} s`);

    // Baseline: the same backlog, acknowledged and nothing else (no decoding, no database).
    const ids = new Set(backlog.map((e) => e.id));
    let acked = 0;
    let cpu = process.cpuUsage();
    let start = performance.now();
    const baseline = await bus.consume<{ id: string }>({
      stream: EVENTS_STREAM,
      durable: ackOnly,
      subjects,
      log,
      concurrency: CONCURRENCY,
      ackWaitMs: ACK_WAIT_MS,
      handle: async (message) => void (ids.has(message.data.id) && acked++),
    });
    consumers.push(baseline);
    await baseline.idle(120_000);
    const baselineMs = performance.now() - start;
    const baselineCpu = process.cpuUsage(cpu);
    await baseline.stop();
    if (acked !== EVENTS) throw new Error(`the ack-only consumer handled ${acked} of ${EVENTS}`);

    // Billing's usage consumer, as main.ts starts it (its concurrency), on its durables made at the same position.
    cpu = process.cpuUsage();
    start = performance.now();
    const counter = await startUsageConsumer(bus, { db, log, prefix, concurrency: CONCURRENCY, startAt: 'new' });
    consumers.push(counter);
    await counter.idle(300_000);
    const usageMs = performance.now() - start;
    const usageCpu = process.cpuUsage(cpu);
    const total = await counted();
    if (total !== EVENTS) throw new Error(`usage_records holds ${total} of ${EVENTS}`);
    const perEvent = (used: NodeJS.CpuUsage) => `${((used.user + used.system) / EVENTS).toFixed(0)} µs/event`;
    console.log(`  ack-only consumer (baseline), concurrency ${CONCURRENCY}: ${(baselineMs / 1000).toFixed(2)} s, ${rate(EVENTS, baselineMs)}, CPU ${perEvent(baselineCpu)} (this process)`);
    console.log(`  billing's usage consumer, concurrency ${CONCURRENCY}:  ${(usageMs / 1000).toFixed(2)} s, ${rate(EVENTS, usageMs)}, CPU ${perEvent(usageCpu)} (this process)`);
    console.log(`  counting ${(usageMs / baselineMs).toFixed(2)}x the baseline's time; target >= 500 events/s: ${(EVENTS / usageMs) * 1000 >= 500 ? 'met' : 'MISSED'}`);

    // A steady rate while the consumer runs, published from this process (which also runs the consumer).
    const steady = Array.from({ length: RATE * SECONDS }, completion);
    let published = 0;
    let publishing = true;
    let maxLag = 0;
    const sampler = (async () => {
      while (publishing) {
        await sleep(500);
        maxLag = Math.max(maxLag, published - ((await counted()) - EVENTS));
      }
    })();
    const pending: Array<Promise<void>> = [];
    let sent = 0;
    start = performance.now();
    while (sent < steady.length) {
      const due = Math.min(steady.length, Math.floor(((performance.now() - start) * RATE) / 1000) + 1);
      while (sent < due) pending.push(send(steady[sent++] as DomainEvent).then(() => void published++));
      await sleep(2);
    }
    await Promise.all(pending);
    const publishMs = performance.now() - start;
    publishing = false;
    const stoppedAt = performance.now();
    const atStop = (await counted()) - EVENTS;
    let now = atStop;
    while (now < steady.length && performance.now() - stoppedAt < 120_000) {
      await sleep(20);
      now = (await counted()) - EVENTS;
    }
    const catchUpMs = performance.now() - stoppedAt;
    await sampler;
    console.log(`\nSteady: ${steady.length.toLocaleString('en')} events at ${RATE}/s, published in ${(publishMs / 1000).toFixed(2)} s while the usage consumer ran:`);
    console.log(`  uncounted when publishing stopped: ${(steady.length - atStop).toLocaleString('en')} (most seen at a 0.5 s sample: ${maxLag.toLocaleString('en')})`);
    console.log(`  ${now === steady.length ? `all counted ${catchUpMs.toFixed(0)} ms after publishing stopped` : `STILL ${steady.length - now} uncounted after 120 s`}`);
  } finally {
    for (const consumer of consumers) await consumer.stop().catch(() => undefined);
    for (const name of durables) await bus.jsm.consumers.delete(EVENTS_STREAM, name).catch((error: unknown) => console.error(`deleting ${name}:`, error));
    // The stream is shared: a consumer created later from its start would count these events again.
    let next = 0;
    await Promise.all(Array.from({ length: 32 }, async () => {
      while (next < sequences.length) await bus.jsm.streams.deleteMessage(EVENTS_STREAM, sequences[next++] as number, false).catch(() => undefined);
    }));
    await bus.close();
  }
}
