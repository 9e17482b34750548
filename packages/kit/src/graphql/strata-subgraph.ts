import type { Express } from 'express';
import { GraphQLError } from './values.ts';
import { roleAtLeast, type StrataPrincipal, type StrataRole } from '@sigil/proto/strata';
import { STRATA_PRINCIPAL_HEADER, type StrataPrincipalVerifier } from '../auth/strata-principal.ts';
import type { Logger } from '../log.ts';
import { INVALID_PRINCIPAL, principalIn, serveSubgraph, type SubgraphDefinition } from './server.ts';

export interface StrataSubgraphContext {
  /** The caller the gateway resolved from the access proxy's token; undefined when absent or not verifiable. */
  strataPrincipal: StrataPrincipal | undefined;
}

export interface StrataSubgraphOptions extends SubgraphDefinition {
  verifyStrataPrincipal: StrataPrincipalVerifier;
  /** Where a principal that fails verification is reported (never with the token). */
  log?: Logger;
}

/**
 * Mounts a Strata service's Federation 2 subgraph at `/graphql`. A missing or unverifiable `x-strata-principal` leaves
 * the context without a caller: the guard of each resolver answers UNAUTHENTICATED, as the console API answers 401.
 */
export async function mountStrataSubgraph(app: Express, options: StrataSubgraphOptions): Promise<void> {
  return serveSubgraph<StrataSubgraphContext>(app, options, async (req) => {
    const principal = await principalIn(req, STRATA_PRINCIPAL_HEADER, options.verifyStrataPrincipal, options.log);
    return { strataPrincipal: principal === INVALID_PRINCIPAL ? undefined : principal };
  });
}

/** Resolver guard: the caller must come with valid access credentials and hold at least `role`. */
export function strataPrincipalWith(context: StrataSubgraphContext, role: StrataRole): StrataPrincipal {
  const principal = context.strataPrincipal;
  if (!principal) throw new GraphQLError('Valid access credentials are required.', { extensions: { code: 'UNAUTHENTICATED' } });
  if (!roleAtLeast(principal.role, role)) {
    throw new GraphQLError(`This query needs the role ${role}; you are ${principal.role}.`, { extensions: { code: 'FORBIDDEN' } });
  }
  return principal;
}
