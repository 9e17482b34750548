import express, { type Express, type Request } from 'express';
import { ApolloServer, type BaseContext } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse, type GraphQLFormattedError, type GraphQLScalarType } from 'graphql';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/index.js';
import { isAppError } from '../errors.ts';
import type { Logger } from '../log.ts';

// `never` parameters: any resolver signature fits, `__resolveReference(reference, context)` included.
type ResolverFunction = (...args: never[]) => unknown;

/** One type's resolvers: by field a function or `{ resolve }`, by enum value its internal value. */
type TypeResolvers = Readonly<Record<string, ResolverFunction | { resolve: ResolverFunction } | string | number | undefined>>;

/** A subgraph's resolvers by type name: what the `Resolvers` type generated from its schema describes (`npm run types`). */
export type SubgraphResolvers = Readonly<Record<string, TypeResolvers | GraphQLScalarType | undefined>>;

export interface SubgraphDefinition {
  typeDefs: string;
  /** The service's resolvers, typed by the code generated from its schema (`npm run types`). */
  resolvers: SubgraphResolvers;
}

/**
 * Starts the Federation 2 subgraph and mounts it at `/graphql`, each operation's context built from its request.
 * Callers reach it through the gateway only.
 */
export async function serveSubgraph<TContext extends BaseContext>(
  app: Express,
  definition: SubgraphDefinition,
  contextOf: (req: Request) => Promise<TContext>,
): Promise<ApolloServer<TContext>> {
  const server = new ApolloServer<TContext>({
    // The generated resolver types are stricter than Apollo's map (typed parents, `__resolveReference`'s own shape).
    schema: buildSubgraphSchema({ typeDefs: parse(definition.typeDefs), resolvers: definition.resolvers as GraphQLResolverMap<unknown> }),
    formatError: formatGraphqlError,
    // Never a stack trace or a server path in an answer, whatever NODE_ENV says.
    includeStacktraceInErrorResponses: false,
    introspection: true,
    // Traces for Apollo's usage reporting, which the gateway never asks for: not loading them saves the protobuf
    // library (~0.7 MiB of heap per process).
    plugins: [ApolloServerPluginInlineTraceDisabled()],
  });
  await server.start();
  app.use('/graphql', express.json(), expressMiddleware(server, { context: ({ req }) => contextOf(req) }));
  return server;
}

/** What `principalIn` answers for a token that fails verification. */
export const INVALID_PRINCIPAL = Symbol('invalid principal');

/** The principal a request header carries: undefined when absent, INVALID_PRINCIPAL (logged, never the token) when unverifiable. */
export async function principalIn<T>(req: Request, header: string, verify: (token: string) => Promise<T>, log?: Logger): Promise<T | undefined | typeof INVALID_PRINCIPAL> {
  const token = req.headers[header];
  if (typeof token !== 'string') return undefined;
  try {
    return await verify(token);
  } catch (error) {
    log?.warn({ reason: (error as Error)?.message ?? String(error), path: '/graphql', header }, 'principal verification failed');
    return INVALID_PRINCIPAL;
  }
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
