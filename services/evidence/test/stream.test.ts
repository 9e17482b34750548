// The live trail over server-sent events, with two replicas of the service on one database: an append committed by
// either reaches streams on both; Last-Event-ID resumes with no gap and no duplicate; comments keep it open.
import http from 'node:http';
import path from 'node:path';
import pg from 'pg';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal, createTestAuth, freshTestDatabase, silentLogger, type TestAuth } from '@sigil/kit/testing';
import { createEvent, type DomainEvent, type EventType } from '@sigil/proto/events';
import { createApp } from '../src/app.ts';
import { startAppendListener, type AppendListener } from '../src/appended.ts';
import { appendEvent } from '../src/audit.ts';
import { createDb, type Db } from '../src/db.ts';

let db: Db;
let auth: TestAuth;
const replicas: Array<{ url: string; server: http.Server; appended: AppendListener }> = [];
const org = apiKeyPrincipal({ permissions: ['envelope:read'] });

function event(type: EventType, envelopeId: string, extra: Record<string, unknown> = {}): DomainEvent {
  const envelope = { id: envelopeId, object: 'envelope', status: 'sent', seal: 'not_started', testMode: true, recipients: [] };
  return createEvent(type, org.organizationId, { envelopeId, testMode: true, envelope, ...extra } as never);
}
const append = (e: DomainEvent) => db.$transaction((tx) => appendEvent(e, tx));

interface Frame {
  id?: string;
  event?: string;
  data?: string;
  comment?: boolean;
}

/** An SSE client reading frames as they come (node:http, no buffering). */
async function open(url: string, headers: Record<string, string>) {
  const frames: Frame[] = [];
  let waiters: Array<() => void> = [];
  const req = http.get(url, { headers: { accept: 'text/event-stream', ...headers } });
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => req.on('response', resolve).on('error', reject));
  let buffer = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    buffer += chunk;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const frame: Frame = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) frame.comment = true;
        else if (line.startsWith('id:')) frame.id = line.slice(3).trim();
        else if (line.startsWith('event:')) frame.event = line.slice(6).trim();
        else if (line.startsWith('data:')) frame.data = (frame.data ?? '') + line.slice(5).trim();
      }
      frames.push(frame);
      for (const w of waiters) w();
      waiters = [];
    }
  });
  const until = async (ready: () => boolean, ms = 10_000) => {
    const deadline = Date.now() + ms;
    while (!ready()) {
      if (Date.now() > deadline) throw new Error(`stream: not ready in time (${JSON.stringify(frames)})`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  };
  return { status: res.statusCode, headers: res.headers, frames, entries: () => frames.filter((f) => f.id), until, close: () => req.destroy() };
}

beforeAll(async () => {
  const url = await freshTestDatabase('sigil_evidence_test_stream', path.resolve(import.meta.dirname, '../../../prisma/evidence/migrations'));
  db = createDb(url);
  auth = await createTestAuth();
  for (let i = 0; i < 2; i++) {
    const appended = await startAppendListener(url, silentLogger());
    const { app } = await createApp({ db: createDb(url), pool: new pg.Pool({ connectionString: url, max: 2 }), log: silentLogger(), verifyPrincipal: auth.verify, appended, keepAliveMs: 300 });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    replicas.push({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, appended });
  }
});
afterAll(async () => {
  for (const r of replicas) {
    r.server.closeAllConnections();
    r.server.close();
    await r.appended.stop();
  }
  await db?.$disconnect();
});

describe('GET /v1/envelopes/{id}/events/stream', () => {
  it('streams entries appended by any replica, live, with seq as the id and the type as the event', async () => {
    const envelopeId = newId('env');
    await append(event('envelope.created', envelopeId, { templateId: newId('tpl') }));
    const headers = await auth.headers(org);
    const onA = await open(`${replicas[0]!.url}/v1/envelopes/${envelopeId}/events/stream`, headers);
    const onB = await open(`${replicas[1]!.url}/v1/envelopes/${envelopeId}/events/stream`, headers);
    expect(onA.status).toBe(200);
    expect(onA.headers['content-type']).toMatch(/^text\/event-stream/);
    await onA.until(() => onA.entries().length === 1);
    await append(event('envelope.ready', envelopeId));
    await append(event('recipient.sent', envelopeId, { recipientId: newId('rcp') }));
    for (const stream of [onA, onB]) {
      await stream.until(() => stream.entries().length === 3);
      expect(stream.entries().map((f) => [f.id, f.event])).toEqual([['1', 'envelope.created'], ['2', 'envelope.ready'], ['3', 'recipient.sent']]);
      expect(JSON.parse(stream.entries()[1]!.data!)).toMatchObject({ seq: 2, type: 'envelope.ready' });
    }
    await onA.until(() => onA.frames.some((f) => f.comment));
    onA.close();
    onB.close();
  });

  it('resumes after Last-Event-ID with no gap and no duplicate', async () => {
    const envelopeId = newId('env');
    await append(event('envelope.created', envelopeId, { templateId: newId('tpl') }));
    for (let i = 0; i < 4; i++) await append(event('recipient.sent', envelopeId, { recipientId: newId('rcp') }));
    const resumed = await open(`${replicas[1]!.url}/v1/envelopes/${envelopeId}/events/stream`, { ...(await auth.headers(org)), 'last-event-id': '3' });
    await resumed.until(() => resumed.entries().length === 2);
    await append(event('envelope.voided', envelopeId, { reason: null }));
    await resumed.until(() => resumed.entries().length === 3);
    expect(resumed.entries().map((f) => f.id)).toEqual(['4', '5', '6']);
    resumed.close();
  });

  it("is a 404 for another organization's envelope", async () => {
    const envelopeId = newId('env');
    await append(event('envelope.created', envelopeId, { templateId: newId('tpl') }));
    const other = await open(`${replicas[0]!.url}/v1/envelopes/${envelopeId}/events/stream`, await auth.headers(apiKeyPrincipal({ permissions: ['envelope:read'] })));
    expect(other.status).toBe(404);
    other.close();
  });
});
