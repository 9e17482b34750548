import express, { type Request, type RequestHandler } from 'express';
import { ApolloServer, type BaseContext } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse, type GraphQLFormattedError } from 'graphql';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/index.js';
import { isAppError } from '../errors.ts';
import type { SubgraphDefinition } from './server.ts';
import { unstorableTextPlugin } from './unstorable-text.ts';

/** Builds the Federation 2 subgraph's schema, starts its Apollo Server and answers the handler serving it (JSON bodies). */
export async function startSubgraphServer<TContext extends BaseContext>(definition: SubgraphDefinition, contextOf: (req: Request) => Promise<TContext>): Promise<RequestHandler> {
  const server = new ApolloServer<TContext>({
    // The generated resolver types are stricter than Apollo's map (typed parents, `__resolveReference`'s own shape).
    schema: buildSubgraphSchema({ typeDefs: parse(definition.typeDefs), resolvers: definition.resolvers as GraphQLResolverMap<unknown> }),
    formatError: formatGraphqlError,
    // Never a stack trace or a server path in an answer, whatever NODE_ENV says.
    includeStacktraceInErrorResponses: false,
    introspection: true,
    // Traces for Apollo's usage reporting, which the gateway never asks for: not loading them saves the protobuf
    // library (~0.7 MiB of heap per process).
    // Cache hints (`@cacheControl`) are not used: without the plugin no hook runs for every resolved field, which is
    // a tenth of the catalog's time on a timeline of 2,000 backups.
    plugins: [ApolloServerPluginInlineTraceDisabled(), ApolloServerPluginCacheControlDisabled(), unstorableTextPlugin<TContext>()],
  });
  await server.start();
  return express.Router().use(express.json(), expressMiddleware(server, { context: ({ req }) => contextOf(req) }));
}

function formatGraphqlError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = (error as { originalError?: unknown })?.originalError;
  if (isAppError(original)) {
    const code = original.status === 401 ? 'UNAUTHENTICATED' : original.status === 403 ? 'FORBIDDEN' : original.code.toUpperCase().replace(/-/g, '_');
    return { ...formatted, message: original.message, extensions: { code, slug: original.code, status: original.status } };
  }
  // An unexpected failure (a database error, say) may name internals: the caller gets a plain sentence.
  if (formatted.extensions?.code === 'INTERNAL_SERVER_ERROR') {
    return { message: 'An unexpected error occurred.', locations: formatted.locations, path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  }
  return formatted;
}
