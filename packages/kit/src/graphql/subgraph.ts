import express, { type Express } from 'express';
import { ApolloServer } from '@apollo/server';
import { expressMiddleware } from '@as-integrations/express5';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { GraphQLError, parse, type GraphQLFormattedError, type GraphQLScalarType } from 'graphql';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/index.js';
import { isAppError } from '../errors.ts';
import { PRINCIPAL_HEADER, requirePermission, type Principal, type PrincipalVerifier } from '../auth/principal.ts';
import type { Permission } from '../auth/permissions.ts';
import type { Logger } from '../log.ts';

export interface SubgraphContext {
  principal: Principal | undefined;
}

// `never` parameters: any resolver signature fits, `__resolveReference(reference, context)` included.
type ResolverFunction = (...args: never[]) => unknown;

/** One type's resolvers: by field a function or `{ resolve }`, by enum value its internal value. */
type TypeResolvers = Readonly<Record<string, ResolverFunction | { resolve: ResolverFunction } | string | number | undefined>>;

/** A subgraph's resolvers by type name: what the `Resolvers` type generated from its schema describes (`npm run types`). */
export type SubgraphResolvers = Readonly<Record<string, TypeResolvers | GraphQLScalarType | undefined>>;

export interface SubgraphOptions {
  typeDefs: string;
  /** The service's resolvers, typed by the code generated from its schema (`npm run types`). */
  resolvers: SubgraphResolvers;
  verifyPrincipal: PrincipalVerifier;
  /** Where a principal that fails verification is reported (never with the token). */
  log?: Logger;
}

/** Mounts the service's Federation 2 subgraph at `/graphql`. Callers reach it through the gateway only. */
export async function mountSubgraph(app: Express, options: SubgraphOptions): Promise<ApolloServer<SubgraphContext>> {
  const server = new ApolloServer<SubgraphContext>({
    // The generated resolver types are stricter than Apollo's map (typed parents, `__resolveReference`'s own shape).
    schema: buildSubgraphSchema({ typeDefs: parse(options.typeDefs), resolvers: options.resolvers as GraphQLResolverMap<unknown> }),
    formatError: formatGraphqlError,
    // Never a stack trace or a server path in an answer, whatever NODE_ENV says.
    includeStacktraceInErrorResponses: false,
    introspection: true,
  });
  await server.start();
  app.use(
    '/graphql',
    express.json(),
    expressMiddleware(server, {
      context: async ({ req }) => {
        const token = req.headers[PRINCIPAL_HEADER];
        if (typeof token !== 'string') return { principal: undefined };
        try {
          return { principal: await options.verifyPrincipal(token) };
        } catch (error) {
          options.log?.warn({ reason: (error as Error)?.message ?? String(error), path: '/graphql' }, 'principal verification failed');
          throw new GraphQLError('The internal principal token is invalid or expired.', { extensions: { code: 'UNAUTHENTICATED' } });
        }
      },
    }),
  );
  return server;
}

/** Resolver guard: the caller must be signed in (key or session) and hold the permission. */
export function principalWith(context: SubgraphContext, permission: Permission): Principal {
  const { principal } = context;
  if (!principal) throw new GraphQLError('A valid API key or dashboard session is required.', { extensions: { code: 'UNAUTHENTICATED' } });
  requirePermission(principal, permission);
  return principal;
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
