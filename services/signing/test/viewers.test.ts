// /v1/viewer/*: the exchange of a link token, the viewer's bearer (or query) token, the read-only view and the document
// (envelopes is a fake here; the e2e suite runs the real one through the gateway), and the stream woken by domain events.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '@sigil/kit/errors';
import { createMemoryBus, type MemoryBus } from '@sigil/kit/bus';
import { sha256Hex } from '@sigil/kit/crypto';
import { newId, randomBase62 } from '@sigil/kit/ids';
import { createTestAuth, freshTestDatabase, silentLogger } from '@sigil/kit/testing';
import type { ViewerEnvelopeView, ViewerGrant } from '@sigil/proto/internal-viewers';
import { createS3FileStore } from '@strata/stream/file-store';
import { testFileStoreOptions } from '@strata/stream/testing';
import type { Express } from 'express';
import { createApp } from '../src/app.ts';
import { createDb, type Db } from '../src/db.ts';
import type { ViewersClient } from '../src/viewers-client.ts';
import { FakeEnvelopes, migrationsDir, Outbox } from './helpers.ts';

/** Envelopes' viewer endpoints in memory: link tokens by hash (reusable), access tokens by hash, revocation. */
class FakeViewers implements ViewersClient {
  readonly links = new Map<string, Omit<ViewerGrant, 'expiresAt'>>();
  readonly tokens = new Map<string, ViewerGrant>();
  readonly revoked = new Set<string>();
  readonly opens: string[] = [];
  now = () => new Date();

  addLink(token: string, grant: Omit<ViewerGrant, 'expiresAt'>): void {
    this.links.set(sha256Hex(token), grant);
  }
  async exchange(linkTokenHash: string, accessTokenHash: string) {
    const link = this.links.get(linkTokenHash);
    if (!link || this.revoked.has(link.viewerId)) return undefined;
    const grant = { ...link, expiresAt: new Date(this.now().getTime() + 3600_000).toISOString() };
    this.tokens.set(accessTokenHash, grant);
    return grant;
  }
  async resolve(accessTokenHash: string) {
    const grant = this.tokens.get(accessTokenHash);
    return grant && !this.revoked.has(grant.viewerId) ? grant : undefined;
  }
  async view(v: ViewerGrant): Promise<ViewerEnvelopeView> {
    return {
      object: 'viewer_envelope', id: v.envelopeId, status: 'sent', seal: 'not_started', title: 'NDA', organizationName: 'Acme', testMode: v.testMode, documentAvailable: v.documentAccess,
      recipients: [{ role: 'client', name: 'Ada', status: 'completed', order: 1, signedAt: '2026-11-28T10:00:00.000Z', declinedAt: null }],
      viewer: { id: v.viewerId, name: null, documentAccess: v.documentAccess }, sentAt: null, completedAt: null, expiresAt: '2026-12-28T10:00:00.000Z', createdAt: '2026-11-28T09:00:00.000Z',
    };
  }
  async opened(v: ViewerGrant) {
    this.opens.push(v.viewerId);
  }
  async document(v: ViewerGrant) {
    if (!v.documentAccess) throw new AppError('forbidden', 'The sender did not let viewers of this envelope see its document.');
    return Buffer.from('%PDF-1.7 viewer');
  }
}

let app: Express;
let db: Db;
let server: Server;
let base: string;
let bus: MemoryBus;
const viewers = new FakeViewers();
const organizationId = newId('org');
const envelopeId = newId('env');

function link(documentAccess = false): { token: string; viewerId: string } {
  const token = `sglv_${randomBase62(40)}`;
  const viewerId = newId('vwr');
  viewers.addLink(token, { organizationId, testMode: true, envelopeId, viewerId, documentAccess });
  return { token, viewerId };
}
const exchange = (token: string) => request(app).post('/v1/viewer/exchange').send({ token });
const accessFor = async (token: string) => (await exchange(token)).body.accessToken as string;
// What JetStream's publish of a domain event is to plain NATS subscribers.
const publish = async (type: string, data: Record<string, unknown>) => bus.notify(`sigil.events.${type}`, { id: newId('evt'), type, occurredAt: new Date().toISOString(), organizationId, data });

beforeAll(async () => {
  db = createDb(await freshTestDatabase('sigil_signing_test_viewers', migrationsDir));
  const auth = await createTestAuth();
  bus = createMemoryBus();
  const outbox = new Outbox();
  const store = await createS3FileStore(testFileStoreOptions('sigil-attachments-test'));
  ({ app } = await createApp({ db, log: silentLogger(), verifyPrincipal: auth.verify, envelopes: new FakeEnvelopes(), store, mailer: outbox, sms: outbox, viewers: { client: viewers, feed: bus, heartbeatMs: 50 } }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
beforeEach(() => {
  viewers.opens.length = 0;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await db?.$disconnect();
});

describe('POST /v1/viewer/exchange', () => {
  it('trades a link token for an access token, as often as asked, until the viewer is revoked', async () => {
    const { token, viewerId } = link();
    const first = await exchange(token);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toEqual({ object: 'viewer_access_token', accessToken: expect.stringMatching(/^sglva_[A-Za-z0-9]{40}$/), expiresAt: expect.any(String), envelopeId });
    expect(first.headers['cache-control']).toBe('no-store');
    const second = await exchange(token);
    expect(second.status).toBe(200);
    expect(second.body.accessToken).not.toBe(first.body.accessToken);
    viewers.revoked.add(viewerId);
    expect((await exchange(token)).status).toBe(401);
    expect((await exchange(`sglv_${randomBase62(40)}`)).status).toBe(401);
    expect((await exchange('')).status).toBe(400);
  });
});

describe('the viewer operations', () => {
  it('read the envelope (recording the open) with the token as a bearer; anything else is 401', async () => {
    const access = await accessFor(link().token);
    const view = await request(app).get('/v1/viewer/envelope').set('authorization', `Bearer ${access}`);
    expect(view.status, JSON.stringify(view.body)).toBe(200);
    expect(view.body).toMatchObject({ object: 'viewer_envelope', id: envelopeId, status: 'sent', documentAvailable: false, recipients: [{ role: 'client', name: 'Ada', signedAt: '2026-11-28T10:00:00.000Z' }] });
    expect(viewers.opens).toHaveLength(1);
    // The query form is the stream's alone (EventSource cannot send headers).
    expect((await request(app).get(`/v1/viewer/envelope?access_token=${access}`)).status).toBe(400);
    expect((await request(app).get('/v1/viewer/envelope')).status).toBe(401);
    expect((await request(app).get('/v1/viewer/envelope').set('authorization', `Bearer sglva_${randomBase62(40)}`)).status).toBe(401);
    // A signer's token is not a viewer's.
    expect((await request(app).get('/v1/viewer/envelope').set('authorization', `Bearer sgla_${randomBase62(40)}`)).status).toBe(401);
  });

  it('serve the document only to a viewer with document access (403 otherwise)', async () => {
    const without = await accessFor(link(false).token);
    const refused = await request(app).get('/v1/viewer/document').set('authorization', `Bearer ${without}`);
    expect(refused.status).toBe(403);
    const granted = await accessFor(link(true).token);
    const pdf = await request(app).get('/v1/viewer/document').set('authorization', `Bearer ${granted}`);
    expect(pdf.status).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
  });
});

/** Reads a server-sent event stream as text as it arrives. */
async function openStream(path: string) {
  const res = await fetch(`${base}${path}`);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let ended = false;
  const pump = (async () => {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return void (ended = true);
      text += decoder.decode(chunk.value);
    }
  })().catch(() => void (ended = true));
  const until = async (ready: () => boolean, what: string) => {
    for (let i = 0; i < 100 && !ready(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    if (!ready()) throw new Error(`stream: ${what} did not happen; got ${JSON.stringify(text)}`);
  };
  return { res, text: () => text, ended: () => ended, until, close: async () => void (await reader.cancel().catch(() => undefined), await pump) };
}

describe('GET /v1/viewer/stream', () => {
  it("sends `update` for events of the viewer's envelope only, heartbeats, and closes when the viewer is revoked; then 401", async () => {
    const { token, viewerId } = link();
    const access = await accessFor(token);
    const stream = await openStream(`/v1/viewer/stream?access_token=${access}`);
    expect(stream.res.status).toBe(200);
    expect(stream.res.headers.get('content-type')).toContain('text/event-stream');
    await stream.until(() => stream.text().includes(': heartbeat'), 'a heartbeat');
    await publish('recipient.signed', { envelopeId: newId('env'), testMode: true });
    await publish('recipient.signed', { envelopeId, testMode: true });
    await stream.until(() => stream.text().includes('event: update'), 'an update');
    expect(stream.text().match(/event: update\ndata: (.*)\n/g)).toEqual([`event: update\ndata: {"envelope":"${envelopeId}"}\n`]);
    // Another viewer of the same envelope revoked: this stream only hears an update.
    await publish('viewer.revoked', { envelopeId, testMode: true, viewerId: newId('vwr'), email: 'other@example.com' });
    await stream.until(() => (stream.text().match(/event: update/g) ?? []).length === 2, 'a second update');
    expect(stream.ended()).toBe(false);
    viewers.revoked.add(viewerId);
    await publish('viewer.revoked', { envelopeId, testMode: true, viewerId, email: 'v@example.com' });
    await stream.until(() => stream.ended(), 'the end of the stream');
    await stream.close();
    expect((await fetch(`${base}/v1/viewer/stream?access_token=${access}`)).status).toBe(401);
  });
});
