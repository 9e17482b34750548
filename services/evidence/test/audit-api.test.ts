// The audit trail: envelope events appended to a per-envelope hash chain exactly once, listed with the chain verified;
// an edited or removed row shows as an invalid chain naming the first bad seq.
import path from 'node:path';
import pg from 'pg';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal, createTestAuth, freshTestDatabase, sessionPrincipal, silentLogger, type TestAuth } from '@sigil/kit/testing';
import { GENESIS_HASH, verifyChain } from '@sigil/proto/audit-chain';
import { createEvent, type DomainEvent, type EventType } from '@sigil/proto/events';
import type { Express } from 'express';
import { createApp } from '../src/app.ts';
import { appendEvent } from '../src/audit.ts';
import { createDb, type Db } from '../src/db.ts';
import { startAppendListener, type AppendListener } from '../src/appended.ts';

let db: Db;
let app: Express;
let auth: TestAuth;
let appended: AppendListener;
const org = apiKeyPrincipal({ permissions: ['envelope:read'] });

function envelopeEvent(type: EventType, envelopeId: string, extra: Record<string, unknown> = {}, status = 'sent'): DomainEvent {
  const recipient = { id: newId('rcp'), role: 'client', status: 'sent' };
  return createEvent(type, org.organizationId, {
    envelopeId,
    testMode: true,
    envelope: { id: envelopeId, object: 'envelope', status, seal: 'not_started', testMode: true, recipients: [recipient] },
    ...extra,
  } as never);
}

async function append(event: DomainEvent): Promise<void> {
  // Ten appends at once queue for the pool's connections and the chain's lock: more patience than Prisma's defaults.
  await db.$transaction((tx) => appendEvent(event, tx), { maxWait: 15_000, timeout: 20_000 });
}

async function story(envelopeId: string): Promise<DomainEvent[]> {
  const rcp = newId('rcp');
  const events = [
    envelopeEvent('envelope.created', envelopeId, { templateId: newId('tpl'), actor: { kind: 'api_key', id: org.actorId } }, 'rendering'),
    envelopeEvent('envelope.ready', envelopeId),
    envelopeEvent('recipient.sent', envelopeId, { recipientId: rcp }),
    envelopeEvent('recipient.viewed', envelopeId, { recipientId: rcp, from: '203.0.113.7', userAgent: 'Firefox/140' }),
    envelopeEvent('recipient.signed', envelopeId, { recipientId: rcp, from: '203.0.113.7', userAgent: 'Firefox/140' }),
  ];
  for (const event of events) await append(event);
  return events;
}

const list = async (envelopeId: string, query = '', principal = org) => request(app).get(`/v1/envelopes/${envelopeId}/events${query}`).set(await auth.headers(principal));

beforeAll(async () => {
  const url = await freshTestDatabase('sigil_evidence_test_audit', path.resolve(import.meta.dirname, '../../../prisma/evidence/migrations'));
  db = createDb(url);
  auth = await createTestAuth();
  appended = await startAppendListener(url, silentLogger());
  app = (await createApp({ db, pool: new pg.Pool({ connectionString: url, max: 2 }), log: silentLogger(), verifyPrincipal: auth.verify, appended })).app;
});
afterAll(async () => {
  await appended?.stop();
  await db?.$disconnect();
});

describe('the audit trail', () => {
  it('records each event once, in seq order from 1, each linked to the previous by its hash', async () => {
    const envelopeId = newId('env');
    const events = await story(envelopeId);
    await append(events[1]!);
    const res = await list(envelopeId);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.map((e: { seq: number; type: string }) => [e.seq, e.type])).toEqual([
      [1, 'envelope.created'], [2, 'envelope.ready'], [3, 'recipient.sent'], [4, 'recipient.viewed'], [5, 'recipient.signed'],
    ]);
    expect(res.body.data[0]).toMatchObject({ prevHash: GENESIS_HASH, at: events[0]!.occurredAt, actor: { kind: 'api_key', id: org.actorId }, data: { status: 'rendering' } });
    expect(res.body.data[3]).toMatchObject({ actor: { kind: 'recipient', ip: '203.0.113.7', userAgent: 'Firefox/140' } });
    expect(res.body.data[1].actor).toEqual({ kind: 'system' });
    expect(res.body.chain).toEqual({ valid: true, head: res.body.data[4].hash, length: 5 });
    expect(verifyChain(res.body.data)).toMatchObject({ valid: true });
  });

  it('pages with a cursor', async () => {
    const envelopeId = newId('env');
    await story(envelopeId);
    const first = (await list(envelopeId, '?limit=2')).body;
    expect(first.data.map((e: { seq: number }) => e.seq)).toEqual([1, 2]);
    expect(first.hasMore).toBe(true);
    const second = (await list(envelopeId, `?limit=2&cursor=${first.nextCursor}`)).body;
    expect(second.data.map((e: { seq: number }) => e.seq)).toEqual([3, 4]);
    expect(second.chain.valid).toBe(true);
  });

  it('shows an edited row as an invalid chain that names the first bad seq', async () => {
    const envelopeId = newId('env');
    await story(envelopeId);
    await db.$executeRawUnsafe(`UPDATE audit_events SET data = jsonb_set(data, '{status}', '"completed"') WHERE envelope_id = $1 AND seq = 3`, envelopeId);
    expect((await list(envelopeId)).body.chain).toMatchObject({ valid: false, length: 5, firstInvalidSeq: 3 });
  });

  it('shows a removed last row as an invalid chain too', async () => {
    const envelopeId = newId('env');
    await story(envelopeId);
    await db.$executeRawUnsafe('DELETE FROM audit_events WHERE envelope_id = $1 AND seq = 5', envelopeId);
    expect((await list(envelopeId)).body.chain).toMatchObject({ valid: false, length: 4, firstInvalidSeq: 5 });
  });

  it('numbers concurrent appends of one envelope without gaps', async () => {
    const envelopeId = newId('env');
    await append(envelopeEvent('envelope.created', envelopeId, { templateId: newId('tpl') }, 'rendering'));
    await Promise.all(Array.from({ length: 10 }, () => append(envelopeEvent('recipient.sent', envelopeId, { recipientId: newId('rcp') }))));
    const body = (await list(envelopeId, '?limit=100')).body;
    expect(body.data.map((e: { seq: number }) => e.seq)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    expect(body.chain.valid).toBe(true);
  });

  it("is a 404 for another organization's or another mode's envelope; a session sees both modes", async () => {
    const envelopeId = newId('env');
    await story(envelopeId);
    expect((await list(envelopeId, '', apiKeyPrincipal({ permissions: ['envelope:read'] }))).status).toBe(404);
    expect((await list(envelopeId, '', apiKeyPrincipal({ organizationId: org.organizationId, mode: 'live', permissions: ['envelope:read'] }))).status).toBe(404);
    expect((await list(envelopeId, '', sessionPrincipal({ organizationId: org.organizationId }))).status).toBe(200);
    expect((await list(newId('env'))).status).toBe(404);
  });
});
