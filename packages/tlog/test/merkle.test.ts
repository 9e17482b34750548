import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { appendLeaf, leafHash, nodeHash, nodeKey, type Hash, type NodeId } from '../src/merkle.ts';
import { consistencyProof, inclusionProof, treeRoot, type NodeReader } from '../src/proofs.ts';
import { verifyConsistency, verifyInclusion } from '../src/verify.ts';

/** RFC 6962's MTH straight from its definition, over every leaf: the reference the stored-node arithmetic must match. */
function referenceRoot(leaves: Buffer[]): Hash {
  if (leaves.length === 0) return createHash('sha256').digest();
  if (leaves.length === 1) return leafHash(leaves[0] as Buffer);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(referenceRoot(leaves.slice(0, k)), referenceRoot(leaves.slice(k)));
}

const data = (i: number) => Buffer.from(`leaf ${i}`);

/** A log in memory, built the way the service builds it: append by append, storing the nodes each append creates. */
function buildLog(size: number) {
  const nodes = new Map<string, Hash>();
  let frontier: Hash[] = [];
  let reads = 0;
  for (let i = 0; i < size; i++) {
    const appended = appendLeaf(frontier, i, leafHash(data(i)));
    frontier = appended.frontier;
    for (const node of appended.created) nodes.set(nodeKey(node), node.hash);
  }
  const read: NodeReader = async (ids: NodeId[]) => {
    reads += ids.length;
    return new Map(ids.map((id) => [nodeKey(id), nodes.get(nodeKey(id)) as Hash]));
  };
  return { nodes, frontier, read, reads: () => reads };
}

describe('RFC 6962 trees from stored subtrees', () => {
  const SIZE = 300;
  const log = buildLog(SIZE);
  const leaves = Array.from({ length: SIZE }, (_, i) => data(i));

  test('RFC 6962 test vector: the root of the empty-leaf tree', () => {
    // certificate-transparency-go's merkle tests: the hash of the single empty leaf.
    expect(leafHash(Buffer.alloc(0)).toString('hex')).toBe('6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d');
  });

  test('every root from 1 to 300 leaves equals the reference definition', async () => {
    for (let n = 1; n <= SIZE; n++) expect((await treeRoot(n, log.read)).equals(referenceRoot(leaves.slice(0, n)))).toBe(true);
  });

  test('every inclusion proof of every tree size from 1 to 300 verifies, and a wrong one does not', async () => {
    for (let n = 1; n <= SIZE; n++) {
      const root = referenceRoot(leaves.slice(0, n));
      for (let m = 0; m < n; m++) {
        const proof = await inclusionProof(m, n, log.read);
        expect(verifyInclusion(m, n, leafHash(data(m)), proof, root)).toBe(true);
        expect(proof.length).toBeLessThanOrEqual(Math.ceil(Math.log2(n)));
        if (n > 1) expect(verifyInclusion(m, n, leafHash(data(m + 1)), proof, root)).toBe(false);
        if (proof.length > 0) expect(verifyInclusion(m, n, leafHash(data(m)), proof.slice(1), root)).toBe(false);
      }
    }
  });

  test('every consistency proof between tree sizes up to 300 verifies, and a forked tree does not', async () => {
    const roots = [Buffer.alloc(0), ...Array.from({ length: SIZE }, (_, i) => referenceRoot(leaves.slice(0, i + 1)))];
    const forked = referenceRoot([...leaves.slice(0, 10), Buffer.from('forged'), ...leaves.slice(11, 40)]);
    for (let n = 1; n <= SIZE; n++) {
      for (let m = 1; m <= n; m++) {
        const proof = await consistencyProof(m, n, log.read);
        expect(verifyConsistency(m, n, roots[m] as Hash, roots[n] as Hash, proof)).toBe(true);
        if (m < n && n > 2) expect(verifyConsistency(m, n, roots[m] as Hash, roots[n - 1] as Hash, proof)).toBe(false);
      }
    }
    for (let m = 11; m < 40; m++) expect(verifyConsistency(m, 40, roots[m] as Hash, forked, await consistencyProof(m, 40, log.read))).toBe(false);
  });

  test('a proof reads O(log n) stored nodes', async () => {
    const big = buildLog(5_000);
    const before = big.reads();
    await inclusionProof(1_234, 4_999, big.read);
    expect(big.reads() - before).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(5_000)));
  });
});
