import type { ServiceName } from '@sigil/proto/routes';

/** Where a service runs: its base URL, or the base URLs of its replicas. */
export type ServiceTarget = string | readonly string[];
export type ServiceUrls = Partial<Record<ServiceName, ServiceTarget>>;

export const replicasOf = (target: ServiceTarget): readonly string[] => (typeof target === 'string' ? [target] : target);

/** The first replica: for what holds one connection to one process (a sandbox tunnel). */
export const primaryOf = (target: ServiceTarget): string => replicasOf(target)[0] as string;

/**
 * Round robin over each service's replicas: `order(target)` is every replica, starting one further than the previous
 * request to that service started, so a request whose first replica refuses the connection tries the next.
 */
export function createRoundRobin(): { order(target: ServiceTarget): readonly string[] } {
  const cursors = new Map<string, number>();
  return {
    order(target) {
      const replicas = replicasOf(target);
      if (replicas.length < 2) return replicas;
      const key = replicas.join(' ');
      const start = cursors.get(key) ?? 0;
      cursors.set(key, (start + 1) % replicas.length);
      return [...replicas.slice(start), ...replicas.slice(0, start)];
    },
  };
}

/**
 * Errors that prove the request never reached the service: the connection was refused (a replica down or restarting)
 * or never set up. Only these allow another replica to be tried; once a request was sent, trying it again could do its
 * work twice.
 */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT']);

export function neverConnected(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 4; current = (current as { cause?: unknown }).cause, depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NOT_CONNECTED.has(code)) return true;
    const inner = (current as { errors?: unknown }).errors;
    if (Array.isArray(inner) && inner.length > 0 && inner.every((one) => neverConnected(one))) return true;
  }
  return false;
}

/**
 * A `fetch` for calls the gateway makes itself (key checks at accounts, GraphQL subgraph calls): a URL under any
 * replica's base goes to the replicas in round-robin order, the next one tried when a connection is refused. Bodies
 * are strings or bytes here, so nothing is lost by sending one again; a streamed body is never retried.
 */
export function balancedFetch(target: ServiceTarget, fetchImpl: typeof fetch = fetch): typeof fetch {
  const replicas = replicasOf(target).map((url) => url.replace(/\/+$/, ''));
  if (replicas.length < 2) return fetchImpl;
  const roundRobin = createRoundRobin();
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const base = replicas.find((replica) => url === replica || url.startsWith(`${replica}/`));
    const replayable = init?.body === undefined || init.body === null || typeof init.body === 'string' || init.body instanceof Uint8Array;
    if (base === undefined || (typeof input === 'object' && !(input instanceof URL)) || !replayable) return fetchImpl(input, init);
    const order = roundRobin.order(replicas);
    for (let index = 0; ; index += 1) {
      try {
        return await fetchImpl(`${order[index]}${url.slice(base.length)}`, init);
      } catch (error) {
        if (index + 1 >= order.length || !neverConnected(error) || init?.signal?.aborted) throw error;
      }
    }
  };
}
