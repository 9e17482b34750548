import type { Express } from 'express';
import { GraphQLError } from './values.ts';
import { PRINCIPAL_HEADER, requirePermission, type Principal, type PrincipalVerifier } from '../auth/principal.ts';
import type { Permission } from '../auth/permissions.ts';
import type { Logger } from '../log.ts';
import { INVALID_PRINCIPAL, principalIn, serveSubgraph, type SubgraphDefinition } from './server.ts';

export type { SubgraphResolvers } from './server.ts';

export interface SubgraphContext {
  principal: Principal | undefined;
}

export interface SubgraphOptions extends SubgraphDefinition {
  verifyPrincipal: PrincipalVerifier;
  /** Where a principal that fails verification is reported (never with the token). */
  log?: Logger;
}

/** Mounts a Sigil service's Federation 2 subgraph at `/graphql`. Callers reach it through the gateway only. */
export async function mountSubgraph(app: Express, options: SubgraphOptions): Promise<void> {
  return serveSubgraph<SubgraphContext>(app, options, async (req) => {
    const principal = await principalIn(req, PRINCIPAL_HEADER, options.verifyPrincipal, options.log);
    if (principal === INVALID_PRINCIPAL) throw new GraphQLError('The internal principal token is invalid or expired.', { extensions: { code: 'UNAUTHENTICATED' } });
    return { principal };
  });
}

/** Resolver guard: the caller must be signed in (key or session) and hold the permission. */
export function principalWith(context: SubgraphContext, permission: Permission): Principal {
  const { principal } = context;
  if (!principal) throw new GraphQLError('A valid API key or dashboard session is required.', { extensions: { code: 'UNAUTHENTICATED' } });
  requirePermission(principal, permission);
  return principal;
}
