/** The local end of a sandbox tunnel: a TCP listener whose every connection rides a WebSocket through the gateway. */
import net from 'node:net';
import { WebSocket, createWebSocketStream } from 'ws';
import { sandboxTunnelPath } from '@sigil/proto/routes';
import { TOKEN_HEADER } from '@strata/client';

export interface TunnelOptions {
  server: string;
  token: string | undefined;
  sandbox: string;
  host: string;
  port: number;
  userAgent: string;
  /** Told about each connection's end or failure. */
  onEvent?: (line: string) => void;
}

export interface LocalTunnel {
  port: number;
  close(): Promise<void>;
}

/** The tunnel's WebSocket URL: the server's scheme (http → ws, https → wss) and the sandbox's tunnel path. */
export function tunnelUrl(server: string, sandbox: string): string {
  const url = new URL(server.replace(/\/+$/, '') + sandboxTunnelPath(sandbox));
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

/** Opens one WebSocket and resolves once the gateway and the sandbox service agreed; rejects with their refusal. */
export function openTunnelSocket(options: TunnelOptions): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(tunnelUrl(options.server, options.sandbox), {
      headers: { 'user-agent': options.userAgent, ...(options.token ? { [TOKEN_HEADER]: options.token } : {}) },
    });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        let message = `the server answered ${res.statusCode}`;
        try {
          message = (JSON.parse(Buffer.concat(chunks).toString()) as { error?: string }).error ?? message;
        } catch {
          // not JSON: keep the status
        }
        reject(Object.assign(new Error(message), { status: res.statusCode }));
      });
    });
    ws.once('error', reject);
  });
}

/** Listens on `host:port` (0: any free port) and joins each connection to a new tunnel socket. */
export async function startLocalTunnel(options: TunnelOptions): Promise<LocalTunnel> {
  const connections = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
    socket.pause();
    // A local client that goes away while its tunnel opens (psql cancelled) must not end the command.
    socket.on('error', () => socket.destroy());
    openTunnelSocket(options).then(
      (ws) => {
        if (socket.destroyed) return void ws.terminate();
        const stream = createWebSocketStream(ws);
        const end = () => {
          socket.destroy();
          stream.destroy();
        };
        stream.once('error', end);
        socket.once('error', end);
        stream.pipe(socket).pipe(stream);
        socket.resume();
      },
      (error: Error) => {
        options.onEvent?.(`a connection could not be tunnelled: ${error.message}`);
        socket.destroy();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as net.AddressInfo;
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of connections) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
