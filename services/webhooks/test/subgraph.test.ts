// The webhooks subgraph: endpoints with their health and recent deliveries, for the dashboard.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyPrincipal, sessionPrincipal } from '@sigil/kit/testing';
import { startReceiver, startWebhooksHarness, type WebhooksHarness } from './helpers.ts';

let h: WebhooksHarness;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const manager = apiKeyPrincipal({ permissions: ['org:manage'] });
const reader = apiKeyPrincipal({ organizationId: manager.organizationId, permissions: ['envelope:read'] });
let endpointId: string;

const gql = async (query: string, principal = manager) => request(h.app).post('/graphql').set(await h.auth.headers(principal)).send({ query });

beforeAll(async () => {
  h = await startWebhooksHarness('subgraph');
  receiver = await startReceiver();
  const created = await request(h.app).post('/v1/webhook-endpoints').set(await h.auth.headers(manager)).send({ url: receiver.url, events: [] });
  endpointId = created.body.id;
  await request(h.app).post(`/v1/webhook-endpoints/${endpointId}/test`).set(await h.auth.headers(manager));
  await receiver.until(1);
});
afterAll(async () => {
  await receiver?.close();
  await h?.close();
});

describe('webhooks subgraph', () => {
  it('lists endpoints with their health and recent deliveries', async () => {
    let res = await gql('{ webhookEndpoints(first: 5) { nodes { id url enabled testMode health { attempts failures successRate } recentDeliveries(first: 3) { eventType attempt status statusCode } } hasMore } }');
    // The attempt is written a few milliseconds after the receiver answered: ask again until both parts show it.
    const recorded = () => res.body.data?.webhookEndpoints.nodes[0]?.recentDeliveries.length === 1 && res.body.data.webhookEndpoints.nodes[0].health.attempts === 1;
    for (let i = 0; i < 100 && !recorded(); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      res = await gql('{ webhookEndpoints(first: 5) { nodes { id url enabled testMode health { attempts failures successRate } recentDeliveries(first: 3) { eventType attempt status statusCode } } hasMore } }');
    }
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.webhookEndpoints).toEqual({
      nodes: [{ id: endpointId, url: receiver.url, enabled: true, testMode: true, health: { attempts: 1, failures: 0, successRate: 1 }, recentDeliveries: [{ eventType: 'webhook.test', attempt: 1, status: 'succeeded', statusCode: 200 }] }],
      hasMore: false,
    });
    expect((await gql(`{ webhookEndpoint(id: "${endpointId}") { id } }`)).body.data.webhookEndpoint).toEqual({ id: endpointId });
    expect((await gql('{ webhookEndpoint(id: "we_000000000000") { id } }')).body.data.webhookEndpoint).toBeNull();
  });

  it('pages through deliveries with a cursor, narrowed to one event', async () => {
    await request(h.app).post(`/v1/webhook-endpoints/${endpointId}/test`).set(await h.auth.headers(manager));
    await receiver.until(2);
    const query = (args: string) => gql(`{ webhookEndpoint(id: "${endpointId}") { deliveries(${args}) { nodes { eventId eventType status statusCode durationMs attemptedAt } hasMore nextCursor } } }`);
    let all = await query('first: 10');
    for (let i = 0; i < 100 && all.body.data?.webhookEndpoint.deliveries.nodes.length !== 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      all = await query('first: 10');
    }
    expect(all.body.errors).toBeUndefined();
    const [newest, oldest] = all.body.data.webhookEndpoint.deliveries.nodes;
    expect(newest.attemptedAt >= oldest.attemptedAt).toBe(true);
    expect(newest).toMatchObject({ eventType: 'webhook.test', status: 'succeeded', statusCode: 200, durationMs: expect.any(Number) });

    const first = (await query('first: 1')).body.data.webhookEndpoint.deliveries;
    expect(first).toMatchObject({ nodes: [{ eventId: newest.eventId }], hasMore: true });
    const second = (await query(`first: 1, after: "${first.nextCursor}"`)).body.data.webhookEndpoint.deliveries;
    expect(second).toEqual({ nodes: [oldest], hasMore: false, nextCursor: null });

    const ofOne = (await query(`event: "${oldest.eventId}"`)).body.data.webhookEndpoint.deliveries;
    expect(ofOne.nodes).toEqual([oldest]);
    expect((await query('event: "not-an-event"')).body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });

  it('shows a dashboard session both modes, or one with testMode', async () => {
    const live = apiKeyPrincipal({ organizationId: manager.organizationId, mode: 'live', permissions: ['org:manage'] });
    const created = await request(h.app).post('/v1/webhook-endpoints').set(await h.auth.headers(live)).send({ url: receiver.url, events: ['envelope.completed'] });
    expect(created.status).toBe(201);
    const session = sessionPrincipal({ organizationId: manager.organizationId });
    const ids = async (args: string) => (await gql(`{ webhookEndpoints${args} { nodes { id testMode } } }`, session)).body.data.webhookEndpoints.nodes;
    expect(await ids('')).toEqual([{ id: created.body.id, testMode: false }, { id: endpointId, testMode: true }]);
    expect(await ids('(testMode: true)')).toEqual([{ id: endpointId, testMode: true }]);
    expect(await ids('(testMode: false)')).toEqual([{ id: created.body.id, testMode: false }]);
    // A key sees its own mode whatever it asks for.
    expect((await gql('{ webhookEndpoints(testMode: false) { nodes { id } } }')).body.data.webhookEndpoints.nodes).toEqual([]);
  });

  it('needs org:manage', async () => {
    expect((await gql('{ webhookEndpoints { hasMore } }', reader)).body.errors[0].extensions.code).toBe('FORBIDDEN');
  });
});
