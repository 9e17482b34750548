import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * `/healthz` (the process answers) and `/readyz` (every informer has listed once). A replica that does not hold the
 * Lease is ready too: it is the standby that takes over, and a probe failing on it would restart it for nothing.
 */
export async function startHealthServer(options: { host: string; port: number; synced: () => boolean }): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const ok = path === '/healthz' || (path === '/readyz' && options.synced());
    const known = path === '/healthz' || path === '/readyz';
    res.writeHead(known ? (ok ? 200 : 503) : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: known ? (ok ? 'ok' : 'starting') : 'not found' }));
  });
  await new Promise<void>((resolve) => server.listen(options.port, options.host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host === '0.0.0.0' ? '127.0.0.1' : options.host}:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
