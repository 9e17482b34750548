import http, { type IncomingMessage, type OutgoingHttpHeaders, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { refuseUpgrade } from '@sigil/kit/http';
import type { Logger } from '@sigil/kit/log';
import { SANDBOX_TUNNEL_PATTERN } from '@sigil/proto/routes';
import { roleAtLeast, STRATA, type StrataPrincipal } from '@sigil/proto/strata';
import { crossOriginCookieRefusal, strataCookieCarries } from './cookie-writes.ts';
import { strataRefusal, type StrataAuthenticator } from './strata-auth.ts';

export interface StrataTunnelDeps {
  authenticator: StrataAuthenticator | undefined;
  principalToken: (principal: StrataPrincipal) => Promise<string>;
  /** The sandbox service; absent: tunnels answer 503. */
  sandboxUrl: string | undefined;
  log: Logger;
}

/**
 * Sandbox tunnels (`GET /api/v1/sandboxes/{name}/tunnel`, a WebSocket upgrade): the access JWT is checked here like
 * any console call (role restorer), the raw credentials are replaced by the signed principal, and the upgrade is
 * relayed to the sandbox service; once it agrees, the two sockets are joined byte for byte.
 */
export function attachStrataTunnel(server: Server, deps: StrataTunnelDeps): void {
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    if (!SANDBOX_TUNNEL_PATTERN.test(new URL(req.url ?? '/', 'http://gateway').pathname)) return refuseUpgrade(socket, 404, 'No operation exists at this path.');
    relay(req, socket, head).catch((error: unknown) => {
      deps.log.error({ err: error }, 'tunnel relay failed');
      refuseUpgrade(socket, 500, 'The gateway failed to open the tunnel.');
    });
  });

  async function relay(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    if (!deps.authenticator) return refuseUpgrade(socket, 401, 'Strata authentication is not configured on this gateway.');
    // Cross-site WebSocket hijacking: the handshake is a GET, but it opens a channel that acts for the cookie's owner.
    const crossOrigin = crossOriginCookieRefusal(req, strataCookieCarries(deps.authenticator, req.headers), { always: true });
    if (crossOrigin) return refuseUpgrade(socket, 403, crossOrigin);
    const result = await deps.authenticator.authenticate(req.headers);
    const refusal = strataRefusal(result, deps.log);
    if (refusal) return refuseUpgrade(socket, refusal.status, refusal.message);
    if (result.kind !== 'authenticated') return refuseUpgrade(socket, 401, 'Valid access credentials are required.');
    const principal = result.principal;
    if (!roleAtLeast(principal.role, 'restorer')) return refuseUpgrade(socket, 403, `This operation needs the role restorer; you are ${principal.role}.`);
    if (!deps.sandboxUrl) return refuseUpgrade(socket, 503, 'The sandbox service is not available.');
    const target = new URL(deps.sandboxUrl);
    const headers: OutgoingHttpHeaders = { ...req.headers, host: target.host };
    deps.authenticator.stripCredentials(headers);
    headers[STRATA.principalHeader] = await deps.principalToken(principal);
    const upstream = http.request({ host: target.hostname, port: target.port, path: req.url, method: 'GET', headers });
    // A caller gone before the sandbox service agreed: nothing must stay open on its behalf.
    socket.once('close', () => upstream.destroy());
    upstream.on('upgrade', (res, upSocket, upHead) => {
      if (socket.destroyed) return void upSocket.destroy();
      const lines = [`HTTP/1.1 101 ${res.statusMessage ?? 'Switching Protocols'}`];
      for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (upHead.length) socket.write(upHead);
      if (head.length) upSocket.write(head);
      const close = () => {
        socket.destroy();
        upSocket.destroy();
      };
      upSocket.on('error', close);
      socket.on('error', close);
      upSocket.pipe(socket).pipe(upSocket);
    });
    // The sandbox service refused (404, 409...): its answer goes back as it is.
    upstream.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        refuseUpgrade(socket, res.statusCode ?? 502, errorOf(Buffer.concat(chunks).toString()));
      });
    });
    upstream.on('error', (error) => {
      deps.log.warn({ err: error }, 'sandbox service unreachable');
      refuseUpgrade(socket, 502, 'The sandbox service could not be reached.');
    });
    upstream.end();
  }
}

function errorOf(body: string): string {
  try {
    return (JSON.parse(body) as { error?: string }).error ?? 'The sandbox service refused the tunnel.';
  } catch {
    return 'The sandbox service refused the tunnel.';
  }
}
