import { readFileSync } from 'node:fs';
import { GraphQLError, principalWith } from '@sigil/kit/graphql';
import type { Resolvers } from './gen/graphql.ts';
import type { TemplateService, TemplateView } from './templates.ts';
import type { VersionService } from './versions/versions.ts';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

const TEMPLATE_ID = /^tpl_[A-Za-z0-9]{10,40}$/;

/** What the Template resolvers return: the API's template with a reference to its organization. */
export type TemplateNode = TemplateView & { organization: { __typename: 'Organization'; id: string } };

export function createResolvers(templates: TemplateService, versions: VersionService): Resolvers {
  return {
    Query: {
      templates: async (_, args, context) => {
        const principal = principalWith(context, 'template:read');
        const first = args.first ?? 20;
        if (first < 1 || first > 100) throw badInput('first must be between 1 and 100.');
        if ((args.after?.length ?? 0) > 200 || (args.q?.length ?? 0) > 200) throw badInput('after and q are at most 200 characters.');
        const q = args.q ?? undefined;
        const [page, totalCount] = await Promise.all([
          templates.list(principal.organizationId, { limit: first, cursor: args.after ?? undefined, q }),
          templates.count(principal.organizationId, q),
        ]);
        return { nodes: page.data.map(withOrganization(principal.organizationId)), hasMore: page.hasMore, nextCursor: page.nextCursor, totalCount };
      },
      template: async (_, args, context) => {
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
      versions: async (template, _, context) => {
        const principal = principalWith(context, 'template:read');
        return versions.all(principal.organizationId, template.id);
      },
      __resolveReference: async (ref, context) => {
        const principal = principalWith(context, 'template:read');
        return withOrganization(principal.organizationId)(await templates.get(principal.organizationId, ref.id));
      },
    },
    TemplateVersion: {
      version: (v) => String(v.version),
      pages: async (v, _, context) => (v.file ? versions.filePages(principalWith(context, 'template:read').organizationId, v.file) : []),
    },
  };
}

function withOrganization(organizationId: string) {
  return (template: TemplateView): TemplateNode => ({ ...template, organization: { __typename: 'Organization', id: organizationId } });
}

function badInput(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });
}
