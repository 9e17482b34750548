import { readFileSync } from 'node:fs';
import { GraphQLError, principalWith } from '@sigil/kit/graphql';
import type { DeliveryService } from './deliveries.ts';
import type { EndpointService } from './endpoints.ts';
import type { Resolvers } from './gen/graphql.ts';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');
export type { EndpointView } from './endpoints.ts';
export type { DeliveryView } from './deliveries.ts';

const ENDPOINT_ID = /^we_[A-Za-z0-9]{10,40}$/;
const EVENT_ID = /^evt_[A-Za-z0-9]{10,40}$/;
const badInput = (message: string) => new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });

/** `first` between 1 and 100, a cursor of at most 200 characters. */
function pageArgs(args: { first?: number | null; after?: string | null }, fallback: number): { limit: number; cursor?: string } {
  const limit = args.first ?? fallback;
  if (limit < 1 || limit > 100) throw badInput('first must be between 1 and 100.');
  if ((args.after?.length ?? 0) > 200) throw badInput('after is at most 200 characters.');
  return { limit, cursor: args.after ?? undefined };
}

export function createResolvers(deps: { endpoints: EndpointService; deliveries: DeliveryService }): Resolvers {
  const one = async (principal: ReturnType<typeof principalWith>, id: string) => {
    if (!ENDPOINT_ID.test(id)) return null;
    try {
      return await deps.endpoints.get(principal, id);
    } catch (error) {
      if ((error as { code?: string }).code === 'not-found') return null;
      throw error;
    }
  };
  return {
    Query: {
      webhookEndpoints: async (_, args, context) => {
        const page = await deps.endpoints.list(principalWith(context, 'org:manage'), { ...pageArgs(args, 20), testMode: args.testMode ?? undefined });
        return { nodes: page.data, hasMore: page.hasMore, nextCursor: page.nextCursor };
      },
      webhookEndpoint: async (_, args, context) => one(principalWith(context, 'org:manage'), args.id),
    },
    WebhookEndpoint: {
      __resolveReference: async (ref, context) => one(principalWith(context, 'org:manage'), ref.id),
      recentDeliveries: async (endpoint, args, context) => {
        const first = args.first ?? 10;
        if (first < 1 || first > 100) throw badInput('first must be between 1 and 100.');
        return (await deps.deliveries.list(principalWith(context, 'org:manage'), endpoint.id, { limit: first })).data;
      },
      deliveries: async (endpoint, args, context) => {
        if (args.event != null && !EVENT_ID.test(args.event)) throw badInput('event must be an event id (evt_...).');
        const page = await deps.deliveries.list(principalWith(context, 'org:manage'), endpoint.id, { ...pageArgs(args, 20), event: args.event ?? undefined });
        return { nodes: page.data, hasMore: page.hasMore, nextCursor: page.nextCursor };
      },
    },
  };
}
