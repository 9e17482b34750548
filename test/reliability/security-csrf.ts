import http from 'node:http';
import { listOperations, loadSigilOpenApi } from '@sigil/proto/openapi';
import { listStrataOperations } from '@sigil/proto/strata-openapi';

/** A write a browser's cookie can carry: every one must refuse a request from another origin. */
export interface CookieWrite {
  api: 'sigil' | 'strata';
  operationId: string;
  method: string;
  /** With every path parameter filled with a placeholder (the refusal comes before the resource is looked up). */
  path: string;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const filled = (template: string) => template.replace(/\{([^}]+)\}/g, (_match, name: string) => `probe-${name.toLowerCase()}`);

/**
 * From the contracts: Sigil's writes whose `x-auth` is D (the dashboard session) or K (a key, or else the session),
 * Strata's writes (every one accepts the `CF_Authorization` cookie: security scheme `accessCookie`), and GraphQL,
 * which takes both cookies.
 */
export function cookieAuthenticatedWrites(): CookieWrite[] {
  const sigil = listOperations(loadSigilOpenApi())
    .filter((op) => (op.auth === 'D' || op.auth === 'K') && WRITES.has(op.method))
    .map((op): CookieWrite => ({ api: 'sigil', operationId: op.operationId, method: op.method, path: filled(op.path) }));
  const strata = listStrataOperations()
    .filter((op) => WRITES.has(op.method.toUpperCase()))
    .map((op): CookieWrite => ({ api: 'strata', operationId: op.operationId, method: op.method.toUpperCase(), path: `/api/v1${filled(op.path)}` }));
  return [
    ...sigil,
    ...strata,
    { api: 'sigil', operationId: 'graphql (session)', method: 'POST', path: '/graphql' },
    { api: 'strata', operationId: 'graphql (access cookie)', method: 'POST', path: '/graphql' },
  ];
}

/** How browsers say a request comes from somewhere else: a current one, a sibling subdomain, an old one, a sandbox. */
export const CROSS_ORIGIN: Array<{ name: string; headers: Record<string, string> }> = [
  { name: 'cross-site (Sec-Fetch-Site)', headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' } },
  { name: 'same-site sibling', headers: { 'sec-fetch-site': 'same-site', origin: 'https://other.sigil.test' } },
  { name: 'cross-site, no Origin', headers: { 'sec-fetch-site': 'cross-site' } },
  { name: 'Origin only (older browser)', headers: { origin: 'https://evil.example' } },
  { name: 'opaque origin', headers: { origin: 'null' } },
];

/** The gateway's words for this refusal (as opposed to a 403 for a missing permission or role). */
export const CSRF_REFUSAL = /another origin may not use this site's cookies/;

/** Whether an answer is the CSRF refusal (problem+json for Sigil, `{error}` for Strata). */
export function isCsrfRefusal(status: number, body: unknown): boolean {
  if (status !== 403 || typeof body !== 'object' || body === null) return false;
  const { detail, error } = body as { detail?: unknown; error?: unknown };
  return CSRF_REFUSAL.test(String(detail ?? error ?? ''));
}

/** The body a write is sent with: JSON `{}` (a GraphQL query for /graphql); what the operation makes of it is its own. */
export function bodyOf(write: CookieWrite): string | undefined {
  if (write.method === 'DELETE') return undefined;
  return write.path === '/graphql' ? JSON.stringify({ query: '{ __typename }' }) : '{}';
}

/** A WebSocket handshake to `path` (a sandbox tunnel), answered with the status the gateway gave it. */
export function upgradeStatus(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'GET',
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'c2lnaWwtY3NyZi1wcm9iZQ==', ...headers },
    });
    req.setTimeout(10_000, () => req.destroy(new Error('no answer to the handshake in 10 s')));
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 101, body: '' });
    });
    req.on('error', reject);
    req.end();
  });
}
