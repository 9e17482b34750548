import type { IncomingMessage, Server } from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { createWebSocketStream, WebSocketServer } from 'ws';
import { STRATA_PRINCIPAL_HEADER, type StrataPrincipalVerifier } from '@sigil/kit/auth';
import { AppError } from '@sigil/kit/errors';
import { refuseUpgrade } from '@sigil/kit/http';
import type { Logger } from '@sigil/kit/log';
import { roleAtLeast, type StrataPrincipal } from '@sigil/proto/strata';
import { SANDBOX_TUNNEL_PATTERN } from '@sigil/proto/routes';
import { recordAudit } from './audit.ts';
import type { Db } from './db.ts';
import { PHASES, type SandboxService } from './sandboxes.ts';

export interface TunnelDeps {
  db: Db;
  sandboxes: SandboxService;
  verifyPrincipal: StrataPrincipalVerifier;
  log: Logger;
  cell: string;
  clock: () => Date;
}

/**
 * The tunnel of an exposed sandbox: a WebSocket at `/api/v1/sandboxes/{name}/tunnel` (the gateway forwards it with the
 * caller's principal, role restorer) whose binary messages are the bytes of one TCP connection to the sandbox's
 * server. `strata connect` opens one per local connection, so `psql` and `mysql` work unchanged.
 */
export function attachTunnel(server: Server, deps: TunnelDeps): { close(): void } {
  const sockets = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // A caller that goes away while its tunnel is being checked must not take the service down.
    socket.on('error', () => socket.destroy());
    const name = SANDBOX_TUNNEL_PATTERN.exec(new URL(req.url ?? '/', 'http://sandbox').pathname)?.[1];
    if (!name) return refuseUpgrade(socket, 404, 'No operation exists at this path.');
    open(decodeURIComponent(name), req).then(
      ({ row, principal }) => {
        if (socket.destroyed) return;
        sockets.handleUpgrade(req, socket, head, (ws) => {
          const tcp = net.connect({ host: row.host, port: row.port as number });
          const stream = createWebSocketStream(ws);
          const finish = () => {
            tcp.destroy();
            stream.destroy();
          };
          tcp.once('error', finish);
          stream.once('error', finish);
          stream.pipe(tcp).pipe(stream);
          deps.log.info({ sandbox: row.name, user: principal.email || principal.id }, 'tunnel opened');
        });
      },
      (error: unknown) => {
        const known = error instanceof AppError ? error : new AppError('internal', 'The tunnel could not be opened.');
        if (!(error instanceof AppError)) deps.log.error({ err: error }, 'tunnel failed');
        refuseUpgrade(socket, known.status, known.message);
      },
    );
  });

  async function open(name: string, req: IncomingMessage) {
    const token = req.headers[STRATA_PRINCIPAL_HEADER];
    let principal: StrataPrincipal;
    try {
      if (typeof token !== 'string') throw new Error('missing');
      principal = await deps.verifyPrincipal(token);
    } catch {
      throw new AppError('unauthorized', 'Valid access credentials are required.');
    }
    if (!roleAtLeast(principal.role, 'restorer')) throw new AppError('forbidden', `This operation needs the role restorer; you are ${principal.role}.`);
    const row = await deps.sandboxes.find(name);
    if (!row.expose) throw new AppError('conflict', `Sandbox ${name} is not exposed; create it with expose: true (strata sandbox create --expose).`);
    if (row.phase !== PHASES.ready || !row.port) throw new AppError('conflict', `Sandbox ${name} is ${row.phase}; its tunnel opens once it is Ready.`);
    await recordAudit(deps.db, deps.cell, {
      time: deps.clock(), user: principal.email || principal.id, role: principal.role, action: 'openSandboxTunnel',
      target: `${row.targetNamespace}/${row.targetName}`, object: row.name, outcome: 'ok', from: req.socket.remoteAddress ?? '', detail: {},
    });
    return { row, principal };
  }

  return { close: () => sockets.close() };
}
