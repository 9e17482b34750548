import { AppError, notFound } from '@sigil/kit/errors';
import { decodeCursor, toPage } from '@sigil/kit/pagination';
import { leafHash } from '@sigil/tlog/merkle';
import { consistencyProof, inclusionProof } from '@sigil/tlog/proofs';
import type { Db } from '../db.ts';
import { anchorView } from './anchors.ts';
import { nodeReader, type LogMode } from './store.ts';

/** The public side of the transparency log: anchors, keys, document verification and consistency proofs. */
export function createPublicLog({ db }: { db: Db }) {
  const anchorBySequence = async (sequence: number) => {
    const row = await db.logAnchor.findUnique({ where: { sequence: BigInt(sequence) } });
    if (!row) throw notFound(`Anchor ${sequence}`);
    return row;
  };

  /** The newest anchor of a log, or null before its first: it covers every leaf the log had when it was signed. */
  const newestAnchor = (mode: LogMode) => db.logAnchor.findFirst({ where: { mode }, orderBy: { sequence: 'desc' } });

  return {
    newestAnchor,

    async listAnchors(input: { mode: LogMode; limit: number; cursor?: string }) {
      const before = input.cursor ? Number(decodeCursor(input.cursor, 1)[0]) : undefined;
      const rows = await db.logAnchor.findMany({
        where: { mode: input.mode, ...(before !== undefined ? { sequence: { lt: BigInt(before) } } : {}) },
        orderBy: { sequence: 'desc' },
        take: input.limit + 1,
      });
      return toPage(rows, input.limit, anchorView, (row) => [Number(row.sequence)]);
    },

    async latestAnchor(mode: LogMode) {
      const row = await newestAnchor(mode);
      if (!row) throw notFound(`An anchor of the ${mode} log`);
      return anchorView(row);
    },

    async anchor(sequence: number) {
      return anchorView(await anchorBySequence(sequence));
    },

    async keys() {
      const rows = await db.anchorKey.findMany({ orderBy: { notBefore: 'asc' } });
      return {
        keys: rows.map((k) => ({
          kid: k.kid,
          kty: 'OKP' as const,
          crv: 'Ed25519' as const,
          x: Buffer.from(k.publicKey).toString('base64url'),
          alg: 'EdDSA' as const,
          use: 'sig' as const,
          notBefore: k.notBefore.toISOString(),
          notAfter: k.notAfter?.toISOString() ?? null,
          verifierKey: k.verifierKey,
        })),
      };
    },

    /** `POST /v1/public/verify`: the leaf of a document, its proof up to the newest anchor of its log, and that anchor. */
    async verify(sha256: string) {
      const leaf = await db.logLeaf.findUnique({ where: { documentSha256: sha256.toLowerCase() } });
      if (!leaf) throw notFound('A sealed document with this SHA-256');
      const mode = leaf.mode as LogMode;
      const index = Number(leaf.idx);
      const anchor = await newestAnchor(mode);
      const covered = anchor !== null && Number(anchor.treeSize) > index;
      const proof = covered ? await inclusionProof(index, Number(anchor.treeSize), nodeReader(db, mode)) : [];
      return {
        object: 'verification_result' as const,
        envelope: { id: leaf.envelopeId, status: 'completed', completedAt: leaf.completedAt?.toISOString() ?? null, testMode: mode === 'test' },
        document: leaf.document,
        mode,
        leaf: leafHash(leaf.leafData).toString('hex'),
        leafData: Buffer.from(leaf.leafData).toString('base64'),
        leafIndex: index,
        treeSize: covered ? Number(anchor.treeSize) : null,
        proof: proof.map((h) => h.toString('hex')),
        anchor: covered ? { ...anchorView(anchor) } : null,
        pending: !covered,
      };
    },

    /** RFC 6962 2.1.2 between two anchors of one log, so a monitor can check the log never forked. */
    async consistency(fromSequence: number, toSequence: number) {
      const [from, to] = [await anchorBySequence(fromSequence), await anchorBySequence(toSequence)];
      if (from.mode !== to.mode) throw new AppError('validation-failed', 'Both anchors must be of the same log.', { errors: [{ pointer: '/query/from', detail: `anchor ${fromSequence} is of the ${from.mode} log, anchor ${toSequence} of the ${to.mode} log` }] });
      if (from.treeSize > to.treeSize) throw new AppError('validation-failed', 'The first anchor must not be newer than the second.', { errors: [{ pointer: '/query/from', detail: `anchor ${fromSequence} covers ${from.treeSize} leaves, more than anchor ${toSequence}` }] });
      const proof = await consistencyProof(Number(from.treeSize), Number(to.treeSize), nodeReader(db, from.mode as LogMode));
      return { object: 'consistency_proof' as const, mode: from.mode, from: anchorView(from), to: anchorView(to), proof: proof.map((h) => h.toString('hex')) };
    },
  };
}

export type PublicLog = ReturnType<typeof createPublicLog>;
