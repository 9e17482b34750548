// Signing with the real envelopes client against an envelopes that cannot be reached or fails: the signer gets a 503
// naming envelopes, never the 401 of a token that is not valid; a token envelopes refuses stays 401.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAuth, freshTestDatabase, silentLogger } from '@sigil/kit/testing';
import { randomBase62 } from '@sigil/kit/ids';
import { createS3FileStore } from '@strata/stream/file-store';
import { testFileStoreOptions } from '@strata/stream/testing';
import { createApp } from '../src/app.ts';
import { createDb, type Db } from '../src/db.ts';
import { createEnvelopesClient } from '../src/envelopes-client.ts';
import { migrationsDir, Outbox } from './helpers.ts';

let db: Db;
let envelopes: http.Server;
/** What the envelopes server below answers: its status and problem. */
let answer = { status: 500, body: { type: 'https://sigil.dev/problems/internal', title: 'Internal server error', status: 500, detail: 'An unexpected error occurred.' } };
let closedPortUrl: string;

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function signingAppCalling(baseUrl: string): Promise<Express> {
  const auth = await createTestAuth();
  const store = await createS3FileStore(testFileStoreOptions('sigil-attachments-test'));
  const outbox = new Outbox();
  const client = createEnvelopesClient({ baseUrl, signPrincipal: auth.sign, timeoutMs: 5000 });
  return (await createApp({ db, log: silentLogger(), verifyPrincipal: auth.verify, envelopes: client, store, mailer: outbox, sms: outbox })).app;
}

const sessionToken = () => `sgls_${randomBase62(40)}`;

beforeAll(async () => {
  db = createDb(await freshTestDatabase('sigil_signing_test_outage', migrationsDir));
  envelopes = http.createServer((_req, res) => {
    res.writeHead(answer.status, { 'content-type': 'application/problem+json' }).end(JSON.stringify(answer.body));
  });
  await listen(envelopes);
  const closed = http.createServer();
  closedPortUrl = await listen(closed);
  await new Promise<void>((resolve) => closed.close(() => resolve()));
});
afterAll(async () => {
  await new Promise<void>((resolve) => envelopes?.close(() => resolve()));
  await db?.$disconnect();
});

describe('envelopes that cannot be reached', () => {
  it('a session token as a bearer, or exchanged, is a 503 naming envelopes', async () => {
    const app = await signingAppCalling(closedPortUrl);
    const session = await request(app).get('/v1/signing/session').set({ authorization: `Bearer ${sessionToken()}` });
    expect(session.status, JSON.stringify(session.body)).toBe(503);
    expect(session.headers['content-type']).toMatch(/problem\+json/);
    expect(session.body.detail).toMatch(/envelopes service/);
    const exchanged = await request(app).post('/v1/signing/exchange').send({ token: sessionToken() });
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(503);
    expect(exchanged.body.detail).toMatch(/envelopes service/);
  });
});

describe('envelopes that answer', () => {
  let app: Express;
  beforeAll(async () => {
    app = await signingAppCalling(`http://127.0.0.1:${(envelopes.address() as AddressInfo).port}`);
  });

  it('a 500 is a 503 naming envelopes as not available, for a bearer and for the exchange', async () => {
    answer = { ...answer, status: 500 };
    const session = await request(app).get('/v1/signing/session').set({ authorization: `Bearer ${sessionToken()}` });
    expect(session.status, JSON.stringify(session.body)).toBe(503);
    expect(session.body).toMatchObject({ status: 503, detail: expect.stringMatching(/envelopes service is not available/) });
    const exchanged = await request(app).post('/v1/signing/exchange').send({ token: sessionToken() });
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(503);
    expect(exchanged.body.detail).toMatch(/envelopes service is not available/);
  });

  it('a token envelopes refuses (401) stays a 401 that says the token is not valid', async () => {
    answer = { status: 401, body: { type: 'https://sigil.dev/problems/unauthorized', title: 'Unauthorized', status: 401, detail: 'The token is not valid.' } };
    const session = await request(app).get('/v1/signing/session').set({ authorization: `Bearer ${sessionToken()}` });
    expect(session.status, JSON.stringify(session.body)).toBe(401);
    expect(session.body.detail).toMatch(/signing token/);
    const exchanged = await request(app).post('/v1/signing/exchange').send({ token: sessionToken() });
    expect(exchanged.status).toBe(401);
    expect(exchanged.body.detail).toMatch(/signing token is not valid/);
  });
});
