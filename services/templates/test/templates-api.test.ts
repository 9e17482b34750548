import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyPrincipal, sessionPrincipal } from '@sigil/kit/testing';
import type { Principal } from '@sigil/kit/auth';
import { startTemplatesHarness, type TemplatesHarness } from './helpers.ts';

let h: TemplatesHarness;
const org = apiKeyPrincipal();
const otherOrg = apiKeyPrincipal();

beforeAll(async () => {
  h = await startTemplatesHarness('api');
});
afterAll(async () => h?.close());

const as = async (principal: Principal) => h.auth.headers(principal);

async function create(body: unknown, principal: Principal = org, extra: Record<string, string> = {}) {
  return request(h.app).post('/v1/templates').set(await as(principal)).set(extra).send(body as object);
}

function expectProblem(res: request.Response, status: number, slug: string) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: `https://sigil.dev/problems/${slug}`, status, title: expect.any(String), detail: expect.any(String) });
  expect(res.body.requestId).toBe(res.headers['x-request-id']);
}

describe('POST /v1/templates', () => {
  it('creates a template and records a template.created event in the outbox', async () => {
    const res = await create({ name: 'NDA', description: 'Mutual NDA', metadata: { team: 'legal' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^tpl_[A-Za-z0-9]{10,40}$/),
      object: 'template',
      name: 'NDA',
      description: 'Mutual NDA',
      metadata: { team: 'legal' },
      latestVersion: null,
      hasDraft: false,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const events = await h.db.$queryRawUnsafe<{ subject: string; payload: { type: string; organizationId: string; data: { template: { id: string } } } }[]>(
      `SELECT subject, payload FROM outbox_events WHERE payload->'data'->'template'->>'id' = $1`,
      res.body.id,
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ subject: 'sigil.events.template.created', payload: { type: 'template.created', organizationId: org.organizationId } });
  });

  it.each([
    ['a missing name', {}, '/body/name'],
    ['a name of the wrong type', { name: 42 }, '/body/name'],
    ['an empty name', { name: '' }, '/body/name'],
    ['an overlong name', { name: 'x'.repeat(201) }, '/body/name'],
    ['an overlong description', { name: 'a', description: 'x'.repeat(2001) }, '/body/description'],
    ['an unknown field', { name: 'a', colour: 'red' }, '/body/colour'],
    ['a non-string metadata value', { name: 'a', metadata: { n: 1 } }, '/body/metadata/n'],
  ])('rejects %s with a pointer to the field', async (_label, body, pointer) => {
    const res = await create(body);
    expectProblem(res, 400, 'validation-failed');
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ pointer })]));
  });

  it('rejects a body that is not JSON', async () => {
    const res = await request(h.app).post('/v1/templates').set(await as(org)).set('content-type', 'application/json').send('{"name":');
    expectProblem(res, 400, 'malformed-request');
  });

  it('answers 415 for a body without a JSON Content-Type, and 413 naming the limit for a body too large', async () => {
    const plain = await request(h.app).post('/v1/templates').set(await as(org)).set('content-type', 'text/plain').send('{"name":"x"}');
    expect(plain.status).toBe(415);
    expect(plain.body).toMatchObject({ type: 'https://sigil.dev/problems/unsupported-media-type', detail: 'This operation takes a body of type application/json; the request has Content-Type text/plain.' });
    const big = await request(h.app).post('/v1/templates').set(await as(org)).send({ name: 'x', description: 'y'.repeat(1_100_000) });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ type: 'https://sigil.dev/problems/payload-too-large', detail: 'The request body is too large (the limit is 1 MiB).' });
  });

  it('answers 503 for an operation of the contract another service serves', async () => {
    const res = await request(h.app).get('/v1/envelopes').set(await as(org));
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ type: 'https://sigil.dev/problems/service-unavailable', detail: 'The envelopes service is not available.' });
  });

  it('needs a caller', async () => {
    const res = await request(h.app).post('/v1/templates').send({ name: 'x' });
    expectProblem(res, 401, 'unauthorized');
  });

  it('rejects a forged principal token', async () => {
    const res = await request(h.app).post('/v1/templates').set('x-sigil-principal', 'eyJhbGciOiJub25lIn0.e30.').send({ name: 'x' });
    expectProblem(res, 401, 'unauthorized');
  });

  it('needs template:write', async () => {
    const reader = apiKeyPrincipal({ organizationId: org.organizationId, permissions: ['template:read'] });
    const res = await create({ name: 'x' }, reader);
    expectProblem(res, 403, 'forbidden');
    expect(res.body.detail).toBe('Missing permission: template:write.');
  });

  it('accepts a dashboard session as well as an API key', async () => {
    const res = await create({ name: 'From the dashboard' }, sessionPrincipal({ organizationId: org.organizationId }));
    expect(res.status).toBe(201);
  });
});

describe('x-request-id', () => {
  it('keeps a well-formed caller id', async () => {
    const res = await request(h.app).get('/v1/templates').set(await as(org)).set('x-request-id', 'client-Abc_1.2-3');
    expect(res.headers['x-request-id']).toBe('client-Abc_1.2-3');
  });

  it.each([['short'], ['x'.repeat(129)], ['has space inside'], ['semi;colon!']])('replaces %j', async (id) => {
    const res = await request(h.app).get('/v1/templates').set(await as(org)).set('x-request-id', id);
    expect(res.headers['x-request-id']).toMatch(/^req_[A-Za-z0-9]{24}$/);
  });

  it('is on error responses too', async () => {
    const res = await request(h.app).get('/v1/templates');
    expect(res.headers['x-request-id']).toMatch(/^req_/);
  });
});

describe('GET /v1/templates', () => {
  const lister = apiKeyPrincipal();
  const names = ['Alpha lease', 'Beta lease', 'Gamma offer', 'Delta offer', 'Epsilon lease'];

  beforeAll(async () => {
    for (const name of names) expect((await create({ name }, lister)).status).toBe(201);
  });

  it('pages newest first with an opaque cursor', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: request.Response = await request(h.app)
        .get('/v1/templates')
        .query({ limit: 2, ...(cursor ? { cursor } : {}) })
        .set(await as(lister));
      expect(res.status).toBe(200);
      expect(res.body.object).toBe('list');
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.map((t: { name: string }) => t.name));
      cursor = res.body.nextCursor;
      expect(res.body.hasMore).toBe(cursor !== null);
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual([...names].reverse());
  });

  it('defaults to 20 and filters with q', async () => {
    const res = await request(h.app).get('/v1/templates').query({ q: 'LEASE' }).set(await as(lister));
    expect(res.body.data.map((t: { name: string }) => t.name)).toEqual(['Epsilon lease', 'Beta lease', 'Alpha lease']);
  });

  it('only lists the caller organization', async () => {
    const res = await request(h.app).get('/v1/templates').set(await as(apiKeyPrincipal()));
    expect(res.body.data).toEqual([]);
  });

  it.each([
    ['limit=0', { limit: '0' }, '/query/limit'],
    ['limit=101', { limit: '101' }, '/query/limit'],
    ['limit=abc', { limit: 'abc' }, '/query/limit'],
    ['limit=1.5', { limit: '1.5' }, '/query/limit'],
    ['an overlong cursor', { cursor: 'c'.repeat(201) }, '/query/cursor'],
    ['an overlong q', { q: 'q'.repeat(201) }, '/query/q'],
    ['a forged cursor', { cursor: 'bm90IGEgY3Vyc29y' }, '/query/cursor'],
  ])('rejects %s', async (_label, query, pointer) => {
    const res = await request(h.app).get('/v1/templates').query(query).set(await as(lister));
    expectProblem(res, 400, 'validation-failed');
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ pointer })]));
  });

  it('needs template:read', async () => {
    const res = await request(h.app).get('/v1/templates').set(await as(apiKeyPrincipal({ permissions: ['envelope:read'] })));
    expectProblem(res, 403, 'forbidden');
    expect(res.body.detail).toBe('Missing permission: template:read.');
  });
});

describe('GET and DELETE /v1/templates/{id}', () => {
  it('reads, deletes, then 404s', async () => {
    const { body: created } = await create({ name: 'Short-lived' });
    const got = await request(h.app).get(`/v1/templates/${created.id}`).set(await as(org));
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created);
    const deleted = await request(h.app).delete(`/v1/templates/${created.id}`).set(await as(org));
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectProblem(await request(h.app).get(`/v1/templates/${created.id}`).set(await as(org)), 404, 'not-found');
    const events = await h.db.outboxEvent.count({ where: { subject: 'sigil.events.template.deleted' } });
    expect(events).toBeGreaterThan(0);
  });

  it("hides another organization's template", async () => {
    const { body: created } = await create({ name: 'Private' });
    expectProblem(await request(h.app).get(`/v1/templates/${created.id}`).set(await as(otherOrg)), 404, 'not-found');
    expectProblem(await request(h.app).delete(`/v1/templates/${created.id}`).set(await as(otherOrg)), 404, 'not-found');
    expect((await request(h.app).get(`/v1/templates/${created.id}`).set(await as(org))).status).toBe(200);
  });

  it('rejects a malformed id', async () => {
    const res = await request(h.app).get('/v1/templates/not-a-template').set(await as(org));
    expectProblem(res, 400, 'validation-failed');
    expect(res.body.errors[0].pointer).toBe('/path/id');
  });

  it('needs template:write to delete', async () => {
    const { body: created } = await create({ name: 'Keep' });
    const res = await request(h.app).delete(`/v1/templates/${created.id}`).set(await as(apiKeyPrincipal({ organizationId: org.organizationId, permissions: ['template:read'] })));
    expectProblem(res, 403, 'forbidden');
    expect(res.body.detail).toBe('Missing permission: template:write.');
  });
});
