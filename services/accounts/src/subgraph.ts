import { readFileSync } from 'node:fs';
import type { Principal } from '@sigil/kit/auth';
import { GraphQLError, type SubgraphContext } from '@sigil/kit/graphql';
import type { Resolvers } from './gen/graphql.ts';
import type { OrganizationService } from './organizations.ts';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

/** The caller's principal, when it is a user or an API key (service principals have no organization here). */
function caller(context: SubgraphContext): Principal | undefined {
  const { principal } = context;
  return principal && (principal.kind === 'session' || principal.kind === 'api_key') ? principal : undefined;
}

/** The caller, or the authentication error a request without credentials gets (never an empty answer). */
function signedIn(context: SubgraphContext): Principal {
  const principal = caller(context);
  if (!principal) throw new GraphQLError('A valid API key or dashboard session is required.', { extensions: { code: 'UNAUTHENTICATED' } });
  return principal;
}

export function createResolvers(organizations: OrganizationService): Resolvers {
  return {
    Query: {
      organization: async (_, __, context) => {
        const principal = signedIn(context);
        return organizations.get(principal.organizationId);
      },
      viewer: async (_, __, context) => {
        const principal = signedIn(context);
        if (principal.kind !== 'session' || !principal.userId) return null;
        return organizations.member(principal.organizationId, principal.userId);
      },
    },
    Organization: {
      /** Other subgraphs may reference only the caller's own organization; any other id resolves to null. */
      __resolveReference: async (ref, context) => {
        const principal = caller(context);
        if (!principal || ref.id !== principal.organizationId) return null;
        return organizations.get(ref.id);
      },
      members: async (organization, _, context) => {
        const principal = caller(context);
        if (!principal || principal.organizationId !== organization.id) return [];
        if (principal.kind !== 'session' && !principal.permissions.includes('member:manage')) {
          throw new GraphQLError('Members are visible to dashboard sessions and to API keys with member:manage.', {
            extensions: { code: 'FORBIDDEN' },
          });
        }
        return organizations.members(organization.id);
      },
    },
  };
}
