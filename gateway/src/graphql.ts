import express, { type RequestHandler } from 'express';
import { ApolloGateway, RemoteGraphQLDataSource, type GraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { costLimitRule } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import type { GraphQLError, GraphQLFormattedError, ValidationContext } from 'graphql';
import { PRINCIPAL_HEADER, STRATA_PRINCIPAL_HEADER, type Principal } from '@sigil/kit/auth';
import { REQUEST_ID_HEADER } from '@sigil/kit/http';
import type { Logger } from '@sigil/kit/log';
import type { ServiceName } from '@sigil/proto/routes';
import type { StrataPrincipal } from '@sigil/proto/strata';
import type { ServiceUrls } from './replicas.ts';
import { subgraphEndpoint } from './subgraphs.ts';

/** What every subgraph request of one incoming operation carries. */
export interface GatewayGraphQLContext {
  /** Signed once per caller (re-used while fresh); absent for an anonymous caller. */
  principalToken: string | undefined;
  /** The Strata caller's `x-strata-principal`, signed the same way; absent without an access token. */
  strataPrincipalToken: string | undefined;
  requestId: string;
}

/** Limits checked while the query is validated, before any subgraph is asked anything. */
export interface GraphLimits {
  /** Deepest selection set (fields within fields). */
  maxDepth: number;
  /** graphql-armor's cost: every object and scalar counts, deeper ones more. */
  maxCost: number;
  maxAliases: number;
}

/** A refused query is an ordinary validation error (400, GRAPHQL_VALIDATION_FAILED), not an exception (500). */
const REPORT_AS_VALIDATION_ERROR = {
  exposeLimits: true,
  propagateOnRejection: false,
  onReject: [(context: ValidationContext | null, error: GraphQLError) => context?.reportError(error)],
};

export const DEFAULT_GRAPH_LIMITS: GraphLimits = { maxDepth: 8, maxCost: 5000, maxAliases: 15 };

export interface FederatedGraphOptions {
  supergraphSdl: string;
  serviceUrls: ServiceUrls;
  principalToken: (principal: Principal) => Promise<string>;
  log: Logger;
  limits?: Partial<GraphLimits>;
  /** The caller, resolved by the middleware in front (same rules as a K operation). */
  principalOf: (res: express.Response) => Principal | undefined;
  /** Strata callers (access proxy tokens). Absent: Strata authentication is not configured on this gateway. */
  strata?: StrataCallers;
}

export interface StrataCallers {
  /** The Strata caller, resolved by the middleware in front (the access token judged as on `/api/v1`). */
  principalOf: (res: express.Response) => StrataPrincipal | undefined;
  principalToken: (principal: StrataPrincipal) => Promise<string>;
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
 * The federated GraphQL endpoint: `@apollo/gateway` plans over the checked-in supergraph (composed at build time, never
 * fetched at run time) and calls each subgraph at `serviceUrls[name] + '/graphql'` with the caller's principal token,
 * exactly as the REST proxy does, and the Strata caller's in `x-strata-principal` (a request may carry both). Callers
 * with neither are refused before planning; answers never carry stack traces.
 */
export async function createFederatedGraph(options: FederatedGraphOptions): Promise<FederatedGraph> {
  const { serviceUrls, log } = options;
  const limits = { ...DEFAULT_GRAPH_LIMITS, ...options.limits };
  // Apollo's gateway otherwise reports usage metrics to Apollo every minute, after probing the cloud metadata
  // endpoints of AWS, GCP, Azure and Alibaba: nothing of a customer's installation leaves it unasked.
  process.env.APOLLO_TELEMETRY_DISABLED = 'true';
  const gateway = new ApolloGateway({
    supergraphSdl: options.supergraphSdl,
    logger: log,
    buildService: ({ name }) => {
      const base = serviceUrls[name as ServiceName];
      if (!base) return unconfiguredSubgraph(name);
      return new RemoteGraphQLDataSource<GatewayGraphQLContext>({
        ...subgraphEndpoint(base),
        willSendRequest({ request, context }) {
          const ctx = context as Partial<GatewayGraphQLContext>;
          request.http?.headers.delete(PRINCIPAL_HEADER);
          request.http?.headers.delete(STRATA_PRINCIPAL_HEADER);
          if (ctx.principalToken) request.http?.headers.set(PRINCIPAL_HEADER, ctx.principalToken);
          if (ctx.strataPrincipalToken) request.http?.headers.set(STRATA_PRINCIPAL_HEADER, ctx.strataPrincipalToken);
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
    includeStacktraceInErrorResponses: false,
    formatError: hideInternals,
    // No usage reporting to Apollo, so no inline traces either (and their protobuf library stays unloaded).
    plugins: [ApolloServerPluginInlineTraceDisabled()],
    validationRules: [
      maxDepthRule({ n: limits.maxDepth, ...REPORT_AS_VALIDATION_ERROR }),
      costLimitRule({ maxCost: limits.maxCost, ...REPORT_AS_VALIDATION_ERROR }),
      maxAliasesRule({ n: limits.maxAliases, ...REPORT_AS_VALIDATION_ERROR }),
    ],
  });
  await server.start();
  const anonymousMessage = options.strata ? 'A valid API key, dashboard session or access token is required.' : 'A valid API key or dashboard session is required.';
  return {
    handler: [
      (_req, res, next) => {
        if (options.principalOf(res) || options.strata?.principalOf(res)) return next();
        res.status(401).setHeader('www-authenticate', 'Bearer realm="sigil"');
        res.json({ errors: [{ message: anonymousMessage, extensions: { code: 'UNAUTHENTICATED' } }] });
      },
      express.json({ limit: '1mb' }),
      expressMiddleware(server, { context: async ({ res }) => contextOf(options, res) }),
    ],
    stop: () => server.stop(),
  };
}

async function contextOf(options: FederatedGraphOptions, res: express.Response): Promise<GatewayGraphQLContext> {
  const principal = options.principalOf(res);
  const strataPrincipal = options.strata?.principalOf(res);
  return {
    principalToken: principal ? await options.principalToken(principal) : undefined,
    strataPrincipalToken: strataPrincipal ? await options.strata?.principalToken(strataPrincipal) : undefined,
    requestId: String(res.locals.requestId),
  };
}

/** An unexpected failure may name files or internals: the caller gets a plain sentence, the log gets the rest. */
function hideInternals(formatted: GraphQLFormattedError): GraphQLFormattedError {
  const { stacktrace: _stacktrace, exception: _exception, ...extensions } = (formatted.extensions ?? {}) as Record<string, unknown>;
  if (extensions.code === 'INTERNAL_SERVER_ERROR') return { message: 'An unexpected error occurred.', locations: formatted.locations, path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  return { ...formatted, extensions };
}
