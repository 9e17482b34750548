// The gateway side of sandbox tunnels (`GET /api/v1/sandboxes/{name}/tunnel`, a WebSocket upgrade): the access token
// is judged like any console call (role restorer), the raw credentials are replaced by the signed principal, and the
// upgrade is relayed to the sandbox service, whose refusals come back as they are.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import http, { type IncomingHttpHeaders } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { createStrataPrincipalSigner, createStrataPrincipalVerifier, generateInternalKeyPair, type StrataPrincipalSigner, type StrataPrincipalVerifier } from '@sigil/kit/auth';
import { deferred, roundTrip, silentLogger, within } from '@sigil/kit/testing';
import { STRATA, type StrataRole } from '@sigil/proto/strata';
import { createStrataAuthenticator, type StrataAuthenticator } from '../src/strata-auth.ts';
import { attachStrataTunnel, type StrataTunnelDeps } from '../src/strata-tunnel.ts';
import { closedPortUrl } from './helpers.ts';

const ISS = 'https://team.access.example.test';
const AUD = 'strata-tunnel-aud';
const KID = 'tunnel-es-1';
const TUNNEL = '/api/v1/sandboxes/sbx-orders-1/tunnel';

interface Running {
  server: http.Server;
  url: string;
  port: number;
  close(): Promise<void>;
}

async function listenOn(server: http.Server): Promise<Running> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface SandboxUpgrade {
  url: string;
  headers: IncomingHttpHeaders;
  /** The connection the gateway opened to relay the upgrade. */
  socket: Duplex;
}

/** A stand-in for the sandbox service: records each upgrade it gets, echoes the bytes of accepted ones. */
interface FakeSandbox extends Running {
  upgrades: SandboxUpgrade[];
  /** Answer the next upgrades with this HTTP error instead (undefined: accept). */
  refuseWith(refusal: { status: number; body: string } | undefined): void;
  /** Hold the next upgrades until the returned function is called. */
  hold(): { received: Promise<void>; release(): void };
}

async function startFakeSandbox(): Promise<FakeSandbox> {
  const upgrades: SandboxUpgrade[] = [];
  const wss = new WebSocketServer({ noServer: true });
  let refusal: { status: number; body: string } | undefined;
  let gate: { received: () => void; released: Promise<void> } | undefined;
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    upgrades.push({ url: req.url ?? '', headers: req.headers, socket });
    const answer = () => {
      if (refusal) {
        const { status, body } = refusal;
        socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        ws.on('message', (data: RawData, isBinary: boolean) => ws.send(data as Buffer, { binary: isBinary }));
      });
    };
    if (!gate) return answer();
    gate.received();
    void gate.released.then(answer);
  });
  const running = await listenOn(server);
  return {
    ...running,
    upgrades,
    refuseWith: (next) => void (refusal = next),
    hold() {
      const received = deferred();
      const released = deferred();
      gate = { received: received.resolve, released: released.promise };
      return {
        received: received.promise,
        release: () => {
          gate = undefined;
          released.resolve();
        },
      };
    },
    async close() {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      await running.close();
    },
  };
}

let accessKey: CryptoKey;
let accessJwk: JWK;
let rogueKey: CryptoKey;
let authenticator: StrataAuthenticator;
let signStrata: StrataPrincipalSigner;
let verifyStrata: StrataPrincipalVerifier;
let sandbox: FakeSandbox;
let gateway: Running;
const extraGateways: Running[] = [];
const clients: WebSocket[] = [];

/** An access proxy token (ES256, the test key) for a user whose groups grant `role`. */
async function accessToken(role: StrataRole | undefined, claims: JWTPayload = {}, key: CryptoKey = accessKey): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ email: 'ada@example.com', groups: role ? [`strata:${role}`] : [], ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: KID, typ: 'JWT' })
    .setIssuer(ISS)
    .setAudience(AUD)
    .setSubject('user-ada')
    .setIssuedAt(now - 5)
    .setExpirationTime(now + 600)
    .sign(key);
}

async function startGateway(overrides: Partial<StrataTunnelDeps> = {}): Promise<Running> {
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  attachStrataTunnel(server, { authenticator, principalToken: signStrata, sandboxUrl: sandbox.url, log: silentLogger(), ...overrides });
  return listenOn(server);
}

type Attempt = { kind: 'open'; ws: WebSocket } | { kind: 'refused'; status: number; body: { error?: string }; contentType: string | undefined };

/** Opens a WebSocket through a gateway: the open socket, or the HTTP answer that refused it. */
function attempt(base: Running, path: string, headers: Record<string, string> = {}): Promise<Attempt> {
  const ws = new WebSocket(`ws://127.0.0.1:${base.port}${path}`, { headers });
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
          resolve({ kind: 'refused', status: res.statusCode ?? 0, body, contentType: res.headers['content-type'] });
        });
      });
      ws.once('error', reject);
    }),
    `the answer to ${path}`,
  );
}

/** Asserts an HTTP `{ error }` answer to the upgrade; `fromSandbox`: the sandbox service gave it, else the gateway alone. */
async function expectRefused(base: Running, path: string, headers: Record<string, string>, status: number, message: string | RegExp, fromSandbox = false): Promise<void> {
  const before = sandbox.upgrades.length;
  const result = await attempt(base, path, headers);
  expect(result.kind).toBe('refused');
  if (result.kind !== 'refused') return;
  expect(result.status).toBe(status);
  expect(result.contentType).toMatch(/^application\/json/);
  expect(Object.keys(result.body)).toEqual(['error']);
  expect(result.body.error).toMatch(message);
  expect(sandbox.upgrades.length).toBe(fromSandbox ? before + 1 : before);
}

const tokenHeader = (token: string) => ({ 'cf-access-token': token });

beforeAll(async () => {
  const [pair, rogue, internal] = await Promise.all([generateKeyPair('ES256'), generateKeyPair('ES256'), generateInternalKeyPair()]);
  accessKey = pair.privateKey;
  rogueKey = rogue.privateKey;
  accessJwk = { ...(await exportJWK(pair.publicKey)), kid: KID, alg: 'ES256', use: 'sig' };
  authenticator = createStrataAuthenticator({ issuers: [ISS], audiences: [AUD], jwks: { keys: [accessJwk] } });
  signStrata = await createStrataPrincipalSigner(internal.privateJwk);
  verifyStrata = await createStrataPrincipalVerifier(internal.publicJwk);
  sandbox = await startFakeSandbox();
  gateway = await startGateway();
});

afterEach(() => {
  for (const ws of clients.splice(0)) ws.terminate();
  sandbox.refuseWith(undefined);
});

afterAll(async () => {
  for (const running of [gateway, ...extraGateways]) await running?.close();
  await sandbox?.close();
});

describe('refusals of the gateway', () => {
  it('answers 404 for an upgrade on any other path', async () => {
    const token = await accessToken('restorer');
    await expectRefused(gateway, '/api/v1/sandboxes/sbx-orders-1', tokenHeader(token), 404, 'No operation exists at this path.');
    await expectRefused(gateway, '/api/v1/sandboxes/sbx-orders-1/tunnel/more', tokenHeader(token), 404, 'No operation exists at this path.');
    await expectRefused(gateway, '/graphql', tokenHeader(token), 404, 'No operation exists at this path.');
  });

  it('answers 401 without a token, even with a forged principal header', async () => {
    await expectRefused(gateway, TUNNEL, {}, 401, 'Valid access credentials are required.');
    const forged = await signStrata({ id: 'mallory', email: 'mallory@example.com', role: 'restorer-admin', groups: [], orgs: [], projects: [], service: false });
    await expectRefused(gateway, TUNNEL, { [STRATA.principalHeader]: forged }, 401, 'Valid access credentials are required.');
  });

  it('answers 401 for an invalid token in each of the three places', async () => {
    const forged = await accessToken('restorer-admin', {}, rogueKey);
    await expectRefused(gateway, TUNNEL, { 'cf-access-jwt-assertion': forged }, 401, /^The access token is invalid: /);
    await expectRefused(gateway, TUNNEL, tokenHeader('not-a-jwt'), 401, /^The access token is invalid: /);
    await expectRefused(gateway, TUNNEL, { cookie: `CF_Authorization=${forged}` }, 401, /^The access token is invalid: /);
  });

  it('answers 403 to viewers and operators', async () => {
    await expectRefused(gateway, TUNNEL, tokenHeader(await accessToken('viewer')), 403, 'This operation needs the role restorer; you are viewer.');
    await expectRefused(gateway, TUNNEL, tokenHeader(await accessToken('operator')), 403, 'This operation needs the role restorer; you are operator.');
  });

  it('answers 403 when the groups grant no role and the default role is none', async () => {
    const strict = await startGateway({ authenticator: createStrataAuthenticator({ issuers: [ISS], audiences: [AUD], jwks: { keys: [accessJwk] }, defaultRole: 'none' }) });
    extraGateways.push(strict);
    await expectRefused(strict, TUNNEL, tokenHeader(await accessToken(undefined)), 403, 'Your groups grant no Strata role.');
  });

  it('answers 401 when Strata authentication is not configured', async () => {
    const bare = await startGateway({ authenticator: undefined });
    extraGateways.push(bare);
    await expectRefused(bare, TUNNEL, tokenHeader(await accessToken('restorer')), 401, 'Strata authentication is not configured on this gateway.');
  });

  it('answers 503 without a sandbox service, after judging the caller', async () => {
    const alone = await startGateway({ sandboxUrl: undefined });
    extraGateways.push(alone);
    await expectRefused(alone, TUNNEL, tokenHeader(await accessToken('restorer')), 503, 'The sandbox service is not available.');
    await expectRefused(alone, TUNNEL, tokenHeader(await accessToken('viewer')), 403, 'This operation needs the role restorer; you are viewer.');
  });

  it('answers 502 when the sandbox service cannot be reached', async () => {
    const orphan = await startGateway({ sandboxUrl: await closedPortUrl() });
    extraGateways.push(orphan);
    await expectRefused(orphan, TUNNEL, tokenHeader(await accessToken('restorer')), 502, 'The sandbox service could not be reached.');
  });
});

describe('tunnels of restorers', () => {
  it.each(['restorer', 'restorer-admin'] as const)('relays a %s to the sandbox service and carries bytes both ways', async (role) => {
    const before = sandbox.upgrades.length;
    const result = await attempt(gateway, `${TUNNEL}?probe=1`, tokenHeader(await accessToken(role)));
    expect(result.kind).toBe('open');
    if (result.kind !== 'open') return;
    expect(sandbox.upgrades.length).toBe(before + 1);
    expect(sandbox.upgrades.at(-1)?.url).toBe(`${TUNNEL}?probe=1`);
    const bytes = Buffer.from([0, 1, 2, 0xff, ...Buffer.from(`hello through the tunnel as ${role}`)]);
    expect(await roundTrip(result.ws, bytes)).toEqual(bytes);
    const big = Buffer.alloc(256 * 1024, 7);
    expect((await roundTrip(result.ws, big)).equals(big)).toBe(true);
  });

  it('sends the signed principal and none of the raw credentials, whichever place carried the token', async () => {
    const token = await accessToken('restorer', { email: 'grace@example.com' });
    const cases: Array<{ headers: Record<string, string>; cookie: string | undefined }> = [
      { headers: { 'cf-access-jwt-assertion': token }, cookie: undefined },
      { headers: { 'cf-access-token': token }, cookie: undefined },
      { headers: { cookie: `theme=dark; CF_Authorization=${token}; lang=en` }, cookie: 'theme=dark; lang=en' },
      { headers: { cookie: `CF_Authorization=${token}` }, cookie: undefined },
    ];
    for (const { headers, cookie } of cases) {
      const result = await attempt(gateway, TUNNEL, { ...headers, [STRATA.principalHeader]: 'forged-by-the-caller' });
      expect(result.kind, JSON.stringify(headers)).toBe('open');
      const seen = sandbox.upgrades.at(-1)?.headers ?? {};
      expect(seen['cf-access-jwt-assertion']).toBeUndefined();
      expect(seen['cf-access-token']).toBeUndefined();
      expect(seen.cookie).toBe(cookie);
      expect(JSON.stringify(seen)).not.toContain(token);
      const principal = await verifyStrata(String(seen[STRATA.principalHeader]));
      expect(principal).toMatchObject({ id: 'user-ada', email: 'grace@example.com', role: 'restorer', groups: ['strata:restorer'], service: false });
      expect(seen.host).toBe(`127.0.0.1:${sandbox.port}`);
      expect(seen.upgrade).toBe('websocket');
    }
  });

  it('passes a refusal of the sandbox service back as it is', async () => {
    sandbox.refuseWith({ status: 409, body: JSON.stringify({ error: 'Sandbox sbx-orders-1 is not exposed; create it with expose: true.' }) });
    await expectRefused(gateway, TUNNEL, tokenHeader(await accessToken('restorer')), 409, 'Sandbox sbx-orders-1 is not exposed; create it with expose: true.', true);
    sandbox.refuseWith({ status: 404, body: JSON.stringify({ error: 'Sandbox sbx-orders-1 was not found.' }) });
    await expectRefused(gateway, TUNNEL, tokenHeader(await accessToken('restorer')), 404, 'Sandbox sbx-orders-1 was not found.', true);
    sandbox.refuseWith({ status: 409, body: '<html>busy</html>' });
    await expectRefused(gateway, TUNNEL, tokenHeader(await accessToken('restorer')), 409, 'The sandbox service refused the tunnel.', true);
  });

  it('closes the sandbox side when the caller goes away while the sandbox service is still answering', async () => {
    const gateSeen = deferred<Duplex>();
    const capture = (_req: http.IncomingMessage, socket: Duplex) => gateSeen.resolve(socket);
    gateway.server.on('upgrade', capture);
    const held = sandbox.hold();
    try {
      const token = await accessToken('restorer');
      const raw = net.connect(gateway.port, '127.0.0.1');
      raw.on('error', () => undefined);
      await within(once(raw, 'connect'), 'the raw connection');
      raw.write(
        `GET ${TUNNEL} HTTP/1.1\r\nHost: 127.0.0.1:${gateway.port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n` +
          `Sec-WebSocket-Key: ${Buffer.from('0123456789abcdef').toString('base64')}\r\ncf-access-token: ${token}\r\n\r\n`,
      );
      const gatewaySide = await within(gateSeen.promise, 'the upgrade at the gateway');
      await within(held.received, 'the relayed upgrade');
      const relayed = sandbox.upgrades.at(-1) as SandboxUpgrade;
      const relayClosed = new Promise((resolve) => relayed.socket.once('close', resolve));
      const gatewayClosed = new Promise((resolve) => gatewaySide.once('close', resolve));
      raw.resetAndDestroy();
      await within(gatewayClosed, 'the gateway to see the caller go');
      // The sandbox service now accepts: the gateway must not keep a tunnel (and its database connection) nobody uses.
      held.release();
      await within(relayClosed, 'the connection from the gateway to the sandbox service to close', 3000);
    } finally {
      held.release();
      gateway.server.off('upgrade', capture);
    }
  });
});
