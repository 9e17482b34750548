// The local end of `strata connect`: the tunnel's URL, one WebSocket per local TCP connection through a (fake)
// gateway that echoes bytes, and refusals told with the server's message and status.
import { once } from 'node:events';
import http, { type IncomingHttpHeaders } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { openTunnelSocket, startLocalTunnel, tunnelUrl, type LocalTunnel, type TunnelOptions } from '../src/tunnel.ts';

const TOKEN = 'access-token-of-ada';
const SANDBOX = 'orders-sbx-1a2b3c';
const WAIT_MS = 5000;

/** Rejects after `ms`: every wait of this file is bounded. */
function within<T>(promise: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

interface GatewayUpgrade {
  url: string;
  headers: IncomingHttpHeaders;
  socket: Duplex;
}

/** A stand-in for the gateway: 401 without the right token, an optional refusal, else a WebSocket echoing bytes. */
interface FakeGateway {
  url: string;
  upgrades: GatewayUpgrade[];
  /** Answer the next upgrades with this HTTP answer instead (undefined: accept). */
  refuseWith(refusal: { status: number; body: string; type?: string } | undefined): void;
  /** Hold the next upgrade until `release`. */
  hold(): { received: Promise<void>; release(): void };
  close(): Promise<void>;
}

async function startFakeGateway(): Promise<FakeGateway> {
  const upgrades: GatewayUpgrade[] = [];
  const wss = new WebSocketServer({ noServer: true });
  let refusal: { status: number; body: string; type?: string } | undefined;
  let gate: { received: () => void; released: Promise<void> } | undefined;
  const answerWith = (socket: Duplex, status: number, body: string, type = 'application/json') =>
    socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: ${type}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    upgrades.push({ url: req.url ?? '', headers: req.headers, socket });
    const answer = () => {
      if (req.headers['cf-access-token'] !== TOKEN) return answerWith(socket, 401, JSON.stringify({ error: 'Valid access credentials are required.' }));
      if (refusal) return answerWith(socket, refusal.status, refusal.body, refusal.type);
      wss.handleUpgrade(req, socket, head, (ws) => {
        ws.on('message', (data: RawData, isBinary: boolean) => ws.send(data as Buffer, { binary: isBinary }));
      });
    };
    if (!gate) return answer();
    gate.received();
    void gate.released.then(answer);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
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
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let gateway: FakeGateway;
const tunnels: LocalTunnel[] = [];
const sockets: Array<WebSocket | net.Socket> = [];

const optionsFor = (overrides: Partial<TunnelOptions> = {}): TunnelOptions => ({
  server: gateway.url, token: TOKEN, sandbox: SANDBOX, host: '127.0.0.1', port: 0, userAgent: 'strata-cli/test', ...overrides,
});

async function localTunnel(overrides: Partial<TunnelOptions> = {}): Promise<LocalTunnel> {
  const tunnel = await startLocalTunnel(optionsFor(overrides));
  tunnels.push(tunnel);
  return tunnel;
}

async function connectTo(port: number): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => undefined);
  await within(once(socket, 'connect'), 'the local connection');
  return socket;
}

/** Reads from `socket` until `length` bytes came. */
function readBytes(socket: net.Socket, length: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let got = 0;
  const done = deferred<Buffer>();
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    got += chunk.length;
    if (got >= length) {
      socket.off('data', onData);
      done.resolve(Buffer.concat(chunks));
    }
  };
  socket.on('data', onData);
  return within(done.promise, `${length} echoed bytes`);
}

const closeOf = (socket: net.Socket): Promise<void> =>
  socket.destroyed ? Promise.resolve() : new Promise<void>((resolve) => socket.once('close', () => resolve()));

beforeAll(async () => {
  gateway = await startFakeGateway();
});

afterEach(async () => {
  gateway.refuseWith(undefined);
  for (const socket of sockets.splice(0)) {
    if (socket instanceof WebSocket) socket.terminate();
    else socket.destroy();
  }
  for (const tunnel of tunnels.splice(0)) await tunnel.close();
});

afterAll(async () => {
  await gateway?.close();
});

describe('tunnelUrl', () => {
  it('takes the server scheme: http → ws, https → wss', () => {
    expect(tunnelUrl('http://127.0.0.1:8080', SANDBOX)).toBe(`ws://127.0.0.1:8080/api/v1/sandboxes/${SANDBOX}/tunnel`);
    expect(tunnelUrl('https://strata.example.com', SANDBOX)).toBe(`wss://strata.example.com/api/v1/sandboxes/${SANDBOX}/tunnel`);
    expect(tunnelUrl('HTTPS://Strata.Example.com:8443', SANDBOX)).toBe(`wss://strata.example.com:8443/api/v1/sandboxes/${SANDBOX}/tunnel`);
  });

  it('drops trailing slashes and keeps a path prefix', () => {
    expect(tunnelUrl('https://strata.example.com/', SANDBOX)).toBe(`wss://strata.example.com/api/v1/sandboxes/${SANDBOX}/tunnel`);
    expect(tunnelUrl('https://example.com/strata///', SANDBOX)).toBe(`wss://example.com/strata/api/v1/sandboxes/${SANDBOX}/tunnel`);
  });

  it('encodes the sandbox name', () => {
    expect(tunnelUrl('http://localhost:4000', 'a b/c?d#e')).toBe('ws://localhost:4000/api/v1/sandboxes/a%20b%2Fc%3Fd%23e/tunnel');
  });
});

describe('openTunnelSocket', () => {
  it('opens the WebSocket with the token and the user agent', async () => {
    const ws = await within(openTunnelSocket(optionsFor()), 'the tunnel socket');
    sockets.push(ws);
    expect(ws.readyState).toBe(WebSocket.OPEN);
    const seen = gateway.upgrades.at(-1) as GatewayUpgrade;
    expect(seen.url).toBe(`/api/v1/sandboxes/${SANDBOX}/tunnel`);
    expect(seen.headers['cf-access-token']).toBe(TOKEN);
    expect(seen.headers['user-agent']).toBe('strata-cli/test');
  });

  it('rejects with the message and status of a refusal', async () => {
    gateway.refuseWith({ status: 403, body: JSON.stringify({ error: 'This operation needs the role restorer; you are viewer.' }) });
    await expect(within(openTunnelSocket(optionsFor()), 'the refusal')).rejects.toMatchObject({ message: 'This operation needs the role restorer; you are viewer.', status: 403 });
    gateway.refuseWith({ status: 409, body: JSON.stringify({ error: `Sandbox ${SANDBOX} is not exposed.` }) });
    await expect(within(openTunnelSocket(optionsFor()), 'the refusal')).rejects.toMatchObject({ message: `Sandbox ${SANDBOX} is not exposed.`, status: 409 });
  });

  it('sends no token when it has none, and says the 401', async () => {
    await expect(within(openTunnelSocket(optionsFor({ token: undefined })), 'the refusal')).rejects.toMatchObject({ message: 'Valid access credentials are required.', status: 401 });
    expect(gateway.upgrades.at(-1)?.headers['cf-access-token']).toBeUndefined();
  });

  it('keeps the status when the refusal is not JSON', async () => {
    gateway.refuseWith({ status: 502, body: '<html>bad gateway</html>', type: 'text/html' });
    await expect(within(openTunnelSocket(optionsFor()), 'the refusal')).rejects.toMatchObject({ message: 'the server answered 502', status: 502 });
  });

  it('rejects when nothing listens', async () => {
    const probe = net.createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    await expect(within(openTunnelSocket(optionsFor({ server: `http://127.0.0.1:${port}` })), 'the failure')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe('startLocalTunnel', () => {
  it('echoes the bytes of a local connection through its own WebSocket', async () => {
    const tunnel = await localTunnel();
    expect(tunnel.port).toBeGreaterThan(0);
    const before = gateway.upgrades.length;
    const client = await connectTo(tunnel.port);
    const bytes = Buffer.from([0, 0, 0, 8, 4, 0xd2, 0x16, 0x2f, ...Buffer.from('startup')]);
    const echoed = readBytes(client, bytes.length);
    client.write(bytes);
    expect(await echoed).toEqual(bytes);
    expect(gateway.upgrades.length).toBe(before + 1);
    expect(gateway.upgrades.at(-1)?.headers['cf-access-token']).toBe(TOKEN);
    const big = Buffer.alloc(512 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = i % 251;
    const bigEchoed = readBytes(client, big.length);
    client.write(big);
    expect((await bigEchoed).equals(big)).toBe(true);
  });

  it('keeps the bytes a client sends before the tunnel is open', async () => {
    const tunnel = await localTunnel();
    const held = gateway.hold();
    const client = await connectTo(tunnel.port);
    const echoed = readBytes(client, 11);
    client.write('early bytes');
    await within(held.received, 'the upgrade');
    held.release();
    expect((await echoed).toString()).toBe('early bytes');
  });

  it('gives each local connection a tunnel of its own', async () => {
    const tunnel = await localTunnel();
    const before = gateway.upgrades.length;
    const [a, b] = await Promise.all([connectTo(tunnel.port), connectTo(tunnel.port)]);
    const echoedA = readBytes(a, 6);
    const echoedB = readBytes(b, 6);
    a.write('from a');
    b.write('from b');
    expect((await echoedA).toString()).toBe('from a');
    expect((await echoedB).toString()).toBe('from b');
    expect(gateway.upgrades.length).toBe(before + 2);
  });

  it('closes a local connection whose tunnel is refused, and says why', async () => {
    const events: string[] = [];
    const told = deferred();
    const tunnel = await localTunnel({
      onEvent: (line) => {
        events.push(line);
        told.resolve();
      },
    });
    gateway.refuseWith({ status: 403, body: JSON.stringify({ error: 'This operation needs the role restorer; you are operator.' }) });
    const client = await connectTo(tunnel.port);
    await within(closeOf(client), 'the local connection to close');
    await within(told.promise, 'the event');
    expect(events).toEqual(['a connection could not be tunnelled: This operation needs the role restorer; you are operator.']);
  });

  it('closes its listener and its connections', async () => {
    const tunnel = await startLocalTunnel(optionsFor());
    const client = await connectTo(tunnel.port);
    const echoed = readBytes(client, 2);
    client.write('hi');
    await echoed;
    const closed = closeOf(client);
    await within(tunnel.close(), 'the tunnel to close');
    await within(closed, 'the local connection to close');
    const refused = net.connect(tunnel.port, '127.0.0.1');
    await expect(within(once(refused, 'connect'), 'the refusal')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('survives a local client that resets before its tunnel is open, and drops that tunnel', async () => {
    // The listener's side of each local connection, to know when it saw the reset.
    const accepted: net.Socket[] = [];
    const createServer = net.createServer.bind(net);
    const spy = vi.spyOn(net, 'createServer').mockImplementation(((...args: Parameters<typeof net.createServer>) => {
      const server = createServer(...args);
      server.on('connection', (socket: net.Socket) => accepted.push(socket));
      return server;
    }) as typeof net.createServer);
    let tunnel: LocalTunnel;
    try {
      tunnel = await localTunnel();
    } finally {
      spy.mockRestore();
    }
    const held = gateway.hold();
    const uncaught: Error[] = [];
    let tunnelClosed: boolean | undefined;
    const saved = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    const onUncaught = (error: Error) => void uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const client = await connectTo(tunnel.port);
      await within(held.received, 'the upgrade');
      const upgrade = gateway.upgrades.at(-1) as GatewayUpgrade;
      const upstreamClosed = new Promise((resolve) => upgrade.socket.once('close', resolve));
      const local = accepted[0] as net.Socket;
      expect(local).toBeDefined();
      const localClosed = closeOf(local);
      client.resetAndDestroy();
      await within(localClosed, 'the listener to see the client go');
      // Only now does the gateway accept: the tunnel of a connection already gone must not stay open.
      held.release();
      tunnelClosed = await within(upstreamClosed, 'the WebSocket of the gone client to close', 3000).then(
        () => true,
        () => false,
      );
    } finally {
      held.release();
      process.off('uncaughtException', onUncaught);
      for (const listener of saved) process.on('uncaughtException', listener);
    }
    expect({ uncaught: uncaught.map((error) => error.message), tunnelClosed }).toEqual({ uncaught: [], tunnelClosed: true });
  });
});
