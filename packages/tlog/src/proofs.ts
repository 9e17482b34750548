import { foldSubtrees, nodeKey, perfectSubtrees, splitPoint, type Hash, type NodeId } from './merkle.ts';

/** A range of leaves `[start, end)` whose Merkle tree hash (MTH) is one element of a proof. */
export interface LeafRange {
  start: number;
  end: number;
}

/** Reads stored perfect subtrees: one call for the whole proof. Missing nodes are an error of the store. */
export type NodeReader = (nodes: NodeId[]) => Promise<Map<string, Hash>>;

/** RFC 6962 2.1.1: the audit path of leaf `m` in the tree of the first `n` leaves, as ranges, leaf to root. */
export function inclusionRanges(m: number, n: number): LeafRange[] {
  if (!(Number.isInteger(m) && Number.isInteger(n) && m >= 0 && m < n)) throw new RangeError(`no leaf ${m} in a tree of ${n}`);
  return path(m, 0, n);
}

function path(m: number, start: number, end: number): LeafRange[] {
  if (end - start === 1) return [];
  const k = splitPoint(end - start);
  if (m < start + k) return [...path(m, start, start + k), { start: start + k, end }];
  return [...path(m, start + k, end), { start, end: start + k }];
}

/** RFC 6962 2.1.2: the consistency proof between the trees of the first `m` and the first `n` leaves, as ranges. */
export function consistencyRanges(m: number, n: number): LeafRange[] {
  if (!(Number.isInteger(m) && Number.isInteger(n) && m > 0 && m <= n)) throw new RangeError(`no consistency proof from ${m} to ${n}`);
  if (m === n) return [];
  return subproof(m, 0, n, true);
}

function subproof(m: number, start: number, end: number, whole: boolean): LeafRange[] {
  const n = end - start;
  if (m === n) return whole ? [] : [{ start, end }];
  const k = splitPoint(n);
  if (m <= k) return [...subproof(m, start, start + k, whole), { start: start + k, end }];
  return [...subproof(m - k, start + k, end, false), { start, end: start + k }];
}

/** The hashes of ranges, from one read of the perfect subtrees they are made of. */
export async function rangeHashes(ranges: LeafRange[], read: NodeReader): Promise<Hash[]> {
  const parts = ranges.map((r) => perfectSubtrees(r.start, r.end));
  const wanted = new Map<string, NodeId>();
  for (const node of parts.flat()) wanted.set(nodeKey(node), node);
  const found = wanted.size ? await read([...wanted.values()]) : new Map<string, Hash>();
  return parts.map((nodes) =>
    foldSubtrees(
      nodes.map((node) => {
        const hash = found.get(nodeKey(node));
        if (!hash) throw new Error(`the log has no node ${nodeKey(node)}`);
        return hash;
      }),
    ),
  );
}

export async function inclusionProof(m: number, n: number, read: NodeReader): Promise<Hash[]> {
  return rangeHashes(inclusionRanges(m, n), read);
}

export async function consistencyProof(m: number, n: number, read: NodeReader): Promise<Hash[]> {
  return rangeHashes(consistencyRanges(m, n), read);
}

/** The root of the tree of the first `n` leaves. */
export async function treeRoot(n: number, read: NodeReader): Promise<Hash> {
  const [root] = await rangeHashes([{ start: 0, end: n }], read);
  return root as Hash;
}
