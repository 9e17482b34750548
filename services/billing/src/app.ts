import type { Express, Request } from 'express';
import { createSigilApp } from '@sigil/kit/api';
import type { PrincipalVerifier } from '@sigil/kit/auth';
import { mountSubgraph } from '@sigil/kit/graphql';
import { mountHealth, type Health, type ReadinessCheck } from '@sigil/kit/http';
import type { Logger } from '@sigil/kit/log';
import { loadSigilOpenApi } from '@sigil/proto/openapi';
import { createBillingService } from './billing.ts';
import type { Db } from './db.ts';
import { mountInternalRoutes } from './internal-routes.ts';
import type { Processor } from './processor/processor.ts';
import { PROCESSOR_SIGNATURE_HEADER } from './processor/webhook-signature.ts';
import { createResolvers, typeDefs } from './subgraph.ts';

export interface BillingAppDeps {
  db: Db;
  log: Logger;
  verifyPrincipal: PrincipalVerifier;
  processor: Processor;
  /** The dashboard's base address (`https://app.sigil.dev/app`). */
  dashboardUrl: string;
  notifyPlanChanged: (organizationId: string) => void;
  clock?: () => Date;
  readiness?: Record<string, ReadinessCheck>;
}

const rawBodyOf = (req: Request): Buffer | undefined => (req as Request & { rawBody?: Buffer }).rawBody;

export async function createApp(deps: BillingAppDeps): Promise<{ app: Express; health: Health }> {
  const billing = createBillingService({ ...deps, clock: deps.clock ?? (() => new Date()) });
  let health: Health | undefined;
  const app = await createSigilApp({
    document: loadSigilOpenApi(),
    service: 'billing',
    log: deps.log,
    verifyPrincipal: deps.verifyPrincipal,
    db: deps.db,
    mount: async (app) => {
      health = mountHealth(app, { database: async () => void (await deps.db.$queryRawUnsafe('SELECT 1')), ...deps.readiness });
      await mountSubgraph(app, { typeDefs, resolvers: createResolvers(billing), verifyPrincipal: deps.verifyPrincipal });
      mountInternalRoutes(app, { verifyPrincipal: deps.verifyPrincipal, billing });
    },
    handlers: {
      getBilling: async ({ principal }) => ({ status: 200, body: await billing.overview(principal.organizationId) }),
      getBillingSubscription: async ({ principal }) => ({ status: 200, body: await billing.subscription(principal.organizationId) }),
      getUsage: async ({ principal, query }) => ({ status: 200, body: await billing.usage(principal.organizationId, query.period) }),
      createBillingCheckout: async ({ principal, body }) => ({ status: 200, body: await billing.checkout({ organizationId: principal.organizationId }, body) }),
      createBillingPortalSession: async ({ principal, body }) => ({ status: 200, body: await billing.portal({ organizationId: principal.organizationId }, body ?? {}) }),
    },
    publicHandlers: {
      receiveProcessorWebhook: async ({ req }) => {
        // The real processor names the same header Stripe-Signature: its webhooks come straight in.
        const signature = req.headers[PROCESSOR_SIGNATURE_HEADER] ?? req.headers['stripe-signature'];
        return { status: 200, body: await billing.receiveWebhook(rawBodyOf(req), typeof signature === 'string' ? signature : undefined) };
      },
    },
  });
  if (!health) throw new Error('health was not mounted');
  return { app, health };
}
