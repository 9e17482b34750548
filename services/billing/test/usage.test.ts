import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectBus, durableNameFor, type NatsBus, type RunningConsumer } from '@sigil/kit/bus';
import { newId } from '@sigil/kit/ids';
import { freshTestDatabase, silentLogger, testNatsUrl } from '@sigil/kit/testing';
import { EVENTS_STREAM, eventSubject, type DomainEvent } from '@sigil/proto/events';
import { createDb, type Db } from '../src/db.ts';
import { COUNTED_EVENTS, startUsageConsumer } from '../src/usage/consumer.ts';
import { readUsage } from '../src/usage/read.ts';
import { calendarMonth } from '../src/plans/index.ts';

/**
 * Usage is counted once per completed live envelope however the events arrive: twice, replayed under a new event id,
 * handled by two replicas at once, or across a replica that stopped in the middle of a batch.
 */
const migrationsDir = path.resolve(import.meta.dirname, '../../../prisma/billing/migrations');
const prefix = `test_${newId('run').slice(4)}_`;
let db: Db;
let bus: NatsBus;
let other: NatsBus;
const running: RunningConsumer[] = [];

beforeAll(async () => {
  db = createDb(await freshTestDatabase('sigil_billing_test_usage', migrationsDir));
  bus = await connectBus(testNatsUrl(), 'billing-test-a');
  other = await connectBus(testNatsUrl(), 'billing-test-b');
});
afterAll(async () => {
  await Promise.all(running.map((c) => c.stop()));
  for (const seq of published) await bus?.jsm.streams.deleteMessage(EVENTS_STREAM, seq, false).catch(() => undefined);
  for (const type of COUNTED_EVENTS) await bus?.jsm.consumers.delete(EVENTS_STREAM, durableNameFor(`${prefix}billing-usage`, eventSubject(type))).catch(() => undefined);
  await other?.close();
  await bus?.close();
  await db?.$disconnect();
});

const replica = async (on: NatsBus) => {
  const consumer = await startUsageConsumer(on, { db, log: silentLogger(), prefix, concurrency: 8, startAt: 'new' });
  running.push(consumer);
  return consumer;
};

const completed = (organizationId: string, envelopeId: string, options: { testMode?: boolean; at?: string; eventId?: string } = {}): DomainEvent<'envelope.completed'> => ({
  id: options.eventId ?? newId('evt'),
  type: 'envelope.completed',
  occurredAt: options.at ?? new Date().toISOString(),
  organizationId,
  data: {
    envelopeId,
    testMode: options.testMode ?? false,
    values: { variables: {}, recipients: {} },
    envelope: { id: envelopeId, object: 'envelope', status: 'completed', seal: 'pending', testMode: options.testMode ?? false, recipients: [] },
  },
});

const otpSent = (organizationId: string, channel: 'sms' | 'email', testMode = false): DomainEvent<'otp.sent'> => ({
  id: newId('evt'),
  type: 'otp.sent',
  occurredAt: new Date().toISOString(),
  organizationId,
  data: { envelopeId: newId('env'), testMode, recipientId: newId('rcp'), channel },
});

/**
 * The events stream is shared by every test stack on this NATS server, and a stack's consumers read it from its start:
 * what this file publishes is deleted again at the end, so nobody else has to read past it.
 */
const published: number[] = [];
async function publishAs(event: DomainEvent, msgID: string | undefined): Promise<void> {
  published.push((await bus.js.publish(eventSubject(event.type), JSON.stringify(event), msgID ? { msgID } : {})).seq);
}
const publish = (event: DomainEvent) => publishAs(event, event.id);

async function countOf(organizationId: string, at = new Date()) {
  return readUsage(db, organizationId, calendarMonth(at), at);
}

/** Waits until the organization's count reaches `n` (bounded), then a moment more for anything extra to land. */
async function settle(consumers: RunningConsumer[], organizationId: string, n: number) {
  const deadline = Date.now() + 30_000;
  while ((await countOf(organizationId)).completedEnvelopes < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await Promise.all(consumers.map((c) => c.idle(10_000)));
}

describe('usage counting', () => {
  it('counts a live completion once, however often and under whatever event id it arrives, and never a test one', async () => {
    const consumer = await replica(bus);
    const org = `org_${newId('x').slice(2)}`;
    const envelopes = Array.from({ length: 20 }, () => newId('env'));
    for (const envelopeId of envelopes) {
      const event = completed(org, envelopeId);
      await publish(event);
      // The same event again (a publisher retry past the broker's duplicate window looks like this) and a replay of
      // the completion under a new event id (a relay re-publishing after a restore).
      await publishAs(event, undefined);
      await publish(completed(org, envelopeId));
    }
    await publish(completed(org, newId('env'), { testMode: true }));
    await settle([consumer], org, 20);
    expect((await countOf(org)).completedEnvelopes).toBe(20);
    await consumer.stop();
  });

  it('counts once with two replicas sharing the work, and a replica stopped mid-batch loses nothing', async () => {
    const first = await replica(bus);
    const second = await replica(other);
    const org = `org_${newId('x').slice(2)}`;
    const envelopes = Array.from({ length: 300 }, () => newId('env'));
    const publishing = (async () => {
      for (const [i, envelopeId] of envelopes.entries()) {
        await publish(completed(org, envelopeId));
        if (i % 3 === 0) await publish(completed(org, envelopeId));
      }
    })();
    // One replica stops while events are still coming in (what it held unacknowledged goes to the other one).
    const deadline = Date.now() + 30_000;
    while ((await countOf(org)).completedEnvelopes < 50 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await first.stop();
    await publishing;
    // ...and starts again under the same durable name, like a restarted process.
    const restarted = await replica(bus);
    await settle([second, restarted], org, 300);
    expect((await countOf(org)).completedEnvelopes).toBe(300);
    const daily = (await countOf(org)).daily;
    expect(daily.reduce((sum, day) => sum + day.completedEnvelopes, 0)).toBe(300);
    await second.stop();
    await restarted.stop();
  });

  it('counts SMS codes sent in live mode as the smsOtp add-on, not e-mailed or test ones', async () => {
    const consumer = await replica(bus);
    const org = `org_${newId('x').slice(2)}`;
    await publish(otpSent(org, 'sms'));
    await publish(otpSent(org, 'sms'));
    await publish(otpSent(org, 'email'));
    await publish(otpSent(org, 'sms', true));
    // A completion as a marker: once it is counted, the codes published before it have been handled.
    await publish(completed(org, newId('env')));
    await settle([consumer], org, 1);
    expect((await countOf(org)).addOns).toEqual({ smsOtp: 2, idCheck: 0, qesSignature: 0 });
    await consumer.stop();
  });

  it('puts a completion in the period it happened in: the month rolls over at 00:00 UTC (a leap February)', async () => {
    const consumer = await replica(bus);
    const org = `org_${newId('x').slice(2)}`;
    await publish(completed(org, newId('env'), { at: '2024-01-31T23:59:59.999Z' }));
    await publish(completed(org, newId('env'), { at: '2024-02-01T00:00:00.000Z' }));
    await publish(completed(org, newId('env'), { at: '2024-02-29T23:59:59.000Z' }));
    await publish(completed(org, newId('env')));
    await settle([consumer], org, 1);
    const deadline = Date.now() + 10_000;
    const january = new Date('2024-01-15T00:00:00Z');
    const february = new Date('2024-02-29T12:00:00Z');
    while ((await countOf(org, february)).completedEnvelopes < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect((await countOf(org, january)).completedEnvelopes).toBe(1);
    const inFebruary = await countOf(org, february);
    expect(inFebruary.completedEnvelopes).toBe(2);
    expect(inFebruary.daily).toHaveLength(29);
    expect(inFebruary.daily[0]).toEqual({ date: '2024-02-01', completedEnvelopes: 1 });
    expect(inFebruary.daily[28]).toEqual({ date: '2024-02-29', completedEnvelopes: 1 });
    await consumer.stop();
  });
});
