import type { Express } from 'express';
import { createSigilApp } from '@sigil/kit/api';
import type { PrincipalVerifier } from '@sigil/kit/auth';
import { mountSubgraph } from '@sigil/kit/graphql';
import { mountHealth, type Health, type ReadinessCheck, type UrlPolicy } from '@sigil/kit/http';
import type { Logger } from '@sigil/kit/log';
import { listLimit } from '@sigil/kit/pagination';
import { loadSigilOpenApi } from '@sigil/proto/openapi';
import type { Db } from './db.ts';
import { createDeliveryService } from './deliveries.ts';
import { createEndpointService } from './endpoints.ts';
import type { SecretBox } from './secrets.ts';
import { createResolvers, typeDefs } from './subgraph.ts';

export interface WebhooksAppDeps {
  db: Db;
  log: Logger;
  verifyPrincipal: PrincipalVerifier;
  secrets: SecretBox;
  policy: UrlPolicy;
  clock?: () => Date;
  /** Wakes the delivery worker (a test or a redelivery is due now). */
  wake?: () => void;
  readiness?: Record<string, ReadinessCheck>;
}

export async function createApp(deps: WebhooksAppDeps): Promise<{ app: Express; health: Health }> {
  const clock = deps.clock ?? (() => new Date());
  const endpoints = createEndpointService({ db: deps.db, secrets: deps.secrets, policy: deps.policy, clock, log: deps.log });
  const deliveries = createDeliveryService({ db: deps.db, endpoints, clock, wake: deps.wake ?? (() => undefined) });
  let health: Health | undefined;
  const app = await createSigilApp({
    document: loadSigilOpenApi(),
    service: 'webhooks',
    log: deps.log,
    verifyPrincipal: deps.verifyPrincipal,
    db: deps.db,
    mount: async (app) => {
      health = mountHealth(app, { database: async () => void (await deps.db.$queryRawUnsafe('SELECT 1')), ...deps.readiness });
      await mountSubgraph(app, { typeDefs, resolvers: createResolvers({ endpoints, deliveries }), verifyPrincipal: deps.verifyPrincipal });
    },
    handlers: {
      createWebhookEndpoint: async ({ principal, body }) => ({ status: 201, body: await endpoints.create(principal, body) }),
      listWebhookEndpoints: async ({ principal, query }) => ({ status: 200, body: await endpoints.list(principal, { limit: listLimit(query), cursor: query.cursor }) }),
      getWebhookEndpoint: async ({ principal, params }) => ({ status: 200, body: await endpoints.get(principal, params.id) }),
      updateWebhookEndpoint: async ({ principal, params, body }) => ({ status: 200, body: await endpoints.update(principal, params.id, body) }),
      deleteWebhookEndpoint: async ({ principal, params }) => {
        await endpoints.remove(principal, params.id);
        return { status: 204 };
      },
      revealWebhookEndpointSecret: async ({ principal, params, from }) => ({ status: 200, body: await endpoints.reveal(principal, params.id, from) }),
      rotateWebhookEndpointSecret: async ({ principal, params, from }) => ({ status: 200, body: await endpoints.rotate(principal, params.id, from) }),
      listWebhookDeliveries: async ({ principal, params, query }) => ({
        status: 200,
        body: await deliveries.list(principal, params.id, { limit: listLimit(query), cursor: query.cursor, event: query.event }),
      }),
      testWebhookEndpoint: async ({ principal, params }) => ({ status: 202, body: await deliveries.test(principal, params.id) }),
      redeliverEvent: async ({ principal, params, body }) => ({ status: 202, body: await deliveries.redeliver(principal, params.id, body) }),
    },
  });
  return { app, health: health as Health };
}
