import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { pino } from 'pino';
import type { Express } from 'express';
import { createContractApp, problemRenderer, type ContractOperation, type ErrorRenderer } from '../src/api/index.ts';
import { strataErrorRenderer } from '../src/api/strata-app.ts';
import { AppError } from '../src/errors.ts';
import { clientAddress } from '../src/http/client-address.ts';

/** A small contract: one operation with a JSON body, one public read, one of another service, one nobody serves. */
const document = {
  openapi: '3.1.0',
  info: { title: 'test', version: '1' },
  components: { securitySchemes: { token: { type: 'apiKey', in: 'header', name: 'x-test-principal' } } },
  paths: {
    '/things': {
      post: {
        operationId: 'createThing',
        security: [{ token: [] }],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 10 } }, additionalProperties: false } } },
        },
        responses: { '201': { description: 'created' } },
      },
      get: { operationId: 'listThings', security: [], responses: { '200': { description: 'ok' } } },
    },
    '/others': { get: { operationId: 'listOthers', security: [], responses: { '200': { description: 'ok' } } } },
    '/later': { get: { operationId: 'listLater', security: [], responses: { '200': { description: 'ok' } } } },
  },
};

const operations: ContractOperation[] = [
  { operationId: 'createThing', service: 'things' },
  { operationId: 'listThings', service: 'things' },
  { operationId: 'listOthers', service: 'others' },
  { operationId: 'listLater', service: 'things' },
];

interface TestPrincipal {
  name: string;
  admin: boolean;
}

function memoryLog() {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => void (lines.push(String(chunk)), done()) });
  return { lines, log: pino({ level: 'trace' }, sink) };
}

async function build(errors: ErrorRenderer, log = memoryLog().log): Promise<Express> {
  return createContractApp<TestPrincipal, ContractOperation>({
    document,
    operations,
    service: 'things',
    log,
    errors,
    caller: {
      principalHeader: 'x-test-principal',
      verify: async (token) => {
        if (!token.startsWith('ok:')) throw new Error('signature verification failed');
        return { name: token.slice(3), admin: token.endsWith('admin') };
      },
      schemes: { token: () => true },
      unauthenticated: (_op, reason) => new AppError('unauthorized', reason === 'invalid' ? 'Bad token.' : 'Who are you?'),
      authorize: (principal) => {
        if (!principal.admin) throw new AppError('forbidden', 'Admins only.');
      },
    },
    handlers: {
      createThing: async ({ body, principal, from }) => ({ status: 201, body: { ...(body as object), by: principal?.name, from } }),
      listThings: async () => ({ status: 200, body: [] }),
    },
  });
}

describe('the contract app builder', () => {
  let app: Express;
  beforeAll(async () => {
    app = await build(problemRenderer);
  });
  const admin = { 'x-test-principal': 'ok:admin' };

  it('serves a bound operation with the verified caller and the caller address', async () => {
    const res = await request(app).post('/things').set(admin).set('x-forwarded-for', '198.51.100.9, 203.0.113.5').send({ name: 'a' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ name: 'a', by: 'admin', from: '203.0.113.5' });
  });

  it('checks 401, then 403, then the body type (415), then the input (400)', async () => {
    expect((await request(app).post('/things').send({ name: 'a' })).status).toBe(401);
    expect((await request(app).post('/things').set({ 'x-test-principal': 'ok:bob' }).set('content-type', 'text/plain').send('x')).status).toBe(403);
    const wrongType = await request(app).post('/things').set(admin).set('content-type', 'text/plain').send('{"name":"a"}');
    expect(wrongType.status).toBe(415);
    expect(wrongType.body).toMatchObject({ title: 'Unsupported media type', detail: 'This operation takes a body of type application/json; the request has Content-Type text/plain.' });
    const noType = await request(app).post('/things').set(admin).set('content-type', '').send(Buffer.from('{"name":"a"}'));
    expect(noType.status).toBe(415);
    expect(noType.body.detail).toContain('the request has no Content-Type');
    const missing = await request(app).post('/things').set(admin);
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ detail: 'The request body is required (Content-Type: application/json).', errors: [{ pointer: '/body' }] });
    const invalid = await request(app).post('/things').set(admin).send({ name: 'much too long for it' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors[0].pointer).toBe('/body/name');
  });

  it('refuses NUL characters (which PostgreSQL cannot store) in the body as invalid input, not a 500', async () => {
    const res = await request(app).post('/things').set(admin).send({ name: 'a\u0000b' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ detail: 'Field name must not contain the NUL character (U+0000).', errors: [{ pointer: '/body/name' }] });
    // Operations open to anyone too (openapi-backend never calls them "authorized").
    const open = await request(app).get('/things?q=a%00b');
    expect(open.status).toBe(400);
    expect(open.body.errors).toEqual([{ pointer: '/query/q', detail: 'must not contain the NUL character (U+0000)' }]);
  });

  it('refuses an unpaired surrogate (not Unicode; jsonb refuses its escape) as invalid input, not a 500', async () => {
    const res = await request(app).post('/things').set(admin).set('content-type', 'application/json').send('{"name":"a\\ud800b"}');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ detail: 'Field name must be well-formed Unicode (it holds an unpaired surrogate).', errors: [{ pointer: '/body/name' }] });
    const paired = await request(app).post('/things').set(admin).set('content-type', 'application/json').send('{"name":"a\\ud83d\\ude00"}');
    expect(paired.status).not.toBe(400);
  });

  it('says how large a body may be', async () => {
    const res = await request(app).post('/things').set(admin).send({ name: 'x'.repeat(1_100_000) });
    expect(res.status).toBe(413);
    expect(res.body.detail).toBe('The request body is too large (the limit is 1 MiB).');
  });

  it("answers 503 for another service's operations, 501 naming its own without a handler, 404 for paths it does not have", async () => {
    const other = await request(app).get('/others');
    expect(other.status).toBe(503);
    expect(other.body).toMatchObject({ title: 'Service unavailable', detail: 'The others service is not available.' });
    const later = await request(app).get('/later');
    expect(later.status).toBe(501);
    expect(later.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(later.body).toMatchObject({ type: 'https://sigil.dev/problems/not-implemented', title: 'Not implemented', status: 501, detail: 'The things service does not implement listLater yet.' });
    expect((await request(app).get('/nothing-here')).status).toBe(404);
    expect((await request(app).delete('/things')).status).toBe(405);
  });

  it('logs a principal that fails verification, never the token', async () => {
    const { lines, log } = memoryLog();
    const logged = await build(problemRenderer, log);
    const res = await request(logged).post('/things').set({ 'x-test-principal': 'forged-secret-token' }).send({ name: 'a' });
    expect(res.status).toBe(401);
    expect(res.body.detail).toBe('Bad token.');
    const failure = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((entry) => entry.msg === 'principal verification failed');
    expect(failure).toMatchObject({ level: 40, path: '/things', reason: 'signature verification failed' });
    expect(lines.join('\n')).not.toContain('forged-secret-token');
  });

  it("renders the same errors in Strata's { error } shape", async () => {
    const strata = await build(strataErrorRenderer);
    const res = await request(strata).post('/things').set(admin).set('content-type', 'text/plain').send('x');
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ error: 'This operation takes a body of type application/json; the request has Content-Type text/plain.' });
    const later = await request(strata).get('/later');
    expect(later.status).toBe(501);
    expect(later.body).toEqual({ error: 'The things service does not implement listLater yet.' });
    expect((await request(strata).get('/others')).body).toEqual({ error: 'The others service is not available.' });
  });
});

describe('clientAddress', () => {
  const from = (xff: string | undefined, peer: string, trusted?: number) =>
    clientAddress({ headers: xff === undefined ? {} : { 'x-forwarded-for': xff }, socket: { remoteAddress: peer } } as never, trusted);

  it('is the socket peer without a forwarded header', () => {
    expect(from(undefined, '::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(from(undefined, '::1', 0)).toBe('::1');
  });
  it('trusts only as many hops as there are trusted proxies', () => {
    expect(from('1.1.1.1', '10.0.0.2', 0)).toBe('10.0.0.2');
    expect(from('6.6.6.6, 1.1.1.1', '10.0.0.2', 1)).toBe('1.1.1.1');
    expect(from('6.6.6.6, 1.1.1.1, 10.0.0.9', '10.0.0.2', 2)).toBe('1.1.1.1');
    expect(from('1.1.1.1', '10.0.0.2', 5)).toBe('1.1.1.1');
  });
  it('reads several headers and strips ports and IPv4-mapped prefixes', () => {
    expect(clientAddress({ headers: { 'x-forwarded-for': ['6.6.6.6', '1.1.1.1:4431'] }, socket: { remoteAddress: '10.0.0.2' } } as never, 1)).toBe('1.1.1.1');
    expect(from('[2001:db8::1]:443', '10.0.0.2', 1)).toBe('2001:db8::1');
    expect(from('::ffff:192.0.2.1', '10.0.0.2', 1)).toBe('192.0.2.1');
  });
});
