import { readFileSync } from 'node:fs';
import { GraphQLError, principalWith } from '@sigil/kit/graphql';
import type { EnvelopeService } from './envelopes.ts';
import { ENVELOPE_STATUSES } from './state.ts';
import type { Resolvers } from './gen/graphql.ts';
import type { EnvelopeView } from './views.ts';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

const ENVELOPE_ID = /^env_[A-Za-z0-9]{10,40}$/;

/** What the Envelope resolvers return: the API's envelope with a reference to its template. */
export type EnvelopeNode = EnvelopeView & { templateRef: { __typename: 'Template'; id: string } };

const toNode = (envelope: EnvelopeView): EnvelopeNode => ({ ...envelope, templateRef: { __typename: 'Template', id: envelope.template } });

export function createResolvers(envelopes: EnvelopeService): Resolvers {
  const one = async (principal: ReturnType<typeof principalWith>, id: string): Promise<EnvelopeNode | null> => {
    if (!ENVELOPE_ID.test(id)) return null;
    try {
      return toNode(await envelopes.get(principal, id));
    } catch (error) {
      if ((error as { code?: string }).code === 'not-found') return null;
      throw error;
    }
  };
  return {
    Query: {
      envelopes: async (_, args, context) => {
        const principal = principalWith(context, 'envelope:read');
        const first = args.first ?? 20;
        if (first < 1 || first > 100) throw badInput('first must be between 1 and 100.');
        if ((args.after?.length ?? 0) > 200 || (args.q?.length ?? 0) > 200) throw badInput('after and q are at most 200 characters.');
        if (args.status && !(ENVELOPE_STATUSES as readonly string[]).includes(args.status)) throw badInput(`status must be one of ${ENVELOPE_STATUSES.join(', ')}.`);
        const page = await envelopes.list(principal, {
          limit: first,
          cursor: args.after ?? undefined,
          status: args.status ?? undefined,
          q: args.q ?? undefined,
          testMode: args.testMode ?? undefined,
        });
        return { nodes: page.data.map(toNode), hasMore: page.hasMore, nextCursor: page.nextCursor };
      },
      envelope: async (_, args, context) => one(principalWith(context, 'envelope:read'), args.id),
    },
    Envelope: {
      template: (envelope) => envelope.templateRef,
      __resolveReference: async (ref, context) => one(principalWith(context, 'envelope:read'), ref.id),
    },
  };
}

function badInput(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });
}
