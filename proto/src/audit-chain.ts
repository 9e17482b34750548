import { createHash } from 'node:crypto';
import { canonicalize } from 'json-canonicalize';

/**
 * The audit trail's hash rule (api-decisions.md, "Evidence"; docs/evidence.md), fixed so anyone can verify a trail:
 *   hash = hex(SHA-256(UTF-8(JCS(item without "hash"))))
 * with JCS the JSON Canonicalization Scheme (RFC 8785). The item includes `prevHash`; the first item's is 64 zeros.
 */
export const GENESIS_HASH = '0'.repeat(64);

export interface AuditItem {
  seq: number;
  type: string;
  at: string;
  actor: Record<string, unknown>;
  data: Record<string, unknown>;
  prevHash: string;
  hash: string;
}

export function auditHash(item: Omit<AuditItem, 'hash'>): string {
  const { hash: _ignored, ...rest } = item as AuditItem;
  return createHash('sha256').update(canonicalize(rest), 'utf8').digest('hex');
}

export interface ChainCheck {
  valid: boolean;
  /** The last item's hash (of the items given), or the genesis hash for none. */
  head: string;
  length: number;
  /** The first `seq` whose link or hash does not hold, when one does not. */
  firstInvalidSeq?: number;
}

/** Verifies a whole trail in `seq` order: numbering from 1 without gaps, each `prevHash` the previous hash, each hash recomputed. */
export function verifyChain(items: readonly AuditItem[]): ChainCheck {
  let previous = GENESIS_HASH;
  for (const [index, item] of items.entries()) {
    if (item.seq !== index + 1 || item.prevHash !== previous || auditHash(item) !== item.hash) {
      return { valid: false, head: items.at(-1)?.hash ?? GENESIS_HASH, length: items.length, firstInvalidSeq: item.seq };
    }
    previous = item.hash;
  }
  return { valid: true, head: previous, length: items.length };
}
