import { nodeHash, type Hash } from './merkle.ts';

/**
 * Proof verification as RFC 9162 sections 2.1.3.2 and 2.1.4.2 give it: iterative bit arithmetic, deliberately not
 * the recursive definitions the proofs are built from, so each checks the other.
 */
export function verifyInclusion(leafIndex: number, treeSize: number, leaf: Uint8Array, proof: Uint8Array[], root: Uint8Array): boolean {
  if (!(leafIndex >= 0 && leafIndex < treeSize)) return false;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r: Uint8Array = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && Buffer.from(r).equals(Buffer.from(root));
}

export function verifyConsistency(firstSize: number, secondSize: number, firstRoot: Uint8Array, secondRoot: Uint8Array, proof: Uint8Array[]): boolean {
  if (firstSize <= 0 || firstSize > secondSize) return false;
  if (firstSize === secondSize) return proof.length === 0 && Buffer.from(firstRoot).equals(Buffer.from(secondRoot));
  if (proof.length === 0) return false;
  const path = [...proof];
  // When the first tree is a perfect subtree of the second, its root is the path's implicit first element.
  if (isPowerOfTwo(firstSize)) path.unshift(firstRoot);
  let fn = firstSize - 1;
  let sn = secondSize - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr: Hash = Buffer.from(path[0] as Uint8Array);
  let sr: Hash = Buffer.from(path[0] as Uint8Array);
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && fr.equals(Buffer.from(firstRoot)) && sr.equals(Buffer.from(secondRoot));
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}
