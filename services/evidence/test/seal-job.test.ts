// The seal job with a stand-in for the envelopes service: both documents enter the log before envelopes gets them,
// a redelivery after success changes nothing, and a seal that keeps failing becomes `failed` (told once) yet still
// seals when a later retry works; one that meets envelopes unavailable is never called failed.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument } from 'pdf-lib';
import type { ServiceRequest } from '@sigil/kit/auth';
import { newId } from '@sigil/kit/ids';
import { freshTestDatabase, silentLogger } from '@sigil/kit/testing';
import { createEvent } from '@sigil/proto/events';
import { createDb, type Db } from '../src/db.ts';
import { sealEnvelope, type SealDeps } from '../src/seal/seal-job.ts';

let db: Db;
let completedPdf: Buffer;
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Envelopes as the seal job sees it; `failFetches` answers `failStatus` (503) to that many document requests first. */
function fakeEnvelopes(options: { failFetches?: number; failStatus?: number; failHands?: number; unknown?: boolean } = {}) {
  const calls: Array<{ path: string; request: ServiceRequest }> = [];
  let failures = options.failFetches ?? 0;
  let handFailures = options.failHands ?? 0;
  const kept: Record<string, Buffer> = {};
  const client = async (path: string, request: ServiceRequest): Promise<Response> => {
    calls.push({ path, request });
    if (path.endsWith('/completed-document')) {
      if (options.unknown) return new Response('{"type":"https://sigil.dev/problems/not-found"}', { status: 404 });
      if (failures-- > 0) return new Response('busy', { status: options.failStatus ?? 503 });
      return new Response(new Uint8Array(completedPdf), { status: 200, headers: { 'content-type': 'application/pdf' } });
    }
    if (path.endsWith('/seal-failure')) return new Response(null, { status: 204 });
    if (path.endsWith('/sealed-document') && handFailures-- > 0) return new Response('busy', { status: 503 });
    kept[path.split('/').at(-1) as string] = Buffer.from(request.body as Uint8Array);
    return new Response(null, { status: 204 });
  };
  return { client, calls, kept };
}

const sealer = { seal: async (pdf: Buffer, reason: string) => Buffer.concat([pdf, Buffer.from(`\n% sealed: ${reason}\n`)]) };

function completed(testMode = false) {
  const envelopeId = newId('env');
  const envelope = { id: envelopeId, testMode, completedAt: '2026-11-25T09:00:00.000Z', recipients: [{ id: 'rcp_1', role: 'client', name: 'Ada', email: 'ada@example.com' }] };
  return createEvent('envelope.completed', 'org_seal', { envelopeId, testMode, envelope } as never);
}

const SEALED_AT = new Date('2031-03-04T05:06:07.000Z');
const deps = (envelopes: ReturnType<typeof fakeEnvelopes>): SealDeps => ({ db, sealer, envelopes: envelopes.client, log: silentLogger(), publicUrl: 'https://sigil.test', failedAfter: 3, clock: () => SEALED_AT });

beforeAll(async () => {
  db = createDb(await freshTestDatabase('sigil_evidence_test_seal', path.resolve(import.meta.dirname, '../../../prisma/evidence/migrations')));
  const doc = await PDFDocument.create();
  doc.addPage([612, 792]);
  completedPdf = Buffer.from(await doc.save());
});
afterAll(async () => db?.$disconnect());

describe('sealing a completed envelope', () => {
  it('logs both documents in the mode\'s tree, hands them to envelopes (certificate first), and ignores a redelivery', async () => {
    const envelopes = fakeEnvelopes();
    const event = completed(true);
    await sealEnvelope(deps(envelopes), event);
    expect(envelopes.calls.map((c) => c.path.split('/').at(-1))).toEqual(['completed-document', 'certificate-document', 'sealed-document']);
    const leaves = await db.logLeaf.findMany({ where: { envelopeId: event.data.envelopeId as string }, orderBy: { idx: 'asc' } });
    expect(leaves.map((l) => [l.mode, l.document, l.documentSha256])).toEqual([
      ['test', 'sealed', sha(envelopes.kept['sealed-document']!)],
      ['test', 'certificate', sha(envelopes.kept['certificate-document']!)],
    ]);
    // The leaves say when they were sealed by the injected clock.
    expect(leaves.map((l) => JSON.parse(Buffer.from(l.leafData).toString('utf8')).sealedAt)).toEqual([SEALED_AT.toISOString(), SEALED_AT.toISOString()]);
    expect(await db.seal.findUnique({ where: { envelopeId: event.data.envelopeId as string } })).toMatchObject({ status: 'sealed', attempts: 1, lastError: null });

    await sealEnvelope(deps(envelopes), event);
    expect(envelopes.calls).toHaveLength(3);
    expect(await db.logLeaf.count({ where: { envelopeId: event.data.envelopeId as string } })).toBe(2);
  });

  it('retries an attempt that failed after logging its documents with the same bytes: two leaves, one sealed document', async () => {
    // A real seal differs at each call (its signing time): this sealer numbers its seals to be as unrepeatable.
    let seals = 0;
    const unrepeatable = { seal: async (pdf: Buffer, reason: string) => Buffer.concat([pdf, Buffer.from(`\n% seal ${++seals}: ${reason}\n`)]) };
    const envelopes = fakeEnvelopes({ failHands: 1 });
    const event = completed();
    const envelopeId = event.data.envelopeId as string;
    await expect(sealEnvelope({ ...deps(envelopes), sealer: unrepeatable }, event)).rejects.toThrow(/The envelopes service is unavailable \(it answered 503 for the sealed document of env_/);
    expect(await db.logLeaf.count({ where: { envelopeId } })).toBe(2);
    const handedFirst = sha(envelopes.kept['certificate-document']!);

    await sealEnvelope({ ...deps(envelopes), sealer: unrepeatable }, event);
    expect(seals).toBe(2);
    const leaves = await db.logLeaf.findMany({ where: { envelopeId }, orderBy: { idx: 'asc' } });
    expect(leaves.map((l) => [l.document, l.documentSha256])).toEqual([
      ['sealed', sha(envelopes.kept['sealed-document']!)],
      ['certificate', handedFirst],
    ]);
    expect(sha(envelopes.kept['certificate-document']!)).toBe(handedFirst);
    const seal = await db.seal.findUnique({ where: { envelopeId } });
    expect(seal).toMatchObject({ status: 'sealed', attempts: 2, sealedSha256: leaves[0]!.documentSha256, certificateSha256: handedFirst, sealedPdf: null, certificatePdf: null });
  });

  it('after the quick retries the seal is failed, with the reason, told once; a later retry still seals', async () => {
    const envelopes = fakeEnvelopes({ failFetches: 4, failStatus: 500 });
    const event = completed();
    const envelopeId = event.data.envelopeId as string;
    for (let attempt = 1; attempt <= 4; attempt++) await expect(sealEnvelope(deps(envelopes), event)).rejects.toThrow(/answered 500/);
    const told = envelopes.calls.filter((c) => c.path.endsWith('/seal-failure'));
    expect(told).toHaveLength(1);
    expect(told[0]!.request.json).toEqual({ reason: expect.stringMatching(/^Sealing failed after 3 attempts \(retrying\): The envelopes service answered 500 for the completed document/) });
    expect(await db.seal.findUnique({ where: { envelopeId } })).toMatchObject({ status: 'failed', attempts: 4, lastError: expect.stringMatching(/500/) });
    expect(await db.logLeaf.count({ where: { envelopeId } })).toBe(0);

    await sealEnvelope(deps(envelopes), event);
    expect(await db.seal.findUnique({ where: { envelopeId } })).toMatchObject({ status: 'sealed', attempts: 5, lastError: null });
    expect((await db.logLeaf.findMany({ where: { envelopeId } })).map((l) => l.mode)).toEqual(['live', 'live']);
  });

  it('never calls a seal failed while envelopes is unavailable (503): the reason is kept, and it seals once envelopes is back', async () => {
    const envelopes = fakeEnvelopes({ failFetches: 5, failStatus: 503 });
    const event = completed();
    const envelopeId = event.data.envelopeId as string;
    for (let attempt = 1; attempt <= 5; attempt++) await expect(sealEnvelope(deps(envelopes), event)).rejects.toThrow(/The envelopes service is unavailable \(it answered 503/);
    expect(envelopes.calls.filter((c) => c.path.endsWith('/seal-failure'))).toEqual([]);
    expect(await db.seal.findUnique({ where: { envelopeId } })).toMatchObject({ status: 'pending', attempts: 5, lastError: expect.stringMatching(/503/) });

    await sealEnvelope(deps(envelopes), event);
    expect(await db.seal.findUnique({ where: { envelopeId } })).toMatchObject({ status: 'sealed', attempts: 6, lastError: null });
  });

  it('leaves alone a completion envelopes does not know (another deployment sharing the broker): no seal, no retry', async () => {
    const envelopes = fakeEnvelopes({ unknown: true });
    const event = completed();
    await sealEnvelope(deps(envelopes), event);
    expect(envelopes.calls.map((c) => c.path.split('/').at(-1))).toEqual(['completed-document']);
    expect(await db.seal.findUnique({ where: { envelopeId: event.data.envelopeId as string } })).toBeNull();
    expect(await db.logLeaf.count({ where: { envelopeId: event.data.envelopeId as string } })).toBe(0);
  });
});
