// The sandbox side of tunnels: the WebSocket at `/api/v1/sandboxes/{name}/tunnel` checks the gateway's principal
// (role restorer), the sandbox (exposed, Ready), records the opening in the audit log, then carries the bytes of one
// TCP connection to the sandbox's server (here a TCP echo server).
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { STRATA_PRINCIPAL_HEADER } from '@sigil/kit/auth';
import { createStrataTestAuth, deferred, freshTestDatabase, roundTrip, silentLogger, strataPrincipal, within, type StrataTestAuth } from '@sigil/kit/testing';
import { strataEventSubject } from '@sigil/proto/strata-jobs';
import type { StrataRole } from '@sigil/proto/strata';
import type { CatalogClient } from '../src/catalog-client.ts';
import { createDb, type Db } from '../src/db.ts';
import { createSandboxService, type SandboxService } from '../src/sandboxes.ts';
import { attachTunnel } from '../src/tunnel.ts';

const migrationsDir = path.resolve(import.meta.dirname, '../../../prisma/sandbox/migrations');
const NOW = new Date('2026-11-20T03:30:00.000Z');
const WAIT_MS = 5000;
const READY = 'postgres-main-sbx-tunnel';
const tunnelPath = (name: string) => `/api/v1/sandboxes/${name}/tunnel`;

/** The tunnel never asks the catalog. */
const unusedCatalog: CatalogClient = {
  prepare: () => Promise.reject(new Error('the catalog is not part of this test')),
  start: () => Promise.reject(new Error('the catalog is not part of this test')),
  fail: () => Promise.reject(new Error('the catalog is not part of this test')),
};

let auth: StrataTestAuth;
let db: Db;
let cell: string;
let echo: net.Server;
let echoPort: number;
const echoConnections = new Set<net.Socket>();
let server: http.Server;
let port: number;
let tunnel: { close(): void };
/** When set, `find` waits for it (a request held in the middle of its checks). */
let findGate: { entered: () => void; released: Promise<void> } | undefined;
const clients: WebSocket[] = [];

async function insertSandbox(name: string, overrides: Partial<Parameters<Db['sandbox']['create']>[0]['data']> = {}): Promise<void> {
  await db.sandbox.create({
    data: {
      id: `sbx_${randomBytes(6).toString('hex')}`, namespace: 'default', name, engine: 'postgres', phase: 'Ready', message: 'ready', owner: 'ada@example.test',
      targetNamespace: 'default', targetName: 'postgres-main', backupId: 'bk-1', restoreName: 'postgres-main-restore-1', databases: ['app'], database: 'app',
      host: '127.0.0.1', port: echoPort, username: 'strata', sizeLimitBytes: 1024n ** 3n, ttlSeconds: 3600, maxTtlSeconds: 21600,
      expiresAt: new Date('2026-11-20T04:00:00Z'), expose: true, masks: [], postRestoreSql: [],
      ...overrides,
    },
  });
}

interface AuditReport {
  type: string;
  data: { time: string; user: string; role: string; action: string; target: string; object: string; outcome: string; from: string; detail: Record<string, unknown> };
}

async function tunnelAudits(): Promise<Array<{ subject: string; payload: AuditReport }>> {
  const rows = await db.$queryRawUnsafe<Array<{ subject: string; payload: AuditReport }>>(
    `SELECT subject, payload FROM outbox_events WHERE payload->>'type' = 'audit.recorded' AND payload->'data'->>'action' = 'openSandboxTunnel' ORDER BY created_at, id`,
  );
  return rows;
}

type Attempt = { kind: 'open'; ws: WebSocket } | { kind: 'refused'; status: number; body: { error?: string } };

async function principalHeaders(principal: ReturnType<typeof strataPrincipal> | string | undefined): Promise<Record<string, string>> {
  if (principal === undefined) return {};
  if (typeof principal === 'string') return { [STRATA_PRINCIPAL_HEADER]: principal };
  return auth.headers(principal);
}

/** Opens the tunnel WebSocket as the gateway would: the open socket, or the HTTP answer that refused it. */
async function attempt(name: string, principal: ReturnType<typeof strataPrincipal> | string | undefined, pathOverride?: string): Promise<Attempt> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}${pathOverride ?? tunnelPath(name)}`, { headers: await principalHeaders(principal) });
  clients.push(ws);
  return within(
    new Promise<Attempt>((resolve, reject) => {
      ws.once('open', () => resolve({ kind: 'open', ws }));
      ws.once('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let body: { error?: string };
          try {
            body = JSON.parse(text) as { error?: string };
          } catch {
            body = { error: `(not JSON) ${text}` };
          }
          resolve({ kind: 'refused', status: res.statusCode ?? 0, body });
        });
      });
      ws.once('error', reject);
    }),
    `the answer to the tunnel of ${name}`,
  );
}

async function expectRefused(name: string, principal: ReturnType<typeof strataPrincipal> | string | undefined, status: number, message: string | RegExp, pathOverride?: string): Promise<void> {
  const audits = (await tunnelAudits()).length;
  const result = await attempt(name, principal, pathOverride);
  expect(result.kind).toBe('refused');
  if (result.kind !== 'refused') return;
  expect(result.status).toBe(status);
  expect(Object.keys(result.body)).toEqual(['error']);
  expect(result.body.error).toMatch(message);
  expect((await tunnelAudits()).length).toBe(audits);
}

beforeAll(async () => {
  auth = await createStrataTestAuth();
  cell = `t${randomBytes(4).toString('hex')}`;
  db = createDb(await freshTestDatabase('strata_sandbox_test_tunnel', migrationsDir));
  echo = net.createServer((socket) => {
    echoConnections.add(socket);
    socket.once('close', () => echoConnections.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.pipe(socket);
  });
  echo.listen(0, '127.0.0.1');
  await once(echo, 'listening');
  echoPort = (echo.address() as AddressInfo).port;

  const service: SandboxService = createSandboxService({
    db, catalog: unusedCatalog, secretsKey: randomBytes(32), clock: () => NOW, cell, defaultTtl: '1h', maxTtl: '6h', kick: () => undefined, log: silentLogger(),
  });
  const sandboxes: SandboxService = {
    ...service,
    async find(name) {
      const gate = findGate;
      if (gate) {
        gate.entered();
        await gate.released;
      }
      return service.find(name);
    },
  };
  server = http.createServer((_req, res) => res.writeHead(404).end());
  tunnel = attachTunnel(server, { db, sandboxes, verifyPrincipal: auth.verify, log: silentLogger(), cell, clock: () => NOW });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;

  await insertSandbox(READY);
  await insertSandbox('hidden-sbx', { expose: false });
  await insertSandbox('restoring-sbx', { phase: 'Restoring', message: 'restoring' });
  await insertSandbox('portless-sbx', { port: null });
  await insertSandbox('expired-sbx', { phase: 'Expired', message: 'expired' });
  await insertSandbox('gone-sbx', { phase: 'Deleted', message: 'deleted' });
});

afterEach(() => {
  for (const ws of clients.splice(0)) ws.terminate();
});

afterAll(async () => {
  tunnel?.close();
  await new Promise<void>((resolve) => {
    if (!server) return resolve();
    server.closeAllConnections();
    server.close(() => resolve());
  });
  for (const socket of echoConnections) socket.destroy();
  await new Promise<void>((resolve) => (echo ? echo.close(() => resolve()) : resolve()));
  await db?.$disconnect();
});

describe('refusals', () => {
  it('answers 404 for an upgrade on another path', async () => {
    await expectRefused(READY, strataPrincipal('restorer'), 404, 'No operation exists at this path.', `/api/v1/sandboxes/${READY}`);
    await expectRefused(READY, strataPrincipal('restorer'), 404, 'No operation exists at this path.', '/api/v1/sandboxes');
  });

  it('answers 401 without a principal, with a garbled one and with one signed by another key', async () => {
    await expectRefused(READY, undefined, 401, 'Valid access credentials are required.');
    await expectRefused(READY, 'not-a-token', 401, 'Valid access credentials are required.');
    const stranger = await createStrataTestAuth();
    await expectRefused(READY, await stranger.sign(strataPrincipal('restorer-admin')), 401, 'Valid access credentials are required.');
  });

  it.each(['viewer', 'operator'] as const)('answers 403 to a %s, before looking the sandbox up', async (role: StrataRole) => {
    await expectRefused(READY, strataPrincipal(role), 403, `This operation needs the role restorer; you are ${role}.`);
    await expectRefused('no-such-sbx', strataPrincipal(role), 403, `This operation needs the role restorer; you are ${role}.`);
  });

  it('answers 404 for an unknown or deleted sandbox', async () => {
    await expectRefused('no-such-sbx', strataPrincipal('restorer'), 404, 'Sandbox no-such-sbx was not found.');
    await expectRefused('gone-sbx', strataPrincipal('restorer'), 404, 'Sandbox gone-sbx was not found.');
  });

  it('answers 409 for a sandbox that is not exposed', async () => {
    await expectRefused('hidden-sbx', strataPrincipal('restorer-admin'), 409, 'Sandbox hidden-sbx is not exposed; create it with expose: true (strata sandbox create --expose).');
  });

  it('answers 409 for a sandbox that is not Ready or has no port yet', async () => {
    await expectRefused('restoring-sbx', strataPrincipal('restorer'), 409, 'Sandbox restoring-sbx is Restoring; its tunnel opens once it is Ready.');
    await expectRefused('expired-sbx', strataPrincipal('restorer'), 409, 'Sandbox expired-sbx is Expired; its tunnel opens once it is Ready.');
    await expectRefused('portless-sbx', strataPrincipal('restorer'), 409, 'Sandbox portless-sbx is Ready; its tunnel opens once it is Ready.');
  });
});

describe('open tunnels', () => {
  it.each(['restorer', 'restorer-admin'] as const)('carries the bytes of a %s to the sandbox server and back', async (role) => {
    const before = new Set(echoConnections);
    const result = await attempt(READY, strataPrincipal(role));
    expect(result.kind).toBe('open');
    if (result.kind !== 'open') return;
    const bytes = Buffer.from([0, 1, 2, 0xfe, 0xff, ...Buffer.from(`SELECT 1; -- as ${role}`)]);
    expect(await roundTrip(result.ws, bytes)).toEqual(bytes);
    // Its own TCP connection to the server.
    expect([...echoConnections].filter((socket) => !before.has(socket))).toHaveLength(1);
    const big = randomBytes(300 * 1024);
    expect((await roundTrip(result.ws, big)).equals(big)).toBe(true);
  });

  it('ends the TCP connection to the server when the WebSocket closes', async () => {
    const before = new Set(echoConnections);
    const result = await attempt(READY, strataPrincipal('restorer'));
    if (result.kind !== 'open') throw new Error(`refused: ${JSON.stringify(result)}`);
    await roundTrip(result.ws, Buffer.from('ping'));
    const mine = [...echoConnections].find((socket) => !before.has(socket));
    expect(mine).toBeDefined();
    const closed = new Promise((resolve) => mine?.once('close', resolve));
    result.ws.close();
    await within(closed, 'the TCP connection to the server to close');
  });

  it('records each opening in the audit log, through the outbox', async () => {
    const before = (await tunnelAudits()).length;
    const principal = strataPrincipal('restorer', { email: 'grace@example.test', id: 'user-grace' });
    const result = await attempt(READY, principal);
    expect(result.kind).toBe('open');
    const audits = await tunnelAudits();
    expect(audits.length).toBe(before + 1);
    const { subject, payload } = audits.at(-1) as { subject: string; payload: AuditReport };
    expect(subject).toBe(strataEventSubject('audit.recorded', cell));
    expect(payload.type).toBe('audit.recorded');
    expect(payload.data).toEqual({
      time: NOW.toISOString(), user: 'grace@example.test', role: 'restorer', action: 'openSandboxTunnel', target: 'default/postgres-main',
      object: READY, outcome: 'ok', from: expect.stringMatching(/127\.0\.0\.1$/), detail: {},
    });
  });

  it('survives a caller that goes away while its tunnel is being checked', async () => {
    const upgradeSeen = deferred<Duplex>();
    const capture = (_req: http.IncomingMessage, socket: Duplex) => upgradeSeen.resolve(socket);
    server.on('upgrade', capture);
    const entered = deferred();
    const released = deferred();
    findGate = { entered: entered.resolve, released: released.promise };
    const uncaught: Error[] = [];
    const saved = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    const onUncaught = (error: Error) => void uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    const audits = (await tunnelAudits()).length;
    try {
      const token = await auth.sign(strataPrincipal('restorer'));
      const raw = net.connect(port, '127.0.0.1');
      raw.on('error', () => undefined);
      await within(once(raw, 'connect'), 'the raw connection');
      raw.write(
        `GET ${tunnelPath(READY)} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n` +
          `Sec-WebSocket-Key: ${Buffer.from('0123456789abcdef').toString('base64')}\r\n${STRATA_PRINCIPAL_HEADER}: ${token}\r\n\r\n`,
      );
      const serverSide = await within(upgradeSeen.promise, 'the upgrade');
      await within(entered.promise, 'the sandbox look-up');
      const closed = new Promise((resolve) => serverSide.once('close', resolve));
      raw.resetAndDestroy();
      await within(closed, 'the service to see the caller go');
      findGate = undefined;
      released.resolve();
      // The checks go on to their end (the audit record), then find the socket gone.
      const deadline = Date.now() + WAIT_MS;
      while ((await tunnelAudits()).length === audits && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      findGate = undefined;
      released.resolve();
      server.off('upgrade', capture);
      process.off('uncaughtException', onUncaught);
      for (const listener of saved) process.on('uncaughtException', listener);
    }
    expect(uncaught.map((error) => error.message)).toEqual([]);
    // The service still answers.
    const result = await attempt(READY, strataPrincipal('restorer'));
    expect(result.kind).toBe('open');
  });
});
