// Webhook endpoints and deliveries on a real database, to receivers on this machine, checked the way receivers check:
// with the official `standardwebhooks` library.
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal, sessionPrincipal } from '@sigil/kit/testing';
import { createEvent, type DomainEvent } from '@sigil/proto/events';
import { fanOut } from '../src/fanout.ts';
import { createSender } from '../src/sender.ts';
import { startReceiver, startWebhooksHarness, TEST_RETRY_DELAYS_MS, type WebhooksHarness } from './helpers.ts';

let h: WebhooksHarness;
const owner = sessionPrincipal({ mode: 'test' });
const key = apiKeyPrincipal({ organizationId: owner.organizationId, permissions: ['org:manage'] });
const receivers: Array<{ close: () => Promise<void> }> = [];

beforeAll(async () => {
  h = await startWebhooksHarness('main');
});
afterAll(async () => {
  for (const r of receivers) await r.close();
  await h?.close();
});

async function receiver(respond?: Parameters<typeof startReceiver>[0]) {
  const r = await startReceiver(respond);
  receivers.push(r);
  return r;
}

const api = async (method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: object, principal = key) => {
  const req = request(h.app)[method](path).set(await h.auth.headers(principal));
  return body ? req.send(body) : req;
};

async function endpoint(url: string, events: string[] = [], principal = key): Promise<{ id: string; secret: string }> {
  const res = await api('post', '/v1/webhook-endpoints', { url, events, description: 'test' }, principal);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

function envelopeEvent(type: 'envelope.created' | 'envelope.completed' | 'envelope.voided', organizationId = key.organizationId, testMode = true): DomainEvent {
  const envelopeId = newId('env');
  const envelope = { id: envelopeId, object: 'envelope', status: type === 'envelope.completed' ? 'completed' : 'sent', seal: 'not_started', testMode, recipients: [] };
  const extra = type === 'envelope.completed' ? { values: { recipients: { client: { name: 'Ada' } } } } : type === 'envelope.voided' ? { reason: 'x' } : {};
  return createEvent(type, organizationId, { envelopeId, testMode, envelope, ...extra } as never);
}

async function publish(event: DomainEvent): Promise<number> {
  const queued = await h.db.$transaction((tx) => fanOut(event, tx, new Date()));
  void h.worker.wake();
  return queued;
}

describe('webhook endpoints', () => {
  it('registers an endpoint in the caller\'s mode with a whsec_ secret shown once, and lists it with its health', async () => {
    const r = await receiver();
    const created = await endpoint(r.url, ['envelope.completed']);
    expect(created).toMatchObject({ object: 'webhook_endpoint', url: r.url, events: ['envelope.completed'], enabled: true, testMode: true, health: { successRate: null, attempts: 0, failures: 0 } });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    const bytes = Buffer.from(created.secret.slice(6), 'base64').length;
    expect(bytes).toBeGreaterThanOrEqual(24);
    expect(bytes).toBeLessThanOrEqual(64);
    const got = await api('get', `/v1/webhook-endpoints/${created.id}`);
    expect(got.body.secret).toBeUndefined();
    const listed = await api('get', '/v1/webhook-endpoints');
    expect(listed.body.data.map((e: { id: string }) => e.id)).toContain(created.id);
    // A live key of the same organization sees none of the test endpoints.
    expect((await api('get', '/v1/webhook-endpoints', undefined, { ...key, mode: 'live' })).body.data).toEqual([]);
  });

  it('refuses private, loopback, link-local and plain-http URLs with a pointer to /body/url', async () => {
    h.dns['internal.example.com'] = ['10.0.0.7'];
    for (const url of ['https://10.0.0.7/x', 'https://[::1]/x', 'https://169.254.169.254/x', 'https://internal.example.com/x', 'http://example.com/x', 'http://127.0.0.2:80/x']) {
      const res = await api('post', '/v1/webhook-endpoints', { url });
      expect(res.status, url).toBe(400);
      expect(res.body.errors[0].pointer).toBe('/body/url');
    }
    expect((await api('post', '/v1/webhook-endpoints', { url: 'https://x.example.com', events: ['envelope.exploded'] })).status).toBe(400);
  });

  it('changes, pauses and deletes; reveals the secret to a dashboard session only, and records who asked', async () => {
    const r = await receiver();
    const created = await endpoint(r.url);
    const changed = await api('patch', `/v1/webhook-endpoints/${created.id}`, { description: 'renamed', enabled: false, events: ['envelope.voided'] });
    expect(changed.body).toMatchObject({ description: 'renamed', enabled: false, events: ['envelope.voided'] });
    expect((await api('post', `/v1/webhook-endpoints/${created.id}/secret`)).status).toBe(401);
    const revealed = await api('post', `/v1/webhook-endpoints/${created.id}/secret`, undefined, owner);
    expect(revealed.body).toEqual({ object: 'webhook_endpoint_secret', secret: created.secret, previousSecretExpiresAt: null });
    expect(await h.db.webhookSecretAudit.count({ where: { endpointId: created.id, action: 'revealed', actorId: owner.actorId } })).toBe(1);
    expect((await api('delete', `/v1/webhook-endpoints/${created.id}`)).status).toBe(204);
    expect((await api('get', `/v1/webhook-endpoints/${created.id}`)).status).toBe(404);
  });
});

describe('deliveries', () => {
  it('delivers an event of the endpoint\'s mode exactly as spec part 6 says, verified with the official library', async () => {
    const own = apiKeyPrincipal({ permissions: ['org:manage'] });
    const r = await receiver();
    const subscribed = await endpoint(r.url, ['envelope.completed'], own);
    const other = await receiver();
    await endpoint(other.url, ['envelope.voided'], own);
    const event = envelopeEvent('envelope.completed', own.organizationId);
    expect(await publish(event)).toBe(1);
    const [first] = await r.until(1);
    expect(first!.headers).toMatchObject({ 'content-type': 'application/json', 'user-agent': 'Sigil-Webhooks/1', 'webhook-id': event.id });
    expect(Math.abs(Number(first!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
    const payload = new Webhook(subscribed.secret).verify(first!.body, first!.headers as Record<string, string>) as Record<string, unknown>;
    expect(payload).toEqual({ id: event.id, type: 'envelope.completed', createdAt: event.occurredAt, testMode: true, data: { envelope: (event.data as { envelope: unknown }).envelope, values: { recipients: { client: { name: 'Ada' } } } } });
    // The library refuses a tampered body and a stale timestamp.
    expect(() => new Webhook(subscribed.secret).verify(first!.body.replace('Ada', 'Eve'), first!.headers as Record<string, string>)).toThrow();
    const stale = new Date(Date.now() - 6 * 60_000);
    const staleHeaders = { 'webhook-id': event.id, 'webhook-timestamp': String(Math.floor(stale.getTime() / 1000)), 'webhook-signature': new Webhook(subscribed.secret).sign(event.id, stale, first!.body) };
    expect(() => new Webhook(subscribed.secret).verify(first!.body, staleHeaders)).toThrow(/timestamp/i);
  });

  it('sends nothing to endpoints of the other mode, of another organization, paused, or not subscribed', async () => {
    const r = await receiver();
    const created = await endpoint(r.url, ['envelope.voided']);
    await publish(envelopeEvent('envelope.created'));
    await publish(envelopeEvent('envelope.voided', key.organizationId, false));
    await publish(envelopeEvent('envelope.voided', newId('org')));
    await api('patch', `/v1/webhook-endpoints/${created.id}`, { enabled: false });
    await publish(envelopeEvent('envelope.voided'));
    await api('patch', `/v1/webhook-endpoints/${created.id}`, { enabled: true });
    const wanted = envelopeEvent('envelope.voided');
    await publish(wanted);
    const [only] = await r.until(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(r.received).toHaveLength(1);
    expect(only!.headers['webhook-id']).toBe(wanted.id);
  });

  it('retries a failing endpoint on schedule with the same webhook-id, records each attempt, then marks it failed', async () => {
    const r = await receiver((n) => (n === 1 ? { status: 302, location: 'http://127.0.0.1:1/elsewhere' } : { status: 500 }));
    const created = await endpoint(r.url, ['envelope.voided']);
    const event = envelopeEvent('envelope.voided');
    const published = Date.now();
    await publish(event);
    const got = await r.until(TEST_RETRY_DELAYS_MS.length + 1);
    expect(got.map((g) => g.headers['webhook-id'])).toEqual(Array(TEST_RETRY_DELAYS_MS.length + 1).fill(event.id));
    // Each attempt is signed anew, with the time of the attempt (whole seconds): after the attempt before it arrived,
    // before it arrived itself.
    got.forEach((g, i) => {
      const signed = Number(g.headers['webhook-timestamp']);
      expect(signed).toBeGreaterThanOrEqual(Math.floor((i === 0 ? published : got[i - 1]!.at) / 1000));
      expect(signed).toBeLessThanOrEqual(g.at / 1000);
    });
    let list = (await api('get', `/v1/webhook-endpoints/${created.id}/deliveries?event=${event.id}`)).body.data;
    for (let i = 0; i < 50 && list.length < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      list = (await api('get', `/v1/webhook-endpoints/${created.id}/deliveries?event=${event.id}`)).body.data;
    }
    expect(list.map((d: { attempt: number; status: string; statusCode: number }) => [d.attempt, d.status, d.statusCode])).toEqual([[4, 'failed', 500], [3, 'pending', 500], [2, 'pending', 500], [1, 'pending', 302]]);
    expect(list[3].error).toMatch(/redirect/);
    // The due time of each retry is persisted with the attempt: the schedule, scaled; and no retry arrived before it.
    // (Measured from the attempt, not from when the receiver got it: a request slow to arrive under load does not
    // move the schedule.)
    for (const [i, d] of [...list].reverse().slice(0, 3).entries()) {
      expect(Date.parse(d.nextAttemptAt) - Date.parse(d.attemptedAt)).toBe(TEST_RETRY_DELAYS_MS[i]);
      expect(got[i + 1]!.at).toBeGreaterThanOrEqual(Date.parse(d.nextAttemptAt));
    }
    expect(r.received.some((g) => g.headers.host?.endsWith(':1'))).toBe(false);
    const health = (await api('get', `/v1/webhook-endpoints/${created.id}`)).body.health;
    expect(health).toEqual({ successRate: 0, attempts: 4, failures: 4 });
  });

  it('a slow endpoint does not hold back another: per-endpoint concurrency, no head-of-line blocking', async () => {
    const slow = await receiver(() => ({ delayMs: 1_500 }));
    const fast = await receiver();
    await endpoint(slow.url, ['envelope.created']);
    await endpoint(fast.url, ['envelope.created']);
    for (let i = 0; i < 10; i++) await publish(envelopeEvent('envelope.created'));
    await fast.until(10);
    expect(fast.received).toHaveLength(10);
    // All ten reached the fast receiver before the slow one had answered even its first request (1.5 s each).
    await slow.until(1);
    expect(fast.received.at(-1)!.at).toBeLessThan(slow.received[0]!.at + 1_500);
  });

  it('after a rotation both secrets sign for 24 hours, then only the new one', async () => {
    const r = await receiver();
    const created = await endpoint(r.url, ['envelope.voided']);
    const rotated = await api('post', `/v1/webhook-endpoints/${created.id}/secret/rotate`);
    expect(rotated.body).toMatchObject({ object: 'webhook_endpoint_secret', secret: expect.stringMatching(/^whsec_/) });
    expect(Date.parse(rotated.body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
    await publish(envelopeEvent('envelope.voided'));
    const [during] = await r.until(1);
    expect((during!.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    // An old receiver (old secret) and an updated one (new secret) both accept it.
    expect(() => new Webhook(created.secret).verify(during!.body, during!.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(rotated.body.secret).verify(during!.body, during!.headers as Record<string, string>)).not.toThrow();
    await h.db.webhookEndpoint.update({ where: { id: created.id }, data: { previousSecretExpiresAt: new Date(Date.now() - 1000) } });
    await publish(envelopeEvent('envelope.voided'));
    const [, after] = await r.until(2);
    expect((after!.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
    expect(() => new Webhook(created.secret).verify(after!.body, after!.headers as Record<string, string>)).toThrow();
    expect(() => new Webhook(rotated.body.secret).verify(after!.body, after!.headers as Record<string, string>)).not.toThrow();
  });

  it('sends webhook.test, and redelivers an event with its own id to one endpoint or every subscribed one', async () => {
    const r = await receiver();
    const created = await endpoint(r.url, ['envelope.voided']);
    const ping = await api('post', `/v1/webhook-endpoints/${created.id}/test`);
    expect(ping.status).toBe(202);
    expect(ping.body).toMatchObject({ object: 'webhook_delivery_queued', endpointId: created.id, eventId: expect.stringMatching(/^evt_/) });
    const [tested] = await r.until(1);
    expect(JSON.parse(tested!.body)).toMatchObject({ id: ping.body.eventId, type: 'webhook.test', testMode: true });
    const event = envelopeEvent('envelope.voided');
    await publish(event);
    await r.until(2);
    const again = await request(h.app).post(`/v1/events/${event.id}/redeliver`).set(await h.auth.headers(key)).set('Idempotency-Key', `redeliver-${event.id}`).send({ endpoint: created.id });
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    const all = await request(h.app).post(`/v1/events/${event.id}/redeliver`).set(await h.auth.headers(key)).send({});
    expect(all.body.endpointIds).toContain(created.id);
    const got = await r.until(4);
    expect(got.slice(1).map((g) => g.headers['webhook-id'])).toEqual([event.id, event.id, event.id]);
    expect((await request(h.app).post(`/v1/events/${newId('evt')}/redeliver`).set(await h.auth.headers(key)).send({ endpoint: created.id })).status).toBe(404);
  });

  it('checks the URL again at every attempt: a name that now resolves privately is never called', async () => {
    h.dns['hooks.example.net'] = ['93.184.216.34'];
    const created = await endpoint('https://hooks.example.net/sigil', ['envelope.voided']);
    h.dns['hooks.example.net'] = ['127.0.0.1'];
    const event = envelopeEvent('envelope.voided');
    await publish(event);
    let attempts: Array<{ error: string; statusCode: number | null }> = [];
    for (let i = 0; i < 100 && attempts.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 30));
      attempts = (await api('get', `/v1/webhook-endpoints/${created.id}/deliveries`)).body.data;
    }
    expect(attempts[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(/refused: .*private.*127\.0\.0\.1/) });
  });
});

describe('the sender', () => {
  it('connects to the checked address only, whatever the name would resolve to now', async () => {
    const r = await receiver();
    const port = new URL(r.url).port;
    const sender = createSender();
    // No DNS knows this name: the connection can only have gone to the pinned address.
    const result = await sender.send({ url: new URL(`http://pinned.invalid:${port}/hook`), address: { address: '127.0.0.1', family: 4 }, headers: { 'content-type': 'application/json' }, body: '{}', timeoutMs: 2_000 });
    expect(result).toMatchObject({ ok: true, statusCode: 200 });
    expect(r.received.at(-1)!.headers.host).toBe(`pinned.invalid:${port}`);
    const slow = await receiver(() => ({ delayMs: 1_000 }));
    const timeout = await sender.send({ url: new URL(slow.url), address: null, headers: {}, body: '{}', timeoutMs: 100 });
    expect(timeout).toMatchObject({ ok: false, statusCode: null, error: 'timeout after 100 ms' });
    await sender.close();
  });
});
