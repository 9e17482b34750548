// The transparency log on a real database: appends, anchors signed as C2SP checkpoints (one per interval across
// replicas), key rotation, the public operations (verify, anchors, keys, consistency) and their rate limits.
import { createHash } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sigil/kit/ids';
import { createTestAuth, freshTestDatabase, silentLogger } from '@sigil/kit/testing';
import { parseCheckpoint } from '@sigil/tlog/checkpoint';
import { leafHash } from '@sigil/tlog/merkle';
import { generateNoteKey, openNote, parseSignerKey, parseVerifierKey } from '@sigil/tlog/note';
import { verifyConsistency, verifyInclusion } from '@sigil/tlog/verify';
import type { Express } from 'express';
import { createApp } from '../src/app.ts';
import { startAppendListener, type AppendListener } from '../src/appended.ts';
import { createDb, type Db } from '../src/db.ts';
import { anchorOnce, registerAnchorKey, type AnchorerDeps } from '../src/log/anchors.ts';
import { appendToLog, type LogEntry } from '../src/log/store.ts';

let url: string;
let db: Db;
let pool: pg.Pool;
let app: Express;
let appended: AppendListener;
const INTERVAL = 60_000;
let now = new Date('2026-11-25T10:00:00.000Z');
const keyA = parseSignerKey(generateNoteKey('test.sigil/anchors/a').signerKey);
const keyB = parseSignerKey(generateNoteKey('test.sigil/anchors/b').signerKey);
const anchorer = (signer = keyA, database: Db = db): AnchorerDeps => ({ db: database, signer, origin: (mode) => `test.sigil/sigil/log/${mode}`, intervalMs: INTERVAL, clock: () => now, log: silentLogger() });
const later = (ms = INTERVAL) => (now = new Date(now.getTime() + ms));

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
function entry(document: LogEntry['document'], testMode = false): LogEntry {
  const envelopeId = newId('env');
  return { envelopeId, organizationId: 'org_test', document, sha256: sha(`${envelopeId} ${document}`), sealedAt: now.toISOString(), completedAt: now.toISOString(), testMode };
}
const verify = (sha256: string, from = '198.51.100.1') => request(app).post('/v1/public/verify').set('x-forwarded-for', from).send({ sha256 });

beforeAll(async () => {
  url = await freshTestDatabase('sigil_evidence_test_tlog', path.resolve(import.meta.dirname, '../../../prisma/evidence/migrations'));
  db = createDb(url);
  pool = new pg.Pool({ connectionString: url, max: 2 });
  appended = await startAppendListener(url, silentLogger());
  app = (await createApp({ db, pool, log: silentLogger(), verifyPrincipal: (await createTestAuth()).verify, appended, rateLimits: { verifyPerMinute: 1000, publicPerMinute: 1000 } })).app;
  await registerAnchorKey(db, keyA, now);
});
afterAll(async () => {
  await appended?.stop();
  await pool?.end();
  await db?.$disconnect();
});

describe('the transparency log', () => {
  const live: LogEntry[] = [];

  it('answers pending before an anchor covers a document, then a proof to a signed checkpoint that verifies offline', async () => {
    for (let i = 0; i < 37; i++) {
      const e = entry(i % 2 ? 'certificate' : 'sealed');
      live.push(e);
      await appendToLog(db, 'live', [e]);
    }
    const pending = await verify(live[0]!.sha256);
    expect(pending.status).toBe(200);
    expect(pending.body).toMatchObject({ object: 'verification_result', anchor: null, proof: [], pending: true, leafIndex: 0 });

    const anchor = await anchorOnce(anchorer(), 'live');
    expect(anchor).toMatchObject({ mode: 'live', origin: 'test.sigil/sigil/log/live', kid: keyA.name });
    expect(Number(anchor!.treeSize)).toBe(37);

    const keys = (await request(app).get('/.well-known/sigil/keys.json')).body.keys as Array<{ kid: string; verifierKey: string; x: string; notAfter: string | null }>;
    expect(keys).toEqual([expect.objectContaining({ kid: keyA.name, kty: 'OKP', crv: 'Ed25519', x: keyA.publicKey.toString('base64url'), notAfter: null, verifierKey: keyA.verifierKey })]);

    for (const [index, e] of live.entries()) {
      const res = await verify(e.sha256.toUpperCase());
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const body = res.body;
      expect(body).toMatchObject({ pending: false, leafIndex: index, treeSize: 37, envelope: { id: e.envelopeId, status: 'completed', testMode: false }, document: e.document });
      // What a verifier does with no trust in the service: re-hash the leaf, walk the proof, open the checkpoint.
      const leafData = Buffer.from(body.leafData, 'base64');
      expect(JSON.parse(leafData.toString('utf8'))).toEqual({ v: 1, envelope: e.envelopeId, document: e.document, sha256: e.sha256, sealedAt: e.sealedAt, testMode: false });
      expect(leafHash(leafData).toString('hex')).toBe(body.leaf);
      const opened = openNote(body.anchor.checkpoint, keys.map((k) => parseVerifierKey(k.verifierKey)));
      expect(opened.verifiedBy).toEqual([keyA.name]);
      const checkpoint = parseCheckpoint(opened.text);
      expect(checkpoint).toMatchObject({ origin: 'test.sigil/sigil/log/live', treeSize: 37 });
      expect(checkpoint.root.toString('hex')).toBe(body.anchor.root);
      expect(verifyInclusion(index, 37, Buffer.from(body.leaf, 'hex'), body.proof.map((p: string) => Buffer.from(p, 'hex')), checkpoint.root)).toBe(true);
    }
  });

  it('keeps test documents in a tree of their own, and answers 404 for an unknown hash', async () => {
    const e = entry('sealed', true);
    await appendToLog(db, 'test', [e]);
    expect(await anchorOnce(anchorer(), 'test')).toMatchObject({ mode: 'test', origin: 'test.sigil/sigil/log/test' });
    const res = await verify(e.sha256);
    expect(res.body).toMatchObject({ leafIndex: 0, treeSize: 1, proof: [], envelope: { testMode: true }, mode: 'test' });
    expect((await request(app).get('/v1/public/anchors/latest?mode=test')).body).toMatchObject({ mode: 'test', treeSize: 1 });
    expect((await request(app).get('/v1/public/anchors/latest')).body).toMatchObject({ mode: 'live', treeSize: 37 });
    const unknown = await verify(sha('nothing sealed this'));
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/problem\+json/);
  });

  it('appending a document twice keeps one leaf', async () => {
    const e = live[3]!;
    expect(await appendToLog(db, 'live', [e])).toEqual([3]);
    expect(await db.logLeaf.count({ where: { mode: 'live' } })).toBe(37);
  });

  it('signs at most one anchor per interval, even with two replicas racing', async () => {
    for (let i = 0; i < 5; i++) await appendToLog(db, 'live', [entry('sealed')]);
    const other = createDb(url);
    try {
      const sameSlot = await Promise.all([anchorOnce(anchorer(keyA, db), 'live'), anchorOnce(anchorer(keyA, other), 'live')]);
      expect(sameSlot.filter(Boolean)).toHaveLength(0);
      later();
      const raced = await Promise.all([anchorOnce(anchorer(keyA, db), 'live'), anchorOnce(anchorer(keyA, other), 'live'), anchorOnce(anchorer(keyA, other), 'live')]);
      expect(raced.filter(Boolean)).toHaveLength(1);
      later();
      expect(await anchorOnce(anchorer(), 'live')).toBeNull();
    } finally {
      await other.$disconnect();
    }
  });

  it('lists anchors newest first per log, by sequence, with a cursor', async () => {
    const all = (await request(app).get('/v1/public/anchors?limit=1')).body;
    expect(all).toMatchObject({ object: 'list', hasMore: true });
    expect(all.data[0]).toMatchObject({ mode: 'live', treeSize: 42 });
    const next = (await request(app).get(`/v1/public/anchors?limit=1&cursor=${all.nextCursor}`)).body;
    expect(next).toMatchObject({ hasMore: false, data: [expect.objectContaining({ treeSize: 37 })] });
    const one = await request(app).get(`/v1/public/anchors/${all.data[0].sequence}`);
    expect(one.body).toEqual(all.data[0]);
    expect(one.headers['cache-control']).toMatch(/immutable/);
    expect((await request(app).get('/v1/public/anchors/999999')).status).toBe(404);
  });

  it('proves consistency between two anchors of one log, and refuses anchors of two logs', async () => {
    const anchors = (await request(app).get('/v1/public/anchors')).body.data as Array<{ sequence: number; treeSize: number; root: string }>;
    const [newer, older] = anchors as [{ sequence: number; treeSize: number; root: string }, { sequence: number; treeSize: number; root: string }];
    const res = await request(app).get(`/v1/public/anchors/${newer.sequence}/consistency?from=${older.sequence}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const proof = res.body.proof.map((p: string) => Buffer.from(p, 'hex'));
    expect(verifyConsistency(older.treeSize, newer.treeSize, Buffer.from(older.root, 'hex'), Buffer.from(newer.root, 'hex'), proof)).toBe(true);
    const testAnchor = (await request(app).get('/v1/public/anchors/latest?mode=test')).body;
    expect((await request(app).get(`/v1/public/anchors/${newer.sequence}/consistency?from=${testAnchor.sequence}`)).status).toBe(400);
  });

  it('rotates keys: the old key gets its end, its anchors keep verifying, and it can no longer sign', async () => {
    later();
    await registerAnchorKey(db, keyB, now);
    await appendToLog(db, 'live', [entry('sealed')]);
    expect(await anchorOnce(anchorer(keyB), 'live')).toMatchObject({ kid: keyB.name });
    const keys = (await request(app).get('/.well-known/sigil/keys.json')).body.keys as Array<{ kid: string; verifierKey: string; notAfter: string | null }>;
    expect(keys.map((k) => [k.kid, k.notAfter])).toEqual([[keyA.name, now.toISOString()], [keyB.name, null]]);
    const verifiers = keys.map((k) => parseVerifierKey(k.verifierKey));
    for (const anchor of (await request(app).get('/v1/public/anchors?mode=live')).body.data) {
      expect(openNote(anchor.checkpoint, verifiers).verifiedBy).toEqual([anchor.kid]);
    }
    await expect(registerAnchorKey(db, keyA, now)).rejects.toThrow(/replaced/);
  });
});

describe('rate limits of the public operations', () => {
  it('counts per client address in the shared store, with RateLimit headers on every answer and Retry-After on the 429', async () => {
    const limitedApp = (await createApp({ db, pool, log: silentLogger(), verifyPrincipal: (await createTestAuth()).verify, appended, rateLimits: { verifyPerMinute: 3, publicPerMinute: 2 } })).app;
    const client = `203.0.113.${Math.floor(Math.random() * 200) + 1}`;
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await request(limitedApp).post('/v1/public/verify').set('x-forwarded-for', client).send({ sha256: sha(`unknown ${i}`) }));
    expect(answers.map((a) => a.status)).toEqual([404, 404, 404, 429]);
    expect(answers.map((a) => a.headers['ratelimit-remaining'])).toEqual(['2', '1', '0', '0']);
    for (const a of answers) {
      expect(a.headers['ratelimit-limit']).toBe('3');
      expect(Number(a.headers['ratelimit-reset'])).toBeGreaterThan(0);
    }
    expect(Number(answers[3]!.headers['retry-after'])).toBeGreaterThan(0);
    expect(answers[3]!.body).toMatchObject({ type: expect.stringMatching(/rate-limited$/), status: 429 });
    // The first hop is the caller's own claim: only the hop the trusted proxy added counts.
    expect((await request(limitedApp).post('/v1/public/verify').set('x-forwarded-for', `10.9.9.9, ${client}`).send({ sha256: sha('x') })).status).toBe(429);
    expect((await request(limitedApp).post('/v1/public/verify').set('x-forwarded-for', '203.0.113.250').send({ sha256: sha('x') })).status).toBe(404);
    // Another replica counts in the same store.
    const replica = (await createApp({ db, pool, log: silentLogger(), verifyPrincipal: (await createTestAuth()).verify, appended, rateLimits: { verifyPerMinute: 3, publicPerMinute: 2 } })).app;
    expect((await request(replica).post('/v1/public/verify').set('x-forwarded-for', client).send({ sha256: sha('x') })).status).toBe(429);
    // Anchors and keys share the other budget.
    const other = '203.0.113.251';
    const statuses = [];
    for (const p of ['/v1/public/anchors', '/.well-known/sigil/keys.json', '/v1/public/anchors/latest']) statuses.push((await request(limitedApp).get(p).set('x-forwarded-for', other)).status);
    expect(statuses).toEqual([200, 200, 429]);
  });
});
