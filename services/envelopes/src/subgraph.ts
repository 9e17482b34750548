import { readFileSync } from 'node:fs';
import type { Principal } from '@sigil/kit/auth';
import { principalWith } from '@sigil/kit/graphql';
import type { EnvelopeService } from './envelopes.ts';
import type { SigningLinkService } from './signing-links.ts';
import { badInput } from './subgraph-input.ts';
import { createSigningLinkResolvers } from './subgraph-links.ts';
import { ENVELOPE_STATUSES, isRecipientsTurn, SEAL_STATUSES } from './state.ts';
import type { QueryEnvelopesArgs, Resolvers } from './gen/graphql.ts';
import type { EnvelopeView, RecipientView } from './views.ts';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

const ENVELOPE_ID = /^env_[A-Za-z0-9]{10,40}$/;

/** What the Envelope resolvers return: the API's envelope with a reference to its template, and whose turn it is. */
export type EnvelopeNode = Omit<EnvelopeView, 'recipients'> & {
  recipients: Array<RecipientView & { hasTurn: boolean }>;
  templateRef: { __typename: 'Template'; id: string };
};

const toNode = (envelope: EnvelopeView): EnvelopeNode => ({
  ...envelope,
  recipients: envelope.recipients.map((r) => ({ ...r, hasTurn: isRecipientsTurn(envelope.status, r.status) })),
  templateRef: { __typename: 'Template', id: envelope.template },
});

/** A list's mode: the one asked for, else a dashboard session's own (its `sigil-mode`); an API key's is fixed anyway. */
const listMode = (principal: Principal, testMode: boolean | null | undefined): boolean | undefined =>
  testMode ?? (principal.kind === 'session' ? principal.mode === 'test' : undefined);

/** The subgraph's resolvers over the same use cases as the REST handlers; `publicUrl` is where links' pages are. */
export function createResolvers({ envelopes, links, publicUrl }: { envelopes: EnvelopeService; links: SigningLinkService; publicUrl: string }): Resolvers {
  const linkResolvers = createSigningLinkResolvers(links, publicUrl);
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
        checkListFilters(args);
        const page = await envelopes.list(principal, {
          limit: first,
          cursor: args.after ?? undefined,
          status: args.status ?? undefined,
          seal: args.seal ?? undefined,
          template: args.template ?? undefined,
          q: args.q ?? undefined,
          testMode: listMode(principal, args.testMode),
          waitingSince: args.waitingSince ? moment(args.waitingSince, 'waitingSince') : undefined,
        });
        return { nodes: page.data.map(toNode), hasMore: page.hasMore, nextCursor: page.nextCursor };
      },
      envelopeCounts: async (_, args, context) => {
        const principal = principalWith(context, 'envelope:read');
        return envelopes.countByStatus(principal, { since: moment(args.since, 'since'), testMode: listMode(principal, args.testMode) });
      },
      envelope: async (_, args, context) => one(principalWith(context, 'envelope:read'), args.id),
      ...linkResolvers.Query,
    },
    SigningLink: linkResolvers.SigningLink,
    Envelope: {
      template: (envelope) => envelope.templateRef,
      __resolveReference: async (ref, context) => one(principalWith(context, 'envelope:read'), ref.id),
    },
  };
}

function checkListFilters(args: QueryEnvelopesArgs): void {
  if ([args.after, args.q, args.template].some((value) => (value?.length ?? 0) > 200)) throw badInput('after, q and template are at most 200 characters.');
  if (args.status && !(ENVELOPE_STATUSES as readonly string[]).includes(args.status)) throw badInput(`status must be one of ${ENVELOPE_STATUSES.join(', ')}.`);
  if (args.seal && !(SEAL_STATUSES as readonly string[]).includes(args.seal)) throw badInput(`seal must be one of ${SEAL_STATUSES.join(', ')}.`);
}

/** An ISO 8601 moment of an argument, or a BAD_USER_INPUT naming it. */
function moment(value: string, name: string): Date {
  const date = new Date(value);
  if (value.length > 40 || Number.isNaN(date.getTime())) throw badInput(`${name} must be an ISO 8601 date and time.`);
  return date;
}
