// The webhooks subgraph: endpoints with their health and recent deliveries, for the dashboard.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyPrincipal } from '@sigil/kit/testing';
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

  it('needs org:manage', async () => {
    expect((await gql('{ webhookEndpoints { hasMore } }', reader)).body.errors[0].extensions.code).toBe('FORBIDDEN');
  });
});
