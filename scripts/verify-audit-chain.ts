// Verifies an envelope's audit trail offline, with nothing but this file's rule (docs/evidence.md):
//   curl -s "$BASE/v1/envelopes/$ENV/events?limit=100" -H "Authorization: Bearer $KEY" > trail.json
//   node scripts/verify-audit-chain.ts trail.json        (or - for standard input)
// The input is the API's EnvelopeEventList (all pages' `data` concatenated when there are several) or a plain array of
// items. Exits 0 and prints the head when the chain holds; exits 1 naming the first bad seq otherwise.
import { readFileSync } from 'node:fs';
import { verifyChain, type AuditItem } from '@sigil/proto/audit-chain';

const source = process.argv[2] ?? '-';
const parsed = JSON.parse(readFileSync(source === '-' ? 0 : source, 'utf8')) as AuditItem[] | { data: AuditItem[] };
const items = Array.isArray(parsed) ? parsed : parsed.data;
const check = verifyChain([...items].sort((a, b) => a.seq - b.seq));
if (check.valid) {
  console.log(`valid: ${check.length} entries, head ${check.head}`);
} else {
  console.error(`invalid: the chain breaks at seq ${check.firstInvalidSeq} (${check.length} entries)`);
  process.exit(1);
}
