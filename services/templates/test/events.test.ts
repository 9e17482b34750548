import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { connectBus, durableNameFor, enqueueEvent, startOutboxRelay, type NatsBus, type OutboxRelay, type RunningConsumer } from '@sigil/kit/bus';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal, silentLogger, testNatsUrl } from '@sigil/kit/testing';
import { EVENTS_STREAM, eventSubject, type DomainEvent } from '@sigil/proto';
import { startTemplatesHarness, type TemplatesHarness } from './helpers.ts';
import { startTemplateUsageConsumer } from '../src/jobs/template-usage.ts';

let h: TemplatesHarness;
let bus: NatsBus;
let relay: OutboxRelay;
let usage: RunningConsumer;
const prefix = `test_${newId('run').slice(4)}_`;
const org = apiKeyPrincipal();

beforeAll(async () => {
  h = await startTemplatesHarness('events');
  bus = await connectBus(testNatsUrl(), 'templates-test');
  relay = await startOutboxRelay({ databaseUrl: h.databaseUrl, bus, log: silentLogger(), pollIntervalMs: 100 });
  usage = await startTemplateUsageConsumer(bus, h.db, silentLogger(), prefix);
});
afterAll(async () => {
  await usage?.stop();
  await relay?.stop();
  for (const subject of [eventSubject('envelope.created'), eventSubject('signing_link.created')]) {
    await bus?.jsm.consumers.delete(EVENTS_STREAM, durableNameFor(`${prefix}templates-usage`, subject)).catch(() => undefined);
  }
  await bus?.close();
  await h?.close();
});

async function createTemplate(name: string): Promise<string> {
  const res = await request(h.app).post('/v1/templates').set(await h.auth.headers(org)).send({ name });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function publishEvent(event: DomainEvent): Promise<void> {
  await bus.publish(eventSubject(event.type), event, { msgId: event.id });
}

/** Every message of `subject` a consumer created now receives, until the stream has nothing more for it. */
async function collect(durable: string, subject: string, run: () => Promise<void>): Promise<DomainEvent[]> {
  await bus.jsm.consumers.add(EVENTS_STREAM, { durable_name: durable, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.New, filter_subject: subject });
  try {
    await run();
    const consumer = await bus.js.consumers.get(EVENTS_STREAM, durable);
    const seen: DomainEvent[] = [];
    for (let empty = 0; empty < 2; ) {
      const msg = await consumer.next({ expires: 1000 });
      if (!msg) {
        empty += 1;
        continue;
      }
      msg.ack();
      seen.push(msg.json<DomainEvent>());
    }
    return seen;
  } finally {
    await bus.jsm.consumers.delete(EVENTS_STREAM, durable);
  }
}

describe('template.* events through the outbox', () => {
  it('publishes template.created to JetStream once, with the event id as Nats-Msg-Id', async () => {
    const durable = `${prefix}observer`;
    await bus.jsm.consumers.add(EVENTS_STREAM, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.New,
      filter_subject: eventSubject('template.created'),
    });
    const id = await createTemplate('Relayed');
    const consumer = await bus.js.consumers.get(EVENTS_STREAM, durable);
    let found: DomainEvent<'template.created'> | undefined;
    for (let i = 0; i < 50 && !found; i++) {
      const msg = await consumer.next({ expires: 1000 });
      if (!msg) continue;
      msg.ack();
      const event = msg.json<DomainEvent<'template.created'>>();
      if (event.data.template.id === id) {
        found = event;
        expect(msg.headers?.get('Nats-Msg-Id')).toBe(event.id);
      }
    }
    expect(found).toMatchObject({ type: 'template.created', organizationId: org.organizationId, data: { template: { id, name: 'Relayed' } } });
    await relay.drain(); // the batch that published it commits its mark after the broker's ack
    const row = await h.db.outboxEvent.findUniqueOrThrow({ where: { id: found!.id } });
    expect(row.publishedAt).not.toBeNull();
    await bus.jsm.consumers.delete(EVENTS_STREAM, durable);
  });

  it('a row published twice (the relay crashed before marking it) reaches the stream once, and is marked on the next pass', async () => {
    const templateId = `tpl_${newId('x').slice(2)}`;
    let eventId = '';
    const seen = await collect(`${prefix}crash`, eventSubject('template.deleted'), async () => {
      const event = await h.db.$transaction((tx) => enqueueEvent(tx, { type: 'template.deleted', organizationId: org.organizationId, data: { templateId } }));
      eventId = event.id;
      // What the crashed relay did: publish the row, then die before marking it. The relay running here publishes it again.
      await bus.publish(eventSubject('template.deleted'), event, { msgId: event.id });
      await relay.drain();
    });
    expect(seen.filter((event) => event.id === eventId)).toHaveLength(1);
    const row = await h.db.outboxEvent.findUniqueOrThrow({ where: { id: eventId } });
    expect(row.publishedAt).not.toBeNull();
  });
});

describe('the never-used rule', () => {
  it('refuses to delete a template an envelope used, learnt from envelope.created', async () => {
    const id = await createTemplate('Used by an envelope');
    const envelopeId = newId('env');
    await publishEvent({ id: newId('evt'), type: 'envelope.created', occurredAt: new Date().toISOString(), organizationId: org.organizationId, data: { envelopeId, templateId: id, testMode: true } });
    await usage.idle();
    const res = await request(h.app).delete(`/v1/templates/${id}`).set(await h.auth.headers(org));
    expect(res.status).toBe(409);
    expect(res.body.type).toBe('https://sigil.dev/problems/template-in-use');
    expect(res.body.detail).toContain(envelopeId);
  });

  it('refuses to delete a template a signing link used', async () => {
    const id = await createTemplate('Used by a link');
    await publishEvent({ id: newId('evt'), type: 'signing_link.created', occurredAt: new Date().toISOString(), organizationId: org.organizationId, data: { signingLinkId: newId('lnk'), templateId: id, testMode: false } });
    await usage.idle();
    expect((await request(h.app).delete(`/v1/templates/${id}`).set(await h.auth.headers(org))).status).toBe(409);
  });

  it('handles a redelivered event once, and ignores events of another organization', async () => {
    const id = await createTemplate('Redelivered');
    const event: DomainEvent = { id: newId('evt'), type: 'envelope.created', occurredAt: new Date().toISOString(), organizationId: 'org_someoneelse000000000000', data: { envelopeId: newId('env'), templateId: id, testMode: true } };
    await publishEvent(event);
    await usage.idle();
    expect(await h.db.templateUsage.count({ where: { templateId: id } })).toBe(0);
    const mine = { ...event, id: newId('evt'), organizationId: org.organizationId };
    await publishEvent(mine);
    await bus.publish(eventSubject(mine.type), mine); // same event id, no dedupe header: a redelivery
    await usage.idle();
    expect(await h.db.templateUsage.count({ where: { templateId: id } })).toBe(1);
    expect(await h.db.processedMessage.count({ where: { messageId: mine.id } })).toBe(1);
  });

  it('deletes a template nothing used', async () => {
    const id = await createTemplate('Unused');
    expect((await request(h.app).delete(`/v1/templates/${id}`).set(await h.auth.headers(org))).status).toBe(204);
  });
});
