import { createHash } from 'node:crypto';

/**
 * RFC 6962 Merkle trees (section 2.1) over a log whose complete subtrees are stored.
 *
 * A perfect subtree is named by its level and index: `{ level: L, index: i }` covers the leaves
 * `[i * 2^L, (i + 1) * 2^L)`; level 0 is the leaf hashes. Every perfect subtree is created (and stored) the moment
 * its last leaf is appended, so any range of the log is a handful of stored nodes, and a root or a proof costs
 * O(log n) reads, never a recomputation of the tree.
 */
export interface NodeId {
  level: number;
  index: number;
}

export type Hash = Buffer;

export function leafHash(data: Uint8Array): Hash {
  return createHash('sha256').update(Buffer.of(0)).update(data).digest();
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Hash {
  return createHash('sha256').update(Buffer.of(1)).update(left).update(right).digest();
}

/** The hash of an empty tree (RFC 6962: SHA-256 of nothing). */
export const EMPTY_ROOT: Hash = createHash('sha256').digest();

/** The perfect subtrees that make up the leaves `[start, end)`, left to right (largest aligned blocks first). */
export function perfectSubtrees(start: number, end: number): NodeId[] {
  const nodes: NodeId[] = [];
  let at = start;
  while (at < end) {
    let level = 0;
    while (at % 2 ** (level + 1) === 0 && at + 2 ** (level + 1) <= end) level++;
    nodes.push({ level, index: at / 2 ** level });
    at += 2 ** level;
  }
  return nodes;
}

/** The root of a range from the hashes of its perfect subtrees (left to right): folded from the right, as RFC 6962 splits. */
export function foldSubtrees(hashes: Hash[]): Hash {
  if (hashes.length === 0) return EMPTY_ROOT;
  let root = hashes[hashes.length - 1] as Hash;
  for (let i = hashes.length - 2; i >= 0; i--) root = nodeHash(hashes[i] as Hash, root);
  return root;
}

/** The largest power of two smaller than n (n > 1). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * What appending the leaf at `index` creates: the leaf itself, then one parent for every perfect subtree its arrival
 * completes. `frontier` holds the hashes of the current tree's perfect subtrees (left to right, the root's
 * decomposition); the new frontier and the nodes to store are returned. No reads are needed.
 */
export function appendLeaf(frontier: Hash[], index: number, hash: Hash): { frontier: Hash[]; created: Array<NodeId & { hash: Hash }> } {
  const next = [...frontier, hash];
  const created: Array<NodeId & { hash: Hash }> = [{ level: 0, index, hash }];
  let level = 0;
  let at = index;
  while (at % 2 === 1) {
    const right = next.pop() as Hash;
    const left = next.pop() as Hash;
    const parent = nodeHash(left, right);
    next.push(parent);
    level++;
    at = Math.floor(at / 2);
    created.push({ level, index: at, hash: parent });
  }
  return { frontier: next, created };
}

export function nodeKey(node: NodeId): string {
  return `${node.level}:${node.index}`;
}
