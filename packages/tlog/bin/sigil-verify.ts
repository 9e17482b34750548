#!/usr/bin/env node
// sigil-verify: checks a sealed PDF or a certificate of completion against Sigil's transparency log.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { verifyDocument, type KeySet } from '../src/verify-document.ts';

const USAGE = `usage: sigil-verify <file.pdf> [--url <sigil url>] [--keys <keys.json>] [--json]

  Hashes the file, looks it up (POST /v1/public/verify), re-hashes the leaf, walks the inclusion
  proof to the anchor's root and checks the anchor's signed checkpoint against the key set.
  --url   where Sigil answers (default: $SIGIL_URL)
  --keys  a keys.json you keep (pinned); without it the service's own /.well-known/sigil/keys.json is used
  --json  print the verdict as JSON
Exit status: 0 verified, 1 a check failed or the file is unknown, 2 recorded but not anchored yet, 64 usage.`;

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { url: { type: 'string' }, keys: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean' } } });
  const baseUrl = values.url ?? process.env.SIGIL_URL;
  if (values.help || positionals.length !== 1 || !baseUrl) {
    console.error(USAGE);
    return values.help ? 0 : 64;
  }
  const file = await readFile(positionals[0] as string);
  const keys = values.keys ? (JSON.parse(await readFile(values.keys, 'utf8')) as KeySet) : await fetchKeys(baseUrl);
  const verdict = await verifyDocument({ file, baseUrl, keys });
  if (values.json) console.log(JSON.stringify(verdict, null, 2));
  else {
    console.log(`file      ${positionals[0]}\nsha256    ${verdict.sha256}`);
    if (verdict.envelope) console.log(`envelope  ${verdict.envelope.id} (${verdict.document ?? 'document'}), ${verdict.envelope.status} ${verdict.envelope.completedAt ?? ''}${verdict.envelope.testMode ? '  [TEST MODE: no legal effect]' : ''}`);
    for (const c of verdict.checks) console.log(`${c.ok ? 'ok  ' : 'FAIL'}  ${c.name}: ${c.detail}`);
    if (!values.keys) console.log('note      the key set came from the same service; pin a copy with --keys for an independent check');
    console.log(verdict.outcome === 'verified' ? 'VERIFIED' : verdict.outcome === 'pending' ? 'PENDING: recorded, not anchored yet; try again in a minute' : 'NOT VERIFIED');
  }
  return verdict.outcome === 'verified' ? 0 : verdict.outcome === 'pending' ? 2 : 1;
}

async function fetchKeys(baseUrl: string): Promise<KeySet> {
  const res = await fetch(new URL('/.well-known/sigil/keys.json', baseUrl), { signal: AbortSignal.timeout(30_000) });
  if (!res.ok) throw new Error(`keys.json answered ${res.status}`);
  return (await res.json()) as KeySet;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`sigil-verify: ${(error as Error).message ?? String(error)}`);
    process.exit(1);
  },
);
