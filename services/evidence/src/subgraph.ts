import { readFileSync } from 'node:fs';
import { GraphQLError, GraphQLScalarType, principalWith, type SubgraphContext } from '@sigil/kit/graphql';
import type { AuditService } from './audit.ts';
import type { Db } from './db.ts';
import type { Resolvers } from './gen/graphql.ts';
import { anchorView } from './log/anchors.ts';
import type { PublicLog } from './log/public.ts';
import type { LogMode } from './log/store.ts';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

/** What the Envelope resolvers of this subgraph get: the reference the gateway passes. */
export type EnvelopeRef = { id: string };
export type AnchorNode = ReturnType<typeof anchorView>;

const JSONScalar = new GraphQLScalarType({ name: 'JSON', serialize: (value) => value, parseValue: (value) => value });

export function createResolvers(deps: { db: Db; audit: AuditService; publicLog: PublicLog }): Resolvers {
  const signedIn = (context: SubgraphContext) => {
    if (!context.principal) throw new GraphQLError('A valid API key or dashboard session is required.', { extensions: { code: 'UNAUTHENTICATED' } });
  };
  const modeOf = (mode: string | null | undefined): LogMode => {
    if (mode !== 'live' && mode !== 'test') throw new GraphQLError('mode must be live or test.', { extensions: { code: 'BAD_USER_INPUT' } });
    return mode;
  };
  return {
    JSON: JSONScalar,
    Query: {
      anchors: async (_, args, context) => {
        signedIn(context);
        const first = args.first ?? 20;
        if (first < 1 || first > 100) throw new GraphQLError('first must be between 1 and 100.', { extensions: { code: 'BAD_USER_INPUT' } });
        const page = await deps.publicLog.listAnchors({ mode: modeOf(args.mode), limit: first, cursor: args.after ?? undefined });
        return { nodes: page.data, hasMore: page.hasMore, nextCursor: page.nextCursor };
      },
      recentActivity: async (_, args, context) => {
        const principal = principalWith(context, 'envelope:read');
        const first = args.first ?? 20;
        if (first < 1 || first > 100) throw new GraphQLError('first must be between 1 and 100.', { extensions: { code: 'BAD_USER_INPUT' } });
        const entries = await deps.audit.recent(principal, { limit: first, testMode: args.testMode ?? principal.mode === 'test' });
        return entries.map(({ envelopeId, ...entry }) => ({ ...entry, envelope: { id: envelopeId } }));
      },
      latestAnchor: async (_, args, context) => {
        signedIn(context);
        const row = await deps.publicLog.newestAnchor(modeOf(args.mode));
        return row ? anchorView(row) : null;
      },
    },
    Envelope: {
      __resolveReference: (ref) => ({ id: ref.id }),
      events: async (envelope, args, context) => {
        const first = args.first ?? 50;
        if (first < 1 || first > 500) throw new GraphQLError('first must be between 1 and 500.', { extensions: { code: 'BAD_USER_INPUT' } });
        const page = await deps.audit.list(principalWith(context, 'envelope:read'), envelope.id, { limit: first, cursor: args.after ?? undefined });
        return { entries: page.data, hasMore: page.hasMore, nextCursor: page.nextCursor, chain: { ...page.chain, firstInvalidSeq: page.chain.firstInvalidSeq ?? null } };
      },
      sealing: async (envelope, _args, context) => {
        const principal = principalWith(context, 'envelope:read');
        // Scoped like the trail (organization; an API key's own mode), but null rather than an error before the first
        // audit entry: an envelope just created has no seal yet, and its page must still read.
        const seal = await deps.db.seal.findFirst({
          where: { envelopeId: envelope.id, organizationId: principal.organizationId, ...(principal.kind === 'session' ? {} : { testMode: principal.mode === 'test' }) },
        });
        if (!seal) return null;
        const leaves = await deps.db.logLeaf.findMany({ where: { envelopeId: envelope.id }, orderBy: [{ mode: 'asc' }, { idx: 'asc' }] });
        const anchors = new Map<string, AnchorNode | null>();
        for (const mode of new Set(leaves.map((l) => l.mode))) {
          const row = await deps.publicLog.newestAnchor(mode as LogMode);
          anchors.set(mode, row ? anchorView(row) : null);
        }
        return {
          status: seal.status,
          attempts: seal.attempts,
          lastError: seal.lastError,
          sealedSha256: seal.sealedSha256,
          certificateSha256: seal.certificateSha256,
          leaves: leaves.map((leaf) => {
            const anchor = anchors.get(leaf.mode) ?? null;
            return { document: leaf.document, sha256: leaf.documentSha256, mode: leaf.mode, leafIndex: Number(leaf.idx), anchor: anchor && anchor.treeSize > Number(leaf.idx) ? anchor : null };
          }),
        };
      },
    },
  };
}
