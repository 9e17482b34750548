import type { Express, Request, RequestHandler } from 'express';
import type { BaseContext } from '@apollo/server';
import type { GraphQLScalarType } from 'graphql';
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
 * Mounts the Federation 2 subgraph at `/graphql`, each operation's context built from its request. Apollo Server, the
 * federation libraries and the schema (~6 MiB of heap, more in code and RSS) come with the first request there, as
 * the gateway loads Apollo Gateway: a service that is never asked GraphQL never holds them. A schema that does not
 * build fails that request (500) and is tried again by the next one; the subgraph tests and `npm run compose` catch it
 * first. Callers reach it through the gateway only.
 */
export async function serveSubgraph<TContext extends BaseContext>(app: Express, definition: SubgraphDefinition, contextOf: (req: Request) => Promise<TContext>): Promise<void> {
  let started: Promise<RequestHandler> | undefined;
  const start = () =>
    (started ??= import('./apollo.ts')
      .then(({ startSubgraphServer }) => startSubgraphServer(definition, contextOf))
      .catch((error: unknown) => {
        started = undefined;
        throw error;
      }));
  app.use('/graphql', (req, res, next) => void start().then((handler) => handler(req, res, next), next));
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
