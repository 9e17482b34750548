/**
 * Whether an error says something the service depends on cannot be reached right now: its database restarting,
 * failing over or out of connections (as Prisma, its Postgres driver adapter and `pg` report it), a connection refused
 * or reset under a call, a call that timed out, or a service that answered it is unavailable. Such a request did not
 * fail on its own merits: the caller gets 503 with `Retry-After`, not 500, and a consumer retries the message soon
 * (bus/outage.ts). P2028 is a transaction that could not start in time or outlived its timeout (the database
 * overloaded: seen when two replicas of every service shared two cores); it was rolled back, so trying again is safe.
 */
const PRISMA_UNREACHABLE = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028']);
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);
/** The platform's own word for it: a service client that got no answer, or an answer of 502, 503 or 504 (errors.ts). */
const APP_CODES = new Set(['service-unavailable']);
/** Postgres: admin shutdown, crash shutdown, cannot connect now, too many connections. */
const POSTGRES_CODES = new Set(['57P01', '57P02', '57P03', '53300']);
/** The driver adapter's own kinds for a database that went away under a query. */
const ADAPTER_KINDS = new Set(['ConnectionClosed', 'SocketTimeout', 'TooManyConnections', 'DatabaseNotReachable']);
const MESSAGES = [/Connection terminated/i, /Can't reach database server/i, /Server has closed the connection/i, /the database system is (starting up|shutting down|in recovery mode)/i, /Timed out fetching a new connection/i];

export function isDependencyUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 4) return false;
  const e = error as { code?: unknown; errorCode?: unknown; name?: unknown; message?: unknown; cause?: unknown; originalCode?: unknown; kind?: unknown; meta?: { driverAdapterError?: unknown } };
  const code = String(e.code ?? e.errorCode ?? e.originalCode ?? '');
  if (PRISMA_UNREACHABLE.has(code) || SOCKET_CODES.has(code) || POSTGRES_CODES.has(code) || APP_CODES.has(code) || code.startsWith('08')) return true;
  // A call given up after its timeout (`AbortSignal.timeout`).
  if (e.name === 'PrismaClientInitializationError' || e.name === 'TimeoutError' || ADAPTER_KINDS.has(String(e.kind))) return true;
  if (typeof e.message === 'string' && MESSAGES.some((m) => m.test(e.message as string))) return true;
  // A query the driver adapter failed is a Prisma error whose own code is generic (P2010, P2039): Postgres' code is
  // in `meta.driverAdapterError.cause.originalCode`.
  return isDependencyUnavailable(e.cause, depth + 1) || isDependencyUnavailable(e.meta?.driverAdapterError, depth + 1);
}
