import { createHash } from 'node:crypto';
import { parseCheckpoint } from './checkpoint.ts';
import { leafHash } from './merkle.ts';
import { openNote, parseVerifierKey } from './note.ts';
import { verifyInclusion } from './verify.ts';

/** keys.json as Sigil publishes it (`/.well-known/sigil/keys.json`). */
export interface KeySet {
  keys: Array<{ kid: string; verifierKey: string; notBefore: string; notAfter: string | null }>;
}

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface Verdict {
  /** `verified`: every check holds; `pending`: recorded, no anchor covers it yet; `failed`: a check does not hold. */
  outcome: 'verified' | 'pending' | 'failed';
  sha256: string;
  checks: Check[];
  envelope?: { id: string; status: string; completedAt: string | null; testMode: boolean };
  document?: string;
}

interface VerifyAnswer {
  envelope: Verdict['envelope'];
  document?: string;
  leaf: string;
  leafData: string;
  leafIndex: number;
  treeSize: number | null;
  proof: string[];
  anchor: { sequence: number; treeSize: number; root: string; checkpoint: string; kid: string; createdAt: string } | null;
  pending?: boolean;
}

/**
 * Verifies a document the way anyone can, trusting the service for nothing but availability: the file's SHA-256 is
 * looked up, then the leaf is re-hashed, the inclusion proof walked to the anchor's root, and the anchor's checkpoint
 * opened with the key set (ideally one the caller pinned, not one fetched at the same time).
 */
export async function verifyDocument(input: { file: Uint8Array; baseUrl: string; keys: KeySet; fetch?: typeof fetch }): Promise<Verdict> {
  const sha256 = createHash('sha256').update(input.file).digest('hex');
  const checks: Check[] = [];
  const verdict = (outcome?: Verdict['outcome'], extra: Partial<Verdict> = {}): Verdict => ({ outcome: outcome ?? (checks.every((c) => c.ok) ? 'verified' : 'failed'), sha256, checks, ...extra });
  const answer = await (input.fetch ?? fetch)(new URL('/v1/public/verify', input.baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sha256 }),
    signal: AbortSignal.timeout(30_000),
  });
  if (answer.status === 404) {
    checks.push({ name: 'recorded', ok: false, detail: 'no sealed document or certificate with this SHA-256 is in the log' });
    return verdict('failed');
  }
  if (!answer.ok) throw new Error(`the verification service answered ${answer.status}`);
  const body = (await answer.json()) as VerifyAnswer;
  const extra = { envelope: body.envelope, document: body.document };

  const leafData = Buffer.from(body.leafData, 'base64');
  const leaf = parseLeaf(leafData);
  checks.push({ name: 'leaf names this file', ok: leaf?.sha256 === sha256, detail: leaf ? `leaf of ${leaf.document} of ${leaf.envelope}, sealed ${leaf.sealedAt}` : 'the leaf data is not the documented JSON' });
  checks.push({ name: 'leaf hash', ok: leafHash(leafData).toString('hex') === body.leaf, detail: 'SHA-256(0x00 || leafData) equals the leaf' });
  if (!body.anchor) {
    checks.push({ name: 'anchored', ok: true, detail: 'recorded; no signed anchor covers it yet (anchors follow within a minute)' });
    return verdict(checks.every((c) => c.ok) ? 'pending' : 'failed', extra);
  }
  const anchor = body.anchor;
  let opened: ReturnType<typeof openNote> | undefined;
  const key = input.keys.keys.find((k) => k.kid === anchor.kid);
  try {
    opened = openNote(anchor.checkpoint, input.keys.keys.map((k) => parseVerifierKey(k.verifierKey)));
  } catch (error) {
    checks.push({ name: 'checkpoint signature', ok: false, detail: (error as Error).message });
  }
  if (opened) {
    const inPeriod = key !== undefined && Date.parse(key.notBefore) <= Date.parse(anchor.createdAt) && (key.notAfter === null || Date.parse(anchor.createdAt) <= Date.parse(key.notAfter));
    checks.push({ name: 'checkpoint signature', ok: opened.verifiedBy.includes(anchor.kid) && inPeriod, detail: `signed by ${anchor.kid}${inPeriod ? ', within the key\'s validity period' : ': not a key of the key set valid then'}` });
    const checkpoint = safe(() => parseCheckpoint(opened.text));
    const matches = checkpoint !== undefined && checkpoint.treeSize === anchor.treeSize && checkpoint.root.toString('hex') === anchor.root;
    checks.push({ name: 'checkpoint is the anchor', ok: matches, detail: checkpoint ? `${checkpoint.origin}, ${checkpoint.treeSize} leaves` : 'malformed checkpoint' });
    const proved = checkpoint !== undefined && verifyInclusion(body.leafIndex, checkpoint.treeSize, Buffer.from(body.leaf, 'hex'), body.proof.map((p) => Buffer.from(p, 'hex')), checkpoint.root);
    checks.push({ name: 'inclusion proof', ok: proved, detail: `leaf ${body.leafIndex} of ${anchor.treeSize}, ${body.proof.length} hashes to the signed root` });
  }
  return verdict(undefined, extra);
}

function parseLeaf(data: Buffer): { sha256: string; envelope: string; document: string; sealedAt: string } | undefined {
  return safe(() => JSON.parse(data.toString('utf8')) as { sha256: string; envelope: string; document: string; sealedAt: string });
}

function safe<T>(run: () => T): T | undefined {
  try {
    return run();
  } catch {
    return undefined;
  }
}
