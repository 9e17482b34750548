import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express, { type Response } from 'express';
import request from 'supertest';
import type { Principal } from '@sigil/kit/auth';
import { createMemoryBus, type MemoryBus } from '@sigil/kit/bus';
import { problemErrorHandler } from '@sigil/kit/http';
import { sessionPrincipal, silentLogger } from '@sigil/kit/testing';
import { createGatewayApp, type GatewayApp } from '../src/app.ts';
import { createAuthenticator } from '../src/authenticator.ts';
import { changeOf, dashboardRouter } from '../src/dashboard.ts';
import { PING_SUPERGRAPH, closedPortUrl, createTestKeys, listen, startFakeAccounts, waitFor, type FakeAccounts } from './helpers.ts';

const INDEX_HTML = '<!doctype html>\n<html>\n  <head>\n    <title>Sigil</title>\n    <script type="module" src="/app/assets/index-abc123.js"></script>\n  </head>\n  <body><div id="root"></div></body>\n</html>\n';
const ASSET_JS = 'console.log("dashboard");\n';
/** Larger than compression's 1 KB threshold. */
const BIG_JS = Array.from({ length: 400 }, (_, i) => `export const line${i} = 'the dashboard';`).join('\n');
const NONCE_META = /<meta property="csp-nonce" nonce="([^"]+)" \/>/;
const STYLE_NONCE = /style-src 'self' 'nonce-([^']+)'/;

/** The dashboard router alone, mounted as the gateway mounts it (under /app, problems after it), on a given dist. */
function dashboardApp(distDir: string, sessionOf: (token: string | undefined) => Principal | undefined = () => undefined) {
  const dashboard = dashboardRouter({ distDir, log: silentLogger(), sessionOf: async (req) => sessionOf(req.headers.cookie) });
  const app = express();
  app.use('/app', dashboard.router);
  app.use(problemErrorHandler(silentLogger()));
  return { app, close: dashboard.close };
}

describe('the built app under /app', () => {
  let dist: string;
  let served: ReturnType<typeof dashboardApp>;

  beforeAll(async () => {
    dist = await mkdtemp(path.join(tmpdir(), 'sigil-dashboard-dist-'));
    await mkdir(path.join(dist, 'assets'));
    await writeFile(path.join(dist, 'index.html'), INDEX_HTML);
    await writeFile(path.join(dist, 'assets', 'index-abc123.js'), ASSET_JS);
    await writeFile(path.join(dist, 'assets', 'big-abc123.js'), BIG_JS);
    served = dashboardApp(dist);
  });

  afterAll(async () => {
    served.close();
    await rm(dist, { recursive: true, force: true });
  });

  it.each(['/app', '/app/', '/app/envelopes/env_x', '/app/templates/tpl_1/edit'])('answers index.html for %s, never cached', async (url) => {
    const res = await request(served.app).get(url);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.text).toContain('<div id="root"></div>');
    expect(res.text).toContain('src="/app/assets/index-abc123.js"');
  });

  it('writes the CSP style nonce into the page, a new one per response', async () => {
    const nonces = [];
    for (const url of ['/app', '/app/envelopes/env_x']) {
      const res = await request(served.app).get(url);
      const inPage = NONCE_META.exec(res.text)?.[1];
      const inHeader = STYLE_NONCE.exec(String(res.headers['content-security-policy']))?.[1];
      expect(inPage).toMatch(/^[A-Za-z0-9+/]{22}==$/);
      expect(inHeader).toBe(inPage);
      // The meta sits inside <head>, where react-aria looks for it.
      expect(res.text.indexOf('csp-nonce')).toBeGreaterThan(res.text.indexOf('<head>'));
      expect(res.text.indexOf('csp-nonce')).toBeLessThan(res.text.indexOf('</head>'));
      nonces.push(inPage);
    }
    expect(nonces[0]).not.toBe(nonces[1]);
  });

  it('allows scripts from the origin only and is never framed', async () => {
    const csp = String((await request(served.app).get('/app')).headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*(unsafe-inline|nonce-)/);
    expect(csp).toContain("frame-ancestors 'none'");
  });

  it('serves hashed assets as immutable for a year', async () => {
    const res = await request(served.app).get('/app/assets/index-abc123.js');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.text).toBe(ASSET_JS);
    expect(res.headers['cache-control']).toContain('immutable');
    expect(res.headers['cache-control']).toContain('max-age=31536000');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('sends assets compressed when the browser accepts it (brotli first), as they are otherwise', async () => {
    for (const [accept, encoding] of [['gzip, deflate, br', 'br'], ['gzip', 'gzip']] as const) {
      const res = await request(served.app).get('/app/assets/big-abc123.js').set('accept-encoding', accept);
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBe(encoding);
      expect(res.text).toBe(BIG_JS);
    }
    const plain = await request(served.app).get('/app/assets/big-abc123.js').set('accept-encoding', 'identity');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.text).toBe(BIG_JS);
  });

  it('answers a missing asset 404, not index.html', async () => {
    const res = await request(served.app).get('/app/assets/index-gone.js');
    expect(res.status).toBe(404);
    expect(res.text).not.toContain('<div id="root">');
  });

  it('answers 503 in plain text while dist has no index.html', async () => {
    const empty = await mkdtemp(path.join(tmpdir(), 'sigil-dashboard-empty-'));
    const unbuilt = dashboardApp(empty);
    try {
      const res = await request(unbuilt.app).get('/app/envelopes');
      expect(res.status).toBe(503);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.text).toContain('not built');
    } finally {
      unbuilt.close();
      await rm(empty, { recursive: true, force: true });
    }
  });
});

describe('a missing asset through the whole gateway', () => {
  it('is a 404, not index.html and not a 500', async () => {
    const keys = await createTestKeys();
    const gateway = await createGatewayApp({ serviceUrls: {}, signPrincipal: keys.sign, log: silentLogger(), authenticator: createAuthenticator({ accountsUrl: await closedPortUrl(), signPrincipal: keys.sign, log: silentLogger() }), supergraphSdl: PING_SUPERGRAPH });
    try {
      const res = await request(gateway.app).get('/app/assets/index-never-built.js');
      expect(res.status).toBe(404);
      expect(res.text).not.toContain('<div id="root">');
    } finally {
      await gateway.close();
    }
  });
});

/** An open `/app/live` stream: the text received so far, and a way to hang up. */
interface OpenStream {
  status: number;
  contentType: string | null;
  text(): string;
  waitFor(fragment: string): Promise<void>;
  close(): void;
}

async function openStream(url: string, cookie?: string): Promise<OpenStream> {
  const hangUp = new AbortController();
  const res = await fetch(url, { headers: cookie ? { cookie } : {}, signal: hangUp.signal });
  let received = '';
  if (res.status === 200 && res.body) {
    const decoder = new TextDecoder();
    void (async () => {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) received += decoder.decode(chunk, { stream: true });
    })().catch(() => undefined);
  } else {
    received = await res.text();
  }
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    text: () => received,
    waitFor: (fragment) => waitFor(() => received.includes(fragment), 5000),
    close: () => hangUp.abort(),
  };
}

/** The `data` of each `event: change` frame received. */
function changes(text: string): unknown[] {
  return [...text.matchAll(/^event: change\ndata: (.*)$/gm)].map((match) => JSON.parse(match[1] as string) as unknown);
}

describe('/app/live through the gateway', () => {
  let accounts: FakeAccounts;
  let bus: MemoryBus;
  let gateway: GatewayApp;
  let server: Awaited<ReturnType<typeof listen>>;
  /** Writes to live streams' responses after their client hung up (there must be none), and who hung up. */
  const watch = watchWritesAfterClose();

  beforeAll(async () => {
    const keys = await createTestKeys();
    accounts = await startFakeAccounts(keys.verify);
    bus = createMemoryBus();
    const log = silentLogger();
    gateway = await createGatewayApp({
      serviceUrls: { accounts: accounts.url },
      signPrincipal: keys.sign,
      log,
      authenticator: createAuthenticator({ accountsUrl: accounts.url, signPrincipal: keys.sign, log }),
      supergraphSdl: PING_SUPERGRAPH,
      liveFeed: bus,
    });
    const outer = express();
    outer.use('/app/live', watch.middleware);
    outer.use(gateway.app);
    server = await listen(outer);
  });

  afterAll(async () => {
    await server?.close();
    await gateway?.close();
    await bus?.close();
    await accounts?.close();
  });

  const cookieOf = (token: string) => `sigil_session=${token}`;
  const event = (organizationId: string, type: string, data: Record<string, unknown>) => ({ id: 'evt_test', type, occurredAt: '2026-11-28T02:10:00.000Z', organizationId, data });

  it('answers 401 without a session', async () => {
    const stream = await openStream(`${server.url}/app/live`);
    expect(stream.status).toBe(401);
    expect(stream.contentType).toMatch(/^application\/problem\+json/);
  });

  it("relays the session's organization's events as changes, never another organization's", async () => {
    const mine = accounts.addSession({ organizationId: 'org_mineAAAAAAAAAAAA' });
    const stream = await openStream(`${server.url}/app/live`, cookieOf(mine.token));
    try {
      expect(stream.status).toBe(200);
      expect(stream.contentType).toMatch(/^text\/event-stream/);
      await stream.waitFor('retry: 2000');
      bus.notify('sigil.events.recipient.signed', event('org_otherAAAAAAAAAAA', 'recipient.signed', { envelopeId: 'env_otherAAAAAAAAAA', testMode: false, recipientId: 'rcp_otherAAAAAAAAAA' }));
      const signed = { envelopeId: 'env_mineAAAAAAAAAAA', testMode: true, recipientId: 'rcp_mineAAAAAAAAAAA', from: 'signer@example.com', envelope: { id: 'env_mineAAAAAAAAAAA', status: 'sent', testMode: true } };
      bus.notify('sigil.events.recipient.signed', event(mine.principal.organizationId, 'recipient.signed', signed));
      await stream.waitFor('env_mineAAAAAAAAAAA');
      // The stream is ordered: had the other organization's event been relayed, it would have come first.
      expect(stream.text()).not.toContain('other');
      expect(changes(stream.text())).toEqual([
        { type: 'recipient.signed', at: '2026-11-28T02:10:00.000Z', testMode: true, ids: { envelopeId: 'env_mineAAAAAAAAAAA', recipientId: 'rcp_mineAAAAAAAAAAA' } },
      ]);
      // Which records changed, never their content.
      expect(stream.text()).not.toContain('signer@example.com');
    } finally {
      stream.close();
    }
  });

  it('relays to every open stream of the organization, with the mode of an API key event', async () => {
    const first = accounts.addSession({ organizationId: 'org_sharedAAAAAAAAAA' });
    const second = accounts.addSession({ organizationId: 'org_sharedAAAAAAAAAA' });
    const streams = [await openStream(`${server.url}/app/live`, cookieOf(first.token)), await openStream(`${server.url}/app/live`, cookieOf(second.token))];
    try {
      for (const stream of streams) await stream.waitFor('retry: 2000');
      bus.notify('sigil.events.apikey.created', event('org_sharedAAAAAAAAAA', 'apikey.created', { apiKeyId: 'key_sharedAAAAAAAAAA', mode: 'live', name: 'CI' }));
      for (const stream of streams) {
        await stream.waitFor('key_sharedAAAAAAAAAA');
        expect(changes(stream.text())).toEqual([{ type: 'apikey.created', at: '2026-11-28T02:10:00.000Z', testMode: false, ids: { apiKeyId: 'key_sharedAAAAAAAAAA' } }]);
      }
    } finally {
      for (const stream of streams) stream.close();
    }
  });

  it('stops writing to a stream once its client hangs up', async () => {
    const session = accounts.addSession({ organizationId: 'org_leavingAAAAAAAAA' });
    const stream = await openStream(`${server.url}/app/live`, cookieOf(session.token));
    await stream.waitFor('retry: 2000');
    stream.close();
    await waitFor(() => watch.closed.includes(cookieOf(session.token)));
    await new Promise((resolve) => setImmediate(resolve));
    bus.notify('sigil.events.envelope.sent', event('org_leavingAAAAAAAAA', 'envelope.sent', { envelopeId: 'env_leavingAAAAAAAA', testMode: true }));
    expect(watch.writes).toEqual([]);
  });
});

describe('/app/live heartbeats', () => {
  it('sends a comment on an idle stream every heartbeat', async () => {
    const bus = createMemoryBus();
    const principal = sessionPrincipal();
    const dashboard = dashboardRouter({ feed: bus, heartbeatSeconds: 0.05, log: silentLogger(), sessionOf: async (req) => (req.headers.cookie === 'sigil_session=ok' ? principal : undefined) });
    const watch = watchWritesAfterClose();
    const server = await listen(express().use('/app/live', watch.middleware).use('/app', dashboard.router));
    const stream = await openStream(`${server.url}/app/live`, 'sigil_session=ok');
    try {
      await stream.waitFor(': heartbeat\n\n: heartbeat\n\n');
      expect(changes(stream.text())).toEqual([]);
      stream.close();
      await waitFor(() => watch.closed.length === 1);
      // Three more heartbeats' time: a timer left running would write to the closed response.
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(watch.writes).toEqual([]);
    } finally {
      stream.close();
      dashboard.close();
      await server.close();
    }
  });
});

describe('changeOf', () => {
  it('keeps the ids of a template event and its mode from the nested record', () => {
    expect(changeOf('template.published', 'now', { template: { id: 'tpl_1', testMode: false, name: 'NDA' }, version: 3 })).toEqual({ type: 'template.published', at: 'now', testMode: false, ids: { templateId: 'tpl_1' } });
  });

  it('leaves testMode out when the event has no mode', () => {
    expect(changeOf('member.added', 'now', { memberId: 'mem_1', email: 'a@example.com', role: 'admin' })).toEqual({ type: 'member.added', at: 'now', ids: { memberId: 'mem_1' } });
  });
});

/** Notes every write a live response takes after its client hung up: a stream still fed after it left is a leak. */
function watchWritesAfterClose() {
  const writes: string[] = [];
  const closed: string[] = [];
  const middleware: express.RequestHandler = (req, res: Response, next) => {
    let hungUp = false;
    res.on('close', () => {
      hungUp = true;
      closed.push(String(req.headers.cookie));
    });
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    res.write = ((...args: unknown[]) => {
      if (hungUp) writes.push(String(args[0]));
      return write(...args);
    }) as typeof res.write;
    next();
  };
  return { writes, closed, middleware };
}
