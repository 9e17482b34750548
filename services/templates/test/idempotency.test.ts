import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyPrincipal, sessionPrincipal } from '@sigil/kit/testing';
import { startTemplatesHarness, type TemplatesHarness } from './helpers.ts';

let h: TemplatesHarness;
beforeAll(async () => {
  h = await startTemplatesHarness('idempotency');
});
afterAll(async () => h?.close());

const post = async (principal: ReturnType<typeof apiKeyPrincipal>, key: string, body: object) =>
  request(h.app).post('/v1/templates').set(await h.auth.headers(principal)).set('Idempotency-Key', key).send(body);

describe('Idempotency-Key on POST /v1/templates (spec part 8)', () => {
  it('replays the stored response for the same request', async () => {
    const caller = apiKeyPrincipal();
    const first = await post(caller, 'key-replay-1', { name: 'Once' });
    const second = await post(caller, 'key-replay-1', { name: 'Once' });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    expect(await h.db.template.count({ where: { organizationId: caller.organizationId } })).toBe(1);
  });

  it('answers 422 idempotency-key-reused for a different body', async () => {
    const caller = apiKeyPrincipal();
    expect((await post(caller, 'key-reuse', { name: 'A' })).status).toBe(201);
    const res = await post(caller, 'key-reuse', { name: 'B' });
    expect(res.status).toBe(422);
    expect(res.body.type).toBe('https://sigil.dev/problems/idempotency-key-reused');
  });

  it('scopes keys to the caller: another key or user of the same organization runs anew', async () => {
    const key = apiKeyPrincipal();
    const sameOrgOtherKey = apiKeyPrincipal({ organizationId: key.organizationId });
    const user = sessionPrincipal({ organizationId: key.organizationId });
    const a = await post(key, 'shared-key', { name: 'Same' });
    const b = await post(sameOrgOtherKey, 'shared-key', { name: 'Same' });
    const c = await post(user, 'shared-key', { name: 'Same' });
    expect(new Set([a.body.id, b.body.id, c.body.id]).size).toBe(3);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
  });

  it('creates exactly one template from concurrent requests with one key', async () => {
    const caller = apiKeyPrincipal();
    const responses = await Promise.all(Array.from({ length: 12 }, () => post(caller, 'key-concurrent', { name: 'Race' })));
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const created = responses.filter((r) => r.status === 201);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    for (const conflict of responses.filter((r) => r.status === 409)) {
      expect(conflict.body.type).toBe('https://sigil.dev/problems/idempotency-in-progress');
    }
    expect(await h.db.template.count({ where: { organizationId: caller.organizationId } })).toBe(1);
  });

  it('answers 409 idempotency-in-progress while the first request still runs', async () => {
    const caller = apiKeyPrincipal();
    await h.db.$executeRawUnsafe(
      `INSERT INTO idempotency_keys (scope, key, request_hash, state, locked_until, expires_at)
       VALUES ($1, 'key-running', 'x', 'running', now() + interval '1 minute', now() + interval '1 day')`,
      `${caller.organizationId}:${caller.apiKeyId}`,
    );
    // Same fingerprint is needed to get past the reuse check: store the real one.
    const { requestFingerprint } = await import('@sigil/kit/api');
    await h.db.$executeRawUnsafe(`UPDATE idempotency_keys SET request_hash = $1 WHERE key = 'key-running'`, requestFingerprint({ method: 'POST', path: '/v1/templates', query: '', rawBody: Buffer.from('{"name":"Slow"}') }));
    const res = await post(caller, 'key-running', { name: 'Slow' });
    expect(res.status).toBe(409);
    expect(res.body.type).toBe('https://sigil.dev/problems/idempotency-in-progress');
  });

  it('lets a retry take over a key whose first request died (lease expired)', async () => {
    const caller = apiKeyPrincipal();
    const { requestFingerprint } = await import('@sigil/kit/api');
    await h.db.$executeRawUnsafe(
      `INSERT INTO idempotency_keys (scope, key, request_hash, state, locked_until, expires_at)
       VALUES ($1, 'key-dead', $2, 'running', now() - interval '1 second', now() + interval '1 day')`,
      `${caller.organizationId}:${caller.apiKeyId}`,
      requestFingerprint({ method: 'POST', path: '/v1/templates', query: '', rawBody: Buffer.from('{"name":"Revived"}') }),
    );
    const res = await post(caller, 'key-dead', { name: 'Revived' });
    expect(res.status).toBe(201);
  });

  it('keeps the key of a request that runs longer than its lease (renewed while it runs), and frees it soon when the request dies', async () => {
    const { runIdempotent } = await import('@sigil/kit/api');
    const lease = { leaseMs: 1_500, renewMs: 100 };
    const req = { scope: 'org:lease', key: 'k-long', method: 'POST', path: '/p', query: '', rawBody: undefined };
    let finish!: () => void;
    const first = runIdempotent(h.db, req, () => new Promise((resolve) => (finish = () => resolve({ status: 201, headers: {}, body: { n: 1 } }))), lease);
    // More than two leases later the first request still holds its key.
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    await expect(runIdempotent(h.db, req, async () => ({ status: 201, headers: {}, body: { n: 2 } }), lease)).rejects.toMatchObject({ code: 'idempotency-in-progress' });
    finish();
    await expect(first).resolves.toEqual({ status: 201, headers: {}, body: { n: 1 }, replayed: false });

    // A request whose process died renews nothing: one lease later a retry runs it.
    const dead = { ...req, key: 'k-dead' };
    void runIdempotent(h.db, dead, () => new Promise(() => undefined), { leaseMs: 600, renewMs: 3_600_000 });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await expect(runIdempotent(h.db, dead, async () => ({ status: 201, headers: {}, body: { n: 3 } }), lease)).resolves.toEqual({ status: 201, headers: {}, body: { n: 3 }, replayed: false });
  });

  it('forgets keys after 24 hours', async () => {
    const caller = apiKeyPrincipal();
    const first = await post(caller, 'key-old', { name: 'Old' });
    await h.db.$executeRawUnsafe(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = 'key-old'`);
    const second = await post(caller, 'key-old', { name: 'Old' });
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.body.id).not.toBe(first.body.id);
  });

  it('does not store 5xx responses or crashes: the next attempt runs again', async () => {
    const { runIdempotent } = await import('@sigil/kit/api');
    const req = { scope: 'org:x', key: 'k5xx', method: 'POST', path: '/p', query: '', rawBody: undefined };
    let runs = 0;
    const run = <T>(answer: () => T) => async () => {
      runs += 1;
      return answer();
    };
    await expect(runIdempotent(h.db, req, run(() => ({ status: 503, headers: {}, body: { oops: true } })))).resolves.toEqual({ status: 503, headers: {}, body: { oops: true }, replayed: false });
    await expect(runIdempotent(h.db, req, run(() => { throw new Error('boom'); }))).rejects.toThrow('boom');
    const again = await runIdempotent(h.db, req, run(() => ({ status: 201, headers: {}, body: { ok: 1 } })));
    expect(again).toEqual({ status: 201, headers: {}, body: { ok: 1 }, replayed: false });
    expect(runs).toBe(3);
    // Only now is an answer kept: a fourth attempt replays it without running.
    const replay = await runIdempotent(h.db, req, run(() => ({ status: 500, headers: {}, body: null })));
    expect(replay).toEqual({ status: 201, headers: {}, body: { ok: 1 }, replayed: true });
    expect(runs).toBe(3);
  });

  it.each([['an empty key', ''], ['a 256-character key', 'k'.repeat(256)], ['a non-printable key', 'tab\there']])('rejects %s', async (_label, key) => {
    const res = await request(h.app).post('/v1/templates').set(await h.auth.headers(apiKeyPrincipal())).set('Idempotency-Key', key).send({ name: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].pointer).toBe('/header/idempotency-key');
  });
});
