// The evidence subgraph: an Envelope's audit trail and sealing through `_entities` (as the gateway asks), anchors.
import { createHash } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal, createTestAuth, sessionPrincipal, freshTestDatabase, silentLogger, type TestAuth } from '@sigil/kit/testing';
import { createEvent } from '@sigil/proto/events';
import { generateNoteKey, parseSignerKey } from '@sigil/tlog/note';
import type { Express } from 'express';
import { createApp } from '../src/app.ts';
import { startAppendListener, type AppendListener } from '../src/appended.ts';
import { appendEvent } from '../src/audit.ts';
import { createDb, type Db } from '../src/db.ts';
import { anchorOnce, registerAnchorKey } from '../src/log/anchors.ts';
import { appendToLog } from '../src/log/store.ts';

let db: Db;
let pool: pg.Pool;
let app: Express;
let auth: TestAuth;
let appended: AppendListener;
const org = apiKeyPrincipal({ permissions: ['envelope:read'] });
const envelopeId = newId('env');
const signer = parseSignerKey(generateNoteKey('test.sigil/anchors/graph').signerKey);

const gql = async (query: string, variables: object = {}, principal: typeof org | null = org) =>
  request(app).post('/graphql').set(principal ? await auth.headers(principal) : {}).send({ query, variables });

beforeAll(async () => {
  const url = await freshTestDatabase('sigil_evidence_test_subgraph', path.resolve(import.meta.dirname, '../../../prisma/evidence/migrations'));
  db = createDb(url);
  pool = new pg.Pool({ connectionString: url, max: 2 });
  auth = await createTestAuth();
  appended = await startAppendListener(url, silentLogger());
  app = (await createApp({ db, pool, log: silentLogger(), verifyPrincipal: auth.verify, appended })).app;
  const envelope = { id: envelopeId, object: 'envelope', status: 'completed', seal: 'pending', testMode: true, recipients: [] };
  for (const type of ['envelope.created', 'envelope.completed'] as const) {
    await db.$transaction((tx) => appendEvent(createEvent(type, org.organizationId, { envelopeId, testMode: true, envelope } as never), tx));
  }
  const sha256 = createHash('sha256').update(envelopeId).digest('hex');
  await db.seal.create({ data: { envelopeId, organizationId: org.organizationId, testMode: true, status: 'sealed', attempts: 1, sealedSha256: sha256 } });
  await appendToLog(db, 'test', [{ envelopeId, organizationId: org.organizationId, document: 'sealed', sha256, sealedAt: new Date().toISOString(), completedAt: null, testMode: true }]);
  await registerAnchorKey(db, signer, new Date());
  await anchorOnce({ db, signer, origin: (mode) => `test.sigil/sigil/log/${mode}`, intervalMs: 1000, log: silentLogger() }, 'test');
});
afterAll(async () => {
  await appended?.stop();
  await pool?.end();
  await db?.$disconnect();
});

describe('evidence subgraph', () => {
  it('resolves an Envelope\'s events, with the chain verified, and its sealing with the log leaves and their anchor', async () => {
    const res = await gql(
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Envelope { id events(first: 1) { entries { seq type actor } hasMore chain { valid length } } sealing { status attempts leaves { document mode leafIndex anchor { treeSize mode } } } } } }',
      { r: [{ __typename: 'Envelope', id: envelopeId }] },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data._entities).toEqual([{
      id: envelopeId,
      events: { entries: [{ seq: 1, type: 'envelope.created', actor: { kind: 'system' } }], hasMore: true, chain: { valid: true, length: 2 } },
      sealing: { status: 'sealed', attempts: 1, leaves: [{ document: 'sealed', mode: 'test', leafIndex: 0, anchor: { treeSize: 1, mode: 'test' } }] },
    }]);
  });

  it('hides another organization\'s trail, and lists anchors for signed-in callers only', async () => {
    const other = apiKeyPrincipal({ permissions: ['envelope:read'] });
    const hidden = await gql('query($r: [_Any!]!) { _entities(representations: $r) { ... on Envelope { events { chain { length } } } } }', { r: [{ __typename: 'Envelope', id: envelopeId }] }, other);
    expect(hidden.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const sealing = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Envelope { sealing { status } } } }';
    expect((await gql(sealing, { r: [{ __typename: 'Envelope', id: envelopeId }] }, other)).body).toEqual({ data: { _entities: [{ sealing: null }] } });
    const live = apiKeyPrincipal({ organizationId: org.organizationId, mode: 'live', permissions: ['envelope:read'] });
    expect((await gql(sealing, { r: [{ __typename: 'Envelope', id: envelopeId }] }, live)).body.data._entities).toEqual([{ sealing: null }]);
    // An envelope without any audit entry yet (just created): no seal, and no error either.
    expect((await gql(sealing, { r: [{ __typename: 'Envelope', id: newId('env') }] })).body).toEqual({ data: { _entities: [{ sealing: null }] } });
    const anchors = await gql('{ anchors(mode: "test") { nodes { sequence mode treeSize kid } hasMore } latestAnchor(mode: "live") { sequence } }');
    expect(anchors.body.data).toEqual({ anchors: { nodes: [{ sequence: expect.any(Number), mode: 'test', treeSize: 1, kid: signer.name }], hasMore: false }, latestAnchor: null });
    expect((await gql('{ anchors { hasMore } }', {}, null)).body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect((await gql('{ anchors(mode: "other") { hasMore } }')).body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('answers the organization\'s recent activity in one mode, newest first, each entry with its envelope', async () => {
    const otherEnvelope = newId('env');
    const live = { id: otherEnvelope, object: 'envelope', status: 'sent', seal: 'not_started', testMode: false, recipients: [] };
    await db.$transaction((tx) => appendEvent(createEvent('envelope.created', org.organizationId, { envelopeId: otherEnvelope, testMode: false, envelope: live } as never), tx));
    const query = 'query($first: Int, $t: Boolean) { recentActivity(first: $first, testMode: $t) { envelope { id } seq type actor } }';
    const test = await gql(query, { first: 10 });
    expect(test.body.errors).toBeUndefined();
    expect(test.body.data.recentActivity).toEqual([
      { envelope: { id: envelopeId }, seq: 2, type: 'envelope.completed', actor: { kind: 'system' } },
      { envelope: { id: envelopeId }, seq: 1, type: 'envelope.created', actor: { kind: 'system' } },
    ]);
    expect((await gql(query, { first: 1 })).body.data.recentActivity).toHaveLength(1);
    // A session sees its own mode unless it names one; an API key only ever its own.
    const owner = sessionPrincipal({ organizationId: org.organizationId, permissions: ['envelope:read'] });
    expect((await gql(query, {}, owner)).body.data.recentActivity.map((e: { envelope: { id: string } }) => e.envelope.id)).toEqual([otherEnvelope]);
    expect((await gql(query, { t: true }, owner)).body.data.recentActivity).toHaveLength(2);
    expect((await gql(query, { t: false })).body.data.recentActivity).toHaveLength(2);
    expect((await gql(query, {}, apiKeyPrincipal({ permissions: ['envelope:read'] }))).body.data.recentActivity).toEqual([]);
    expect((await gql(query, { first: 0 })).body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
