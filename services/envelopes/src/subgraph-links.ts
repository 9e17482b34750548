import { principalWith } from '@sigil/kit/graphql';
import type { Resolvers } from './gen/graphql.ts';
import type { SigningLinkService } from './signing-links.ts';
import { badInput } from './subgraph-input.ts';

const LINK_ID = /^lnk_[A-Za-z0-9]{10,40}$/;

/**
 * `signingLinks` and `signingLink`: the caller's organization's links of the caller's mode (a dashboard session's
 * current one), with their usage, read through the same use cases as `/v1/signing-links`. `publicUrl` is where the
 * links' pages are (the service's PUBLIC_URL); without one the URL is the gateway-relative `/l/lnk_…`.
 */
export function createSigningLinkResolvers(links: SigningLinkService, publicUrl: string): Pick<Resolvers, 'SigningLink'> & { Query: Pick<NonNullable<Resolvers['Query']>, 'signingLinks' | 'signingLink'> } {
  return {
    Query: {
      signingLinks: async (_, args, context) => {
        const principal = principalWith(context, 'envelope:read');
        const first = args.first ?? 20;
        if (first < 1 || first > 100) throw badInput('first must be between 1 and 100.');
        if ((args.after?.length ?? 0) > 200) throw badInput('after is at most 200 characters.');
        const page = await links.list(principal, { limit: first, cursor: args.after ?? undefined }, publicUrl);
        return { nodes: page.data, hasMore: page.hasMore, nextCursor: page.nextCursor };
      },
      signingLink: async (_, args, context) => {
        const principal = principalWith(context, 'envelope:read');
        if (!LINK_ID.test(args.id)) return null;
        try {
          return await links.get(principal, args.id, publicUrl);
        } catch (error) {
          if ((error as { code?: string }).code === 'not-found') return null;
          throw error;
        }
      },
    },
    SigningLink: {
      template: (link) => ({ __typename: 'Template', id: link.template }),
    },
  };
}
