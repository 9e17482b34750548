import { readFileSync } from 'node:fs';
import { GraphQLError } from 'graphql';
import { principalWith, type SubgraphContext } from '@sigil/kit/graphql';
import type { TemplateService, TemplateView } from './templates.ts';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

const TEMPLATE_ID = /^tpl_[A-Za-z0-9]{10,40}$/;

export function createResolvers(templates: TemplateService) {
  return {
    Query: {
      templates: async (_: unknown, args: { first: number; after?: string; q?: string }, context: SubgraphContext) => {
        const principal = principalWith(context, 'template:read');
        if (args.first < 1 || args.first > 100) throw badInput('first must be between 1 and 100.');
        if ((args.after?.length ?? 0) > 200 || (args.q?.length ?? 0) > 200) throw badInput('after and q are at most 200 characters.');
        const page = await templates.list(principal.organizationId, { limit: args.first, cursor: args.after, q: args.q });
        return { nodes: page.data.map(withOrganization(principal.organizationId)), hasMore: page.hasMore, nextCursor: page.nextCursor };
      },
      template: async (_: unknown, args: { id: string }, context: SubgraphContext) => {
        const principal = principalWith(context, 'template:read');
        if (!TEMPLATE_ID.test(args.id)) return null;
        try {
          return withOrganization(principal.organizationId)(await templates.get(principal.organizationId, args.id));
        } catch (error) {
          if ((error as { code?: string }).code === 'not-found') return null;
          throw error;
        }
      },
    },
    Template: {
      __resolveReference: async (ref: { id: string }, context: SubgraphContext) => {
        const principal = principalWith(context, 'template:read');
        return withOrganization(principal.organizationId)(await templates.get(principal.organizationId, ref.id));
      },
    },
  };
}

function withOrganization(organizationId: string) {
  return (template: TemplateView) => ({ ...template, organization: { __typename: 'Organization', id: organizationId } });
}

function badInput(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });
}
