import { appendLeaf, leafHash, nodeKey, type Hash, type NodeId } from '@sigil/tlog/merkle';
import type { NodeReader } from '@sigil/tlog/proofs';
import type { Db, Tx } from '../db.ts';

export type LogMode = 'live' | 'test';
export const LOG_MODES: readonly LogMode[] = ['live', 'test'];

/** One document entering a log; `leafData` is what the leaf hashes (docs/evidence.md, "The transparency log"). */
export interface LogEntry {
  envelopeId: string;
  organizationId: string;
  document: 'sealed' | 'certificate';
  sha256: string;
  sealedAt: string;
  completedAt: string | null;
  testMode: boolean;
}

export function leafDataOf(entry: LogEntry): Buffer {
  // Member order is fixed by the design doc; verifiers re-hash these exact bytes.
  return Buffer.from(JSON.stringify({ v: 1, envelope: entry.envelopeId, document: entry.document, sha256: entry.sha256, sealedAt: entry.sealedAt, testMode: entry.testMode }), 'utf8');
}

export interface LogHeadState {
  size: number;
  frontier: Hash[];
}

/** Locks a mode's head for the rest of the transaction: appends and anchors of one log run one after the other. */
export async function lockHead(tx: Tx, mode: LogMode): Promise<LogHeadState> {
  const [row] = await tx.$queryRawUnsafe<Array<{ size: bigint; frontier: Uint8Array[] }>>('SELECT size, frontier FROM log_heads WHERE mode = $1 FOR UPDATE', mode);
  if (!row) throw new Error(`the ${mode} log has no head row`);
  return { size: Number(row.size), frontier: row.frontier.map((h) => Buffer.from(h)) };
}

/**
 * Appends documents to their mode's log in one transaction: each gets the next index, and every perfect subtree its
 * arrival completes is stored. A document already in the log (same SHA-256) is left as it is.
 */
export async function appendToLog(db: Db, mode: LogMode, entries: LogEntry[]): Promise<number[]> {
  return db.$transaction(
    async (tx) => {
      const head = await lockHead(tx, mode);
      const found = await tx.$queryRawUnsafe<Array<{ document_sha256: string; idx: bigint }>>('SELECT document_sha256, idx FROM log_leaves WHERE document_sha256 = ANY($1::text[])', entries.map((e) => e.sha256));
      const existing = new Map(found.map((row) => [row.document_sha256, Number(row.idx)]));
      const leaves: Array<{ index: number; data: Buffer; entry: LogEntry }> = [];
      const nodes: Array<{ level: number; index: number; hash: Buffer }> = [];
      const indexes = entries.map((entry) => {
        const known = existing.get(entry.sha256);
        if (known !== undefined) return known;
        const data = leafDataOf(entry);
        const index = head.size++;
        const appended = appendLeaf(head.frontier, index, leafHash(data));
        head.frontier = appended.frontier;
        nodes.push(...appended.created);
        leaves.push({ index, data, entry });
        existing.set(entry.sha256, index);
        return index;
      });
      if (leaves.length === 0) return indexes;
      // Three statements whatever the batch: the leaves, the subtrees they complete, the head.
      await tx.$executeRawUnsafe(
        'INSERT INTO log_leaves (mode, idx, leaf_data, document_sha256, envelope_id, organization_id, document, completed_at) SELECT $1, * FROM unnest($2::bigint[], $3::bytea[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])',
        mode,
        leaves.map((l) => l.index),
        leaves.map((l) => l.data),
        leaves.map((l) => l.entry.sha256),
        leaves.map((l) => l.entry.envelopeId),
        leaves.map((l) => l.entry.organizationId),
        leaves.map((l) => l.entry.document),
        leaves.map((l) => (l.entry.completedAt ? new Date(l.entry.completedAt) : null)),
      );
      await tx.$executeRawUnsafe(
        'INSERT INTO log_nodes (mode, level, idx, hash) SELECT $1, * FROM unnest($2::int[], $3::bigint[], $4::bytea[])',
        mode,
        nodes.map((n) => n.level),
        nodes.map((n) => n.index),
        nodes.map((n) => n.hash),
      );
      await tx.$executeRawUnsafe('UPDATE log_heads SET size = $2, frontier = $3 WHERE mode = $1', mode, head.size, head.frontier);
      return indexes;
    },
  );
}

/** Reads the stored subtrees a proof needs, in one query. */
export function nodeReader(db: Db | Tx, mode: LogMode): NodeReader {
  return async (nodes: NodeId[]) => {
    const rows = await db.$queryRawUnsafe<Array<{ level: number; idx: bigint; hash: Uint8Array }>>(
      'SELECT n.level, n.idx, n.hash FROM log_nodes n JOIN unnest($2::int[], $3::bigint[]) AS w(level, idx) ON n.level = w.level AND n.idx = w.idx WHERE n.mode = $1',
      mode,
      nodes.map((n) => n.level),
      nodes.map((n) => BigInt(n.index)),
    );
    return new Map(rows.map((r) => [nodeKey({ level: Number(r.level), index: Number(r.idx) }), Buffer.from(r.hash)]));
  };
}
