import { LRUCache } from 'lru-cache';
import { AppError } from '@sigil/kit/errors';
import { PRINCIPAL_HEADER, type Principal, type PrincipalSigner } from '@sigil/kit/auth';
import { sha256Hex } from '@sigil/kit/crypto';
import { REQUEST_ID_HEADER } from '@sigil/kit/http';
import { type Bus } from '@sigil/kit/bus';
import { type Logger } from '@sigil/kit/log';
import { eventSubject, type DomainEvent, type EventType } from '@sigil/proto/events';
import { SIGIL } from '@sigil/proto/product';
import { INTERNAL_AUTHENTICATE_PATH, isAuthenticateResponse, type AuthenticateFailureReason, type AuthenticateRequest, type AuthenticateResponse } from '@sigil/proto/internal-auth';

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `sgl_live_` or `sgl_test_` followed by 32 base62 characters. */
export const API_KEY_PATTERN = new RegExp(
  `^(?:${escapeRegExp(SIGIL.keyPrefixLive)}|${escapeRegExp(SIGIL.keyPrefixTest)})[A-Za-z0-9]{32}$`,
);

/** The identity the gateway presents to the accounts service's internal endpoint. */
export const GATEWAY_SERVICE_PRINCIPAL: Principal = Object.freeze({
  kind: 'service',
  organizationId: 'platform',
  actorId: 'gateway',
  mode: 'live',
  permissions: [],
}) as Principal;

export type ResolutionFailure = 'malformed' | AuthenticateFailureReason;
export type Resolution = { principal: Principal } | { principal: null; reason: ResolutionFailure };

/** The NATS connection surface the authenticator needs (a `NatsConnection` fits). */
export type RevocationFeed = Pick<Bus, 'listen' | 'onReconnect'>;

export interface AuthenticatorOptions {
  /** Base URL of the accounts service; without it every look-up fails with 503. */
  accountsUrl: string | undefined;
  signPrincipal: PrincipalSigner;
  log: Logger;
  /** Lifetime of a cached positive answer. Default 30 s. */
  ttlMs?: number;
  /** Most entries kept. Default 10 000. */
  max?: number;
  /** Deadline of one call to the accounts service. Default 5 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** The clock of cache lifetimes (epoch milliseconds); tests move it by hand. */
  now?: () => number;
}

interface InflightLookup {
  promise: Promise<Resolution>;
  /** Evictions made while the look-up was in flight: an answer one of them matches is not cached. */
  evicted: Array<(principal: Principal) => boolean>;
}

export interface LookupContext {
  requestId?: string;
}

export interface AuthenticatorStats {
  /** Calls made to the accounts service. */
  lookups: number;
  /** Answers served from the cache. */
  hits: number;
  size: number;
}

export interface Authenticator {
  /** Resolves an API key. A key of the wrong shape is `malformed` without any look-up. */
  resolveApiKey(key: string, context?: LookupContext): Promise<Resolution>;
  /** Resolves the value of the dashboard session cookie. */
  resolveSession(token: string, context?: LookupContext): Promise<Resolution>;
  /** Drops every cached entry of this API key id. Returns how many entries went. */
  evictApiKey(apiKeyId: string): number;
  /** Drops the cached entry of the key whose secret hashes to `keyHash`. */
  evictApiKeyHash(keyHash: string): void;
  /** Drops the cached entry of the session whose token hashes to `sessionHash`. */
  evictSessionHash(sessionHash: string): void;
  /** Drops the cached entry of this raw session token (sign-out through this gateway). */
  evictSessionToken(token: string): void;
  /** Drops every cached session of a user (their role changed or they left the organization). */
  evictUser(userId: string, organizationId?: string): number;
  /** Drops everything (for instance after missing events while NATS was unreachable). */
  clear(): void;
  /**
   * Subscribes (core NATS, every replica gets every message) to the revocation events and evicts on
   * each. Resolves once the subscriptions are registered with the server.
   */
  subscribeRevocations(bus: RevocationFeed): Promise<{ unsubscribe(): void }>;
  stats(): AuthenticatorStats;
}

export { sha256Hex };

const API_KEY_PREFIX = 'api_key:';
const SESSION_PREFIX = 'session:';

export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const { signPrincipal, log } = options;
  const ttlMs = options.ttlMs ?? 30_000;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const fetchImpl = options.fetch ?? fetch;
  const accountsUrl = options.accountsUrl?.replace(/\/+$/, '');
  const now = options.now ?? Date.now;
  const cache = new LRUCache<string, Principal>({ max: options.max ?? 10_000, ttl: ttlMs, ttlResolution: 0, perf: { now } });
  /**
   * De-duplicates concurrent look-ups of one credential. An eviction while a look-up is in flight is
   * remembered on it, so its answer is not cached if the eviction concerns it (and only then).
   */
  const inflight = new Map<string, InflightLookup>();
  let lookups = 0;
  let hits = 0;

  function invalidateInflight(cacheKey: string): void {
    const pending = inflight.get(cacheKey);
    if (!pending) return;
    pending.evicted.push(() => true);
    inflight.delete(cacheKey);
  }

  async function lookup(body: AuthenticateRequest, context: LookupContext): Promise<AuthenticateResponse> {
    if (!accountsUrl) throw new AppError('service-unavailable', 'The accounts service is not configured; credentials cannot be checked.');
    lookups++;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      [PRINCIPAL_HEADER]: await signPrincipal(GATEWAY_SERVICE_PRINCIPAL),
    };
    if (context.requestId) headers[REQUEST_ID_HEADER] = context.requestId;
    let response: Response;
    try {
      response = await fetchImpl(accountsUrl + INTERNAL_AUTHENTICATE_PATH, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      log.warn({ err: error }, 'accounts authenticate call failed');
      throw new AppError('bad-gateway', 'The accounts service could not be reached to check the credentials.', { cause: error });
    }
    if (!response.ok) {
      await response.body?.cancel();
      log.warn({ status: response.status }, 'accounts authenticate call answered an error');
      throw new AppError('bad-gateway', 'The accounts service could not check the credentials.');
    }
    const answer = (await response.json().catch(() => undefined)) as AuthenticateResponse | undefined;
    if (!isAuthenticateResponse(answer)) {
      log.error({ answer }, 'accounts authenticate call answered an unexpected body');
      throw new AppError('bad-gateway', 'The accounts service answered an unexpected body.');
    }
    return answer;
  }

  function resolve(cacheKey: string, body: AuthenticateRequest, context: LookupContext): Promise<Resolution> {
    const cached = cache.get(cacheKey);
    if (cached) {
      hits++;
      return Promise.resolve({ principal: cached });
    }
    const pending = inflight.get(cacheKey);
    if (pending) return pending.promise;
    const evicted: InflightLookup['evicted'] = [];
    const promise = lookup(body, context)
      .then((answer): Resolution => {
        if (answer.principal === null) return { principal: null, reason: answer.reason };
        const principal = Object.freeze({ ...answer.principal }) as Principal;
        const ttl = entryTtl(ttlMs, 'expiresAt' in answer ? answer.expiresAt : undefined, now());
        if (ttl > 0 && !evicted.some((matches) => matches(principal))) cache.set(cacheKey, principal, { ttl });
        return { principal };
      })
      .finally(() => {
        if (inflight.get(cacheKey)?.promise === promise) inflight.delete(cacheKey);
      });
    inflight.set(cacheKey, { promise, evicted });
    return promise;
  }

  function evictWhere(predicate: (principal: Principal) => boolean): number {
    const doomed: string[] = [];
    for (const [key, principal] of cache.entries()) if (predicate(principal)) doomed.push(key);
    for (const key of doomed) cache.delete(key);
    for (const pending of inflight.values()) pending.evicted.push(predicate);
    return doomed.length;
  }

  const authenticator: Authenticator = {
    resolveApiKey(key, context = {}) {
      if (!API_KEY_PATTERN.test(key)) return Promise.resolve({ principal: null, reason: 'malformed' });
      const secretHash = sha256Hex(key);
      return resolve(API_KEY_PREFIX + secretHash, { type: 'api_key', secretHash }, context);
    },
    resolveSession(token, context = {}) {
      // The cookie's format belongs to accounts; only absurd values are refused without a look-up.
      if (token.length === 0 || token.length > 512) return Promise.resolve({ principal: null, reason: 'malformed' });
      const tokenHash = sha256Hex(token);
      return resolve(SESSION_PREFIX + tokenHash, { type: 'session', tokenHash }, context);
    },
    evictApiKey(apiKeyId) {
      const count = evictWhere((p) => p.kind === 'api_key' && (p.apiKeyId ?? p.actorId) === apiKeyId);
      log.debug({ apiKeyId, count }, 'evicted api key');
      return count;
    },
    evictApiKeyHash(keyHash) {
      cache.delete(API_KEY_PREFIX + keyHash);
      invalidateInflight(API_KEY_PREFIX + keyHash);
    },
    evictSessionHash(sessionHash) {
      cache.delete(SESSION_PREFIX + sessionHash);
      invalidateInflight(SESSION_PREFIX + sessionHash);
    },
    evictSessionToken(token) {
      authenticator.evictSessionHash(sha256Hex(token));
    },
    evictUser(userId, organizationId) {
      return evictWhere(
        (p) => p.kind === 'session' && p.userId === userId && (organizationId === undefined || p.organizationId === organizationId),
      );
    },
    clear() {
      cache.clear();
      for (const cacheKey of [...inflight.keys()]) invalidateInflight(cacheKey);
    },
    async subscribeRevocations(bus) {
      const handlers: Partial<Record<EventType, (event: DomainEvent) => void>> = {
        'apikey.revoked': (event) => {
          const data = event.data as DomainEvent<'apikey.revoked'>['data'];
          if (typeof data.keyHash === 'string') authenticator.evictApiKeyHash(data.keyHash);
          if (typeof data.apiKeyId === 'string') authenticator.evictApiKey(data.apiKeyId);
        },
        'session.revoked': (event) => {
          const data = event.data as DomainEvent<'session.revoked'>['data'];
          if (typeof data.sessionHash === 'string') authenticator.evictSessionHash(data.sessionHash);
        },
        // A cached session carries the member's role and permissions: drop it when they change.
        'member.removed': (event) => {
          const data = event.data as DomainEvent<'member.removed'>['data'];
          if (typeof data.userId === 'string') authenticator.evictUser(data.userId, event.organizationId);
        },
        'member.role_changed': (event) => {
          const data = event.data as DomainEvent<'member.role_changed'>['data'];
          if (typeof data.userId === 'string') authenticator.evictUser(data.userId, event.organizationId);
        },
      };
      const subscriptions = await Promise.all(
        Object.entries(handlers).map(([type, handle]) =>
          bus.listen(eventSubject(type as EventType), (payload) => {
            const event = payload as DomainEvent | null;
            if (!event || typeof event !== 'object' || !event.data || typeof event.data !== 'object') {
              log.warn({ type }, 'ignored a malformed revocation event');
              return;
            }
            handle(event);
            log.debug({ type, eventId: event.id }, 'revocation event applied');
          }),
        ),
      );
      // Notifications are not replayed after a disconnection: what was revoked meanwhile is unknown, forget everything.
      const reconnects = bus.onReconnect(() => {
        log.warn('reconnected to NATS; revocations may have been missed, clearing the credential cache');
        authenticator.clear();
      });
      return {
        unsubscribe: () => {
          reconnects.unsubscribe();
          for (const subscription of subscriptions) subscription.unsubscribe();
        },
      };
    },
    stats: () => ({ lookups, hits, size: cache.size }),
  };
  return authenticator;
}

function entryTtl(ttlMs: number, expiresAt: string | null | undefined, now: number): number {
  if (!expiresAt) return ttlMs;
  const until = Date.parse(expiresAt) - now;
  return Number.isNaN(until) ? ttlMs : Math.min(ttlMs, until);
}
