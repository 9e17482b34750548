import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GENESIS_HASH, auditHash, verifyChain, type AuditItem } from '../src/audit-chain.ts';

function chain(n: number): AuditItem[] {
  const items: AuditItem[] = [];
  let prevHash = GENESIS_HASH;
  for (let seq = 1; seq <= n; seq++) {
    const body = { seq, type: seq === 1 ? 'envelope.created' : 'recipient.viewed', at: `2026-11-24T10:00:0${seq}.000Z`, actor: { kind: 'system' }, data: { n: seq, nested: { b: 2, a: 1 } }, prevHash };
    const hash = auditHash(body);
    items.push({ ...body, hash });
    prevHash = hash;
  }
  return items;
}

describe('the audit hash rule', () => {
  it('hashes the RFC 8785 canonical JSON of the item without its hash', () => {
    const item = { seq: 1, type: 'envelope.created', at: '2026-11-24T10:00:00.000Z', actor: { kind: 'system' }, data: { b: 'é', a: 1e21 }, prevHash: GENESIS_HASH };
    const canonical = '{"actor":{"kind":"system"},"at":"2026-11-24T10:00:00.000Z","data":{"a":1e+21,"b":"é"},"prevHash":"' + GENESIS_HASH + '","seq":1,"type":"envelope.created"}';
    expect(auditHash(item)).toBe(createHash('sha256').update(canonical, 'utf8').digest('hex'));
    expect(auditHash({ ...item, hash: 'ignored' } as never)).toBe(auditHash(item));
  });

  it('verifies a chain, and names the first item that breaks it', () => {
    const items = chain(5);
    expect(verifyChain(items)).toEqual({ valid: true, head: items[4]!.hash, length: 5 });
    const edited = items.map((i) => (i.seq === 3 ? { ...i, data: { n: 99 } } : i));
    expect(verifyChain(edited)).toMatchObject({ valid: false, firstInvalidSeq: 3 });
    const relinked = items.filter((i) => i.seq !== 2);
    expect(verifyChain(relinked)).toMatchObject({ valid: false, firstInvalidSeq: 3 });
    expect(verifyChain([])).toEqual({ valid: true, head: GENESIS_HASH, length: 0 });
  });
});
