import { readFileSync } from 'node:fs';
import type { Principal } from '@sigil/kit/auth';
import { GraphQLError, type SubgraphContext } from '@sigil/kit/graphql';
import type { Permission } from '@sigil/kit/auth';
import type { ApiKeyService } from './api-keys.ts';
import type { Resolvers } from './gen/graphql.ts';
import type { MemberService } from './members.ts';
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

const badInput = (message: string) => new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });

/**
 * The caller when it is a dashboard session of `organizationId` holding `permission` (the REST lists of API keys and
 * invitations are dashboard-only, `x-auth: D`, and so are these fields); null for another organization.
 */
function dashboardWith(context: SubgraphContext, organizationId: string, permission: Permission, what: string): Principal | null {
  const principal = caller(context);
  if (!principal || principal.organizationId !== organizationId) return null;
  if (principal.kind !== 'session' || !principal.permissions.includes(permission)) {
    throw new GraphQLError(`${what} are visible to dashboard sessions holding ${permission}.`, { extensions: { code: 'FORBIDDEN' } });
  }
  return principal;
}

/** The page a list field asks for: `first` 1 to 100, a cursor of at most 200 characters. */
function pageArgs(args: { first?: number | null; after?: string | null }): { limit: number; cursor?: string } {
  const limit = args.first ?? 50;
  if (limit < 1 || limit > 100) throw badInput('first must be between 1 and 100.');
  if ((args.after?.length ?? 0) > 200) throw badInput('after is at most 200 characters.');
  return { limit, cursor: args.after ?? undefined };
}

const EMPTY_PAGE = { nodes: [], hasMore: false, nextCursor: null };

export interface SubgraphServices {
  organizations: OrganizationService;
  apiKeys: ApiKeyService;
  members: MemberService;
}

export function createResolvers({ organizations, apiKeys, members }: SubgraphServices): Resolvers {
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
      apiKeys: async (organization, args, context) => {
        if (!dashboardWith(context, organization.id, 'apikey:manage', 'API keys')) return EMPTY_PAGE;
        if (args.mode != null && args.mode !== 'test' && args.mode !== 'live') throw badInput('mode must be test or live.');
        const page = await apiKeys.list(organization.id, { ...pageArgs(args), mode: args.mode ?? undefined });
        return { nodes: page.data, hasMore: page.hasMore, nextCursor: page.nextCursor };
      },
      invitations: async (organization, args, context) => {
        if (!dashboardWith(context, organization.id, 'member:manage', 'Invitations')) return EMPTY_PAGE;
        const page = await members.listInvitations(organization.id, pageArgs(args));
        return { nodes: page.data, hasMore: page.hasMore, nextCursor: page.nextCursor };
      },
    },
  };
}
