import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, call, createKey, signUp, startTestStack, type Reply, type TestStack } from './stack.ts';
import { replicaName } from '@sigil/local-stack';

let stack: TestStack;
let base: string;
let key: string;

beforeAll(async () => {
  stack = await startTestStack();
  base = stack.gatewayUrl;
  key = stack.seed.testApiKey;
}, 180_000);
afterAll(async () => stack?.stop(), 60_000);

function expectProblem(res: Reply, status: number, slug: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: `https://sigil.dev/problems/${slug}`, status });
  expect(res.body.requestId).toBe(res.headers.get('x-request-id'));
}

describe('a new user with the seeded key', () => {
  it('gets the seeded test key from the start command', () => {
    expect(key).toMatch(/^sgl_test_[A-Za-z0-9]{32}$/);
    // One process per service and the gateway; with STACK_REPLICAS=n, `<service>#2` … `#n` besides.
    const replicas = Number(process.env.STACK_REPLICAS ?? 1);
    const services = ['accounts', 'backup-catalog', 'billing', 'envelopes', 'evidence', 'mover', 'sandbox', 'signing', 'templates', 'webhooks'];
    const expected = [...services.flatMap((s) => Array.from({ length: replicas }, (_, i) => replicaName(s, i + 1))), 'gateway'].sort();
    expect(stack.processes.map((p) => p.name).sort()).toEqual(expected);
  });

  it('creates, lists, reads and deletes templates through the gateway', async () => {
    const created = await call(base, 'POST', '/v1/templates', { body: { name: 'E2E lease', description: 'made end to end' }, headers: bearer(key) });
    expect(created.status).toBe(201);
    expect(created.body.id).toMatch(/^tpl_/);

    const listed = await call(base, 'GET', '/v1/templates?limit=5&q=e2e', { headers: { 'x-api-key': key } });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((t: { id: string }) => t.id)).toContain(created.body.id);

    const read = await call(base, 'GET', `/v1/templates/${created.body.id}`, { headers: bearer(key) });
    expect(read.body).toEqual(created.body);

    const deleted = await call(base, 'DELETE', `/v1/templates/${created.body.id}`, { headers: bearer(key) });
    expect(deleted.status).toBe(204);
    expectProblem(await call(base, 'GET', `/v1/templates/${created.body.id}`, { headers: bearer(key) }), 404, 'not-found');
  });

  it('uploads a PDF to a template through the gateway, stored in the stack\'s S3', async () => {
    const { PDFDocument } = await import('pdf-lib');
    const doc = await PDFDocument.create();
    doc.addPage([595.28, 841.89]);
    const pdf = Buffer.from(await doc.save());
    const template = await call(base, 'POST', '/v1/templates', { headers: bearer(key), body: { name: 'Upload through the gateway' } });
    const res = await fetch(`${base}/v1/templates/${template.body.id}/files`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/pdf' }, body: pdf });
    const file = await res.json();
    expect(res.status, JSON.stringify(file)).toBe(201);
    expect(file).toMatchObject({ object: 'template_file', templateId: template.body.id, pageCount: 1, size: pdf.length, converted: false });
  });

  it('sees the same templates, with their organization, through /graphql', async () => {
    const created = await call(base, 'POST', '/v1/templates', { body: { name: 'Graph visible' }, headers: bearer(key) });
    const res = await call(base, 'POST', '/graphql', {
      headers: bearer(key),
      body: { query: '{ organization { id name } templates(first: 50) { nodes { id name organization { id name } } } }' },
    });
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.organization).toEqual({ id: stack.seed.organizationId, name: 'Local Organization' });
    expect(res.body.data.templates.nodes).toContainEqual({ id: created.body.id, name: 'Graph visible', organization: { id: stack.seed.organizationId, name: 'Local Organization' } });
  });

  it('keeps a valid caller request id end to end and replaces a bad one', async () => {
    const kept = await call(base, 'GET', '/v1/templates', { headers: { ...bearer(key), 'x-request-id': 'e2e-trace.0001' } });
    expect(kept.headers.get('x-request-id')).toBe('e2e-trace.0001');
    const replaced = await call(base, 'GET', '/v1/templates', { headers: { ...bearer(key), 'x-request-id': 'bad id!' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('serves the OpenAPI document', async () => {
    const res = await call(base, 'GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.version).toBe('1.0.0');
  });
});

describe('spec-exact errors', () => {
  it.each([
    ['no key', {}],
    ['a malformed bearer key', bearer('sgl_test_short')],
    ['a malformed x-api-key', { 'x-api-key': 'not-a-key' }],
    ['a well-formed unknown key', bearer(`sgl_live_${'A'.repeat(32)}`)],
  ])('answers 401 unauthorized for %s', async (_label, headers) => {
    expectProblem(await call(base, 'GET', '/v1/templates', { headers }), 401, 'unauthorized');
  });

  it('answers 401 for a revoked key at once, and for an expired key', async () => {
    const owner = await signUp(base, `revoke-${Date.now()}@example.com`, 'Revokers');
    const doomed = await createKey(base, owner.cookie, { name: 'doomed', mode: 'test' });
    expect((await call(base, 'GET', '/v1/templates', { headers: bearer(doomed.secret) })).status).toBe(200);
    expect((await call(base, 'DELETE', `/v1/api-keys/${doomed.id}`, { headers: { cookie: owner.cookie } })).status).toBe(204);
    expectProblem(await call(base, 'GET', '/v1/templates', { headers: bearer(doomed.secret) }), 401, 'unauthorized');

    const expiring = await createKey(base, owner.cookie, { name: 'expiring', mode: 'live', expiresInDays: 1 });
    await stack.sql('accounts', `UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [expiring.id]);
    expectProblem(await call(base, 'GET', '/v1/templates', { headers: bearer(expiring.secret) }), 401, 'unauthorized');
  });

  it('answers 403 naming the missing permission', async () => {
    const owner = await signUp(base, `scopes-${Date.now()}@example.com`, 'Scoped');
    const readOnly = await createKey(base, owner.cookie, { name: 'read only', mode: 'test', scopes: ['template:read'] });
    const res = await call(base, 'POST', '/v1/templates', { body: { name: 'nope' }, headers: bearer(readOnly.secret) });
    expectProblem(res, 403, 'forbidden');
    expect(res.body.detail).toBe('Missing permission: template:write.');
  });

  it('keeps API keys to dashboard sessions', async () => {
    expectProblem(await call(base, 'GET', '/v1/api-keys', { headers: bearer(key) }), 401, 'unauthorized');
    expectProblem(await call(base, 'POST', '/v1/api-keys', { body: { name: 'x', mode: 'test' }, headers: bearer(key) }), 401, 'unauthorized');
  });

  it.each([
    ['a wrong type', 'POST', '/v1/templates', { name: 7 }, '/body/name'],
    ['an out-of-range limit', 'GET', '/v1/templates?limit=0', undefined, '/query/limit'],
    ['a limit above 100', 'GET', '/v1/templates?limit=101', undefined, '/query/limit'],
    ['an overlong cursor', 'GET', `/v1/templates?cursor=${'c'.repeat(201)}`, undefined, '/query/cursor'],
    ['an overlong q', 'GET', `/v1/templates?q=${'q'.repeat(201)}`, undefined, '/query/q'],
    ['a malformed template id', 'GET', '/v1/templates/tpl_!', undefined, '/path/id'],
  ])('answers 400 validation-failed for %s', async (_label, method, pathName, body, pointer) => {
    const res = await call(base, method, pathName, { body, headers: bearer(key) });
    expectProblem(res, 400, 'validation-failed');
    expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
  });

  it("answers 404 for another organization's template", async () => {
    const other = await signUp(base, `foreign-${Date.now()}@example.com`, 'Foreigners');
    const otherKey = await createKey(base, other.cookie, { name: 'theirs', mode: 'live' });
    const theirs = await call(base, 'POST', '/v1/templates', { body: { name: 'Theirs' }, headers: bearer(otherKey.secret) });
    expectProblem(await call(base, 'GET', `/v1/templates/${theirs.body.id}`, { headers: bearer(key) }), 404, 'not-found');
    expectProblem(await call(base, 'DELETE', `/v1/templates/${theirs.body.id}`, { headers: bearer(key) }), 404, 'not-found');
  });

  it('replays, refuses reuse, and creates exactly one template under concurrency with one Idempotency-Key', async () => {
    const idem = `e2e-${Date.now()}`;
    const results = await Promise.all(
      Array.from({ length: 10 }, () => call(base, 'POST', '/v1/templates', { body: { name: 'Concurrent' }, headers: { ...bearer(key), 'Idempotency-Key': idem } })),
    );
    const created = results.filter((r) => r.status === 201);
    expect(results.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    const replay = await call(base, 'POST', '/v1/templates', { body: { name: 'Concurrent' }, headers: { ...bearer(key), 'Idempotency-Key': idem } });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const { rows } = await stack.sql('templates', `SELECT count(*)::int AS n FROM templates WHERE name = 'Concurrent' AND organization_id = $1`, [stack.seed.organizationId]);
    expect(rows[0].n).toBe(1);
    expectProblem(await call(base, 'POST', '/v1/templates', { body: { name: 'Different' }, headers: { ...bearer(key), 'Idempotency-Key': idem } }), 422, 'idempotency-key-reused');
  });
});
