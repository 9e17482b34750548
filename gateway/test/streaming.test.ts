import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { once } from 'node:events';
import express from 'express';
import { buildGateway, createTestKeys, listen, startFakeAccounts, type FakeAccounts, type GatewayUnderTest } from './helpers.ts';

/** Resolvable promise. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const MB = 1024 * 1024;
const CHUNK = Buffer.alloc(256 * 1024, 0x61);

let accounts: FakeAccounts;
let service: { url: string; close(): Promise<void> };
let gatewayServer: { url: string; close(): Promise<void> };
let gateway: GatewayUnderTest;

/** Upload observation: bytes counted by the upstream and the moment its first chunk arrived. */
let uploadStarted = deferred();
let downloadRelease = deferred();
let upstreamAborted = deferred();

beforeAll(async () => {
  const keys = await createTestKeys();
  accounts = await startFakeAccounts(keys.verify);
  const app = express();
  // Counts the bytes of an upload as they arrive and answers the total at the end.
  app.post('/v1/templates/:id/files', (req, res) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      if (bytes === 0) uploadStarted.resolve();
      bytes += chunk.length;
    });
    req.on('end', () => void res.status(201).json({ bytes, contentType: req.headers['content-type'] }));
  });
  // Writes part of a document, waits for the test to release it, then writes the rest.
  app.get('/v1/templates/:id/versions/:version/document', async (_req, res) => {
    res.status(200).type('application/pdf');
    res.write(Buffer.from('%PDF-1.7 first part\n'));
    await downloadRelease.promise;
    res.end(Buffer.from('second part\n%%EOF\n'));
  });
  // A server-sent event stream that never ends on its own.
  app.get('/v1/envelopes/:id/events/stream', (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write('id: 1\ndata: {"seq":1}\n\n');
    const timer = setInterval(() => res.write(': keep-alive\n\n'), 50);
    res.on('close', () => {
      clearInterval(timer);
      upstreamAborted.resolve();
    });
    void req;
  });
  service = await listen(app);
  gateway = await buildGateway(keys, { accounts: accounts.url, templates: service.url, evidence: service.url });
  gatewayServer = await listen(gateway.app);
});

afterAll(async () => {
  await gatewayServer?.close();
  await gateway?.close();
  await service?.close();
  await accounts?.close();
});

describe('streaming', () => {
  it('streams a 20 MB upload: the service reads the first bytes before the client has sent the rest', async () => {
    uploadStarted = deferred();
    const { key } = accounts.addKey();
    const total = 20 * MB;
    const req = http.request(`${gatewayServer.url}/v1/templates/tpl_1234567890/files`, {
      method: 'POST',
      headers: { 'content-type': 'application/pdf', authorization: `Bearer ${key}` }, // chunked: no content-length
    });
    const response = once(req, 'response') as Promise<[http.IncomingMessage]>;
    req.write(CHUNK);
    // A buffering proxy would wait for the end of the body; this one hands the first chunk over at once.
    await Promise.race([
      uploadStarted.promise,
      new Promise((_, reject) => setTimeout(() => reject(new Error('upstream saw nothing before the upload ended')), 5000)),
    ]);
    let sent = CHUNK.length;
    while (sent < total) {
      if (!req.write(CHUNK)) await once(req, 'drain');
      sent += CHUNK.length;
    }
    req.end();
    const [res] = await response;
    const body = JSON.parse(Buffer.concat(await res.toArray()).toString()) as { bytes: number; contentType: string };
    expect(res.statusCode).toBe(201);
    expect(body).toEqual({ bytes: total, contentType: 'application/pdf' });
  });

  it('streams a response: the client reads the first part while the service still holds the rest', async () => {
    downloadRelease = deferred();
    const { key } = accounts.addKey();
    const req = http.get(`${gatewayServer.url}/v1/templates/tpl_1234567890/versions/1/document`, { headers: { 'x-api-key': key } });
    const [res] = (await once(req, 'response')) as [http.IncomingMessage];
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    const [first] = (await once(res, 'data')) as [Buffer];
    expect(first.toString()).toContain('first part');
    downloadRelease.resolve();
    const rest = Buffer.concat(await res.toArray()).toString();
    expect(first.toString() + rest).toBe('%PDF-1.7 first part\nsecond part\n%%EOF\n');
  });

  it('relays server-sent events as they come and stops the upstream when the client leaves', async () => {
    upstreamAborted = deferred();
    const { key } = accounts.addKey();
    const req = http.get(`${gatewayServer.url}/v1/envelopes/env_1234567890/events/stream`, { headers: { 'x-api-key': key } });
    const [res] = (await once(req, 'response')) as [http.IncomingMessage];
    expect(res.headers['content-type']).toBe('text/event-stream');
    let text = '';
    for await (const chunk of res) {
      text += String(chunk);
      if (text.includes('keep-alive')) break;
    }
    expect(text).toContain('data: {"seq":1}');
    req.destroy();
    await Promise.race([
      upstreamAborted.promise,
      new Promise((_, reject) => setTimeout(() => reject(new Error('upstream stream was not closed')), 5000)),
    ]);
  });
});
