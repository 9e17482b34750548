// The render job end to end in one process: creation's outbox row reaches the bus through the relay, the consumer
// renders, a failure is retried by redelivery. The memory transport stands in for JetStream (same Bus interface).
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryBus, startOutboxRelay, type OutboxRelay, type RunningConsumer } from '@sigil/kit/bus';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal, silentLogger } from '@sigil/kit/testing';
import { startRenderConsumer } from '../src/jobs/render.ts';
import { sampleVersion, startEnvelopesHarness, type EnvelopesHarness } from './helpers.ts';

let h: EnvelopesHarness;
let relay: OutboxRelay;
let consumer: RunningConsumer;
const bus = createMemoryBus();
const org = apiKeyPrincipal({ permissions: ['envelope:read', 'envelope:send'] });
const templateId = newId('tpl');

beforeAll(async () => {
  h = await startEnvelopesHarness('render_job');
  h.templates.publish(org.organizationId, sampleVersion(templateId));
  relay = await startOutboxRelay({ databaseUrl: h.databaseUrl, bus, log: silentLogger(), pollIntervalMs: 50 });
  consumer = await startRenderConsumer(bus, { db: h.db, store: h.store, templates: h.templates, clock: () => new Date(), log: silentLogger() }, { retryDelaysMs: [20] });
}, 60_000);
afterAll(async () => {
  await consumer?.stop();
  await relay?.stop();
  await h?.close();
});

describe('the render job', () => {
  it('is published once through the outbox and retried until the envelope is sent', async () => {
    h.templates.failDocuments = 2;
    const created = await request(h.app).post('/v1/envelopes').set(await h.auth.headers(org)).send({
      template: templateId,
      recipients: [{ role: 'client', name: 'Ada', email: 'ada@example.com' }, { role: 'counsel', name: 'Grace', email: 'grace@example.com' }],
      variables: { company: 'Acme' },
    });
    expect(created.status).toBe(201);
    await relay.drain();
    await consumer.idle(60_000); // three render attempts; under a loaded CI machine they take their time
    const row = await h.db.envelope.findUniqueOrThrow({ where: { id: created.body.id } });
    expect(row).toMatchObject({ status: 'sent', renderAttempts: 2, renderError: null });
    expect(bus.published().filter((m) => m.subject === 'sigil.jobs.envelopes.render').map((m) => m.id)).toEqual([`render-${created.body.id}`]);
    await relay.drain();
    expect(bus.published().map((m) => m.subject)).toEqual(expect.arrayContaining(['sigil.events.envelope.created', 'sigil.events.envelope.ready', 'sigil.events.recipient.sent']));
  }, 90_000);
});
