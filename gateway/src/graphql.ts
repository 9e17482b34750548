import express, { type RequestHandler } from 'express';
import { ApolloGateway, RemoteGraphQLDataSource, type GraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { expressMiddleware } from '@as-integrations/express5';
import { PRINCIPAL_HEADER, REQUEST_ID_HEADER, type Logger, type Principal, type PrincipalSigner } from '@sigil/kit';
import type { ServiceName } from '@sigil/proto';

/** What every subgraph request of one incoming operation carries. */
export interface GatewayGraphQLContext {
  /** Signed once per incoming operation; absent for an anonymous caller. */
  principalToken: string | undefined;
  requestId: string;
}

export interface FederatedGraphOptions {
  supergraphSdl: string;
  serviceUrls: Partial<Record<ServiceName, string>>;
  signPrincipal: PrincipalSigner;
  log: Logger;
  /** The caller, resolved by the middleware in front (same rules as a K operation). */
  principalOf: (res: express.Response) => Principal | undefined;
}

export interface FederatedGraph {
  /** Mount at `/graphql` after the authentication middleware. */
  handler: RequestHandler[];
  stop(): Promise<void>;
}

/** A subgraph with no configured URL answers every fetch with an error instead of crashing the plan. */
function unconfiguredSubgraph(name: string): GraphQLDataSource<GatewayGraphQLContext> {
  return {
    process: async () => ({
      errors: [{ message: `The ${name} service is not configured on this gateway.`, extensions: { code: 'SERVICE_UNAVAILABLE' } }],
    }),
  };
}

/**
 * The federated GraphQL endpoint: `@apollo/gateway` plans over the checked-in supergraph (composed at
 * build time, never fetched at run time) and calls each subgraph at `serviceUrls[name] + '/graphql'`
 * with the caller's principal token, exactly as the REST proxy does.
 */
export async function createFederatedGraph(options: FederatedGraphOptions): Promise<FederatedGraph> {
  const { serviceUrls, log } = options;
  const gateway = new ApolloGateway({
    supergraphSdl: options.supergraphSdl,
    logger: log,
    buildService: ({ name }) => {
      const base = serviceUrls[name as ServiceName];
      if (!base) return unconfiguredSubgraph(name);
      return new RemoteGraphQLDataSource<GatewayGraphQLContext>({
        url: `${base.replace(/\/+$/, '')}/graphql`,
        willSendRequest({ request, context }) {
          // A subgraph fetch made outside an incoming operation (none with a static supergraph) carries nothing.
          const ctx = context as Partial<GatewayGraphQLContext>;
          request.http?.headers.delete(PRINCIPAL_HEADER);
          if (ctx.principalToken) request.http?.headers.set(PRINCIPAL_HEADER, ctx.principalToken);
          if (ctx.requestId) request.http?.headers.set(REQUEST_ID_HEADER, ctx.requestId);
        },
      });
    },
  });
  const server = new ApolloServer<GatewayGraphQLContext>({
    gateway,
    logger: log,
    stopOnTerminationSignals: false,
    introspection: true,
  });
  await server.start();
  return {
    handler: [
      express.json({ limit: '1mb' }),
      expressMiddleware(server, {
        context: async ({ res }) => {
          const principal = options.principalOf(res);
          return {
            principalToken: principal ? await options.signPrincipal(principal) : undefined,
            requestId: String(res.locals.requestId),
          };
        },
      }),
    ],
    stop: () => server.stop(),
  };
}
