/**
 * What a service reads about an organization from another service (billing's entitlements, accounts' branding):
 * one internal call per organization, kept for a TTL, dropped at once when the owner notifies a change on core NATS,
 * served stale for a while when the owner cannot be reached, and at most one call in flight per organization.
 */
import { createServiceClient, unexpectedAnswer, type PrincipalSigner } from './auth/index.ts';
import type { Bus, Subscription } from './bus/index.ts';
import type { Logger } from './log.ts';
import type { ServiceName } from '@sigil/proto/routes';

/** Where answers come from: the owning service over HTTP in a process, a fake in a service's tests. */
export type OrganizationSource<T> = (organizationId: string) => Promise<T>;

export interface OrganizationCache<T> {
  get(organizationId: string): Promise<T>;
  invalidate(organizationId: string): void;
  stop(): void;
}

export interface OrganizationCacheOptions<T> {
  source: OrganizationSource<T>;
  /** Notifications that an organization's answer changed; without a bus, only the TTL renews an answer. */
  bus?: Pick<Bus, 'listen' | 'onReconnect'>;
  /** The subjects of those notifications, each ending in the organization id (`subjectOf('*')` is listened to). */
  changedSubjects: Array<(organizationId: string) => string>;
  ttlMs: number;
  /** A stale answer serves this long while the owner cannot be reached. */
  staleForMs: number;
  /** After a failed read with no stale answer, reads fail at once for this long (0: every read tries again). */
  retryAfterMs?: number;
  maxEntries?: number;
  now?: () => number;
  log?: Logger;
  /** Words for the stale-answer warning, e.g. `the entitlements`. */
  what: string;
}

/** A JSON answer of another service's internal endpoint, as this service's own principal. */
export function internalJsonSource<T>(options: {
  target: ServiceName;
  baseUrl: string;
  signPrincipal: PrincipalSigner;
  actorId: string;
  timeoutMs: number;
  path: (organizationId: string) => string;
}): OrganizationSource<T> {
  const send = createServiceClient({ target: options.target, actorId: options.actorId, baseUrl: options.baseUrl, signPrincipal: options.signPrincipal, timeoutMs: options.timeoutMs });
  return async (organizationId) => {
    const response = await send(options.path(organizationId), { organizationId, mode: 'live' });
    if (!response.ok) throw await unexpectedAnswer(options.target, response);
    return (await response.json()) as T;
  };
}

interface Entry<T> {
  value: T;
  fetchedAt: number;
}

export async function createOrganizationCache<T>(options: OrganizationCacheOptions<T>): Promise<OrganizationCache<T>> {
  const maxEntries = options.maxEntries ?? 10_000;
  const retryAfter = options.retryAfterMs ?? 0;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry<T>>();
  const failures = new Map<string, { at: number; error: unknown }>();
  const inFlight = new Map<string, Promise<T>>();
  const subscriptions: Subscription[] = [];
  const drop = (organizationId: string) => {
    entries.delete(organizationId);
    failures.delete(organizationId);
  };
  if (options.bus) {
    for (const subjectOf of options.changedSubjects) {
      const prefix = subjectOf('');
      subscriptions.push(await options.bus.listen(subjectOf('*'), (_payload, subject) => drop(subject.slice(prefix.length))));
    }
    // Notifications sent while the connection was down are lost: every answer may be old.
    subscriptions.push(options.bus.onReconnect(() => entries.clear()));
  }

  /** Keeps at most maxEntries: a Map iterates in insertion order, so the first key is the one used least recently. */
  function remember<V>(map: Map<string, V>, organizationId: string, value: V): void {
    map.delete(organizationId);
    map.set(organizationId, value);
    if (map.size > maxEntries) map.delete(map.keys().next().value as string);
  }

  async function load(organizationId: string, stale: Entry<T> | undefined): Promise<T> {
    try {
      const value = await options.source(organizationId);
      failures.delete(organizationId);
      remember(entries, organizationId, { value, fetchedAt: now() });
      return value;
    } catch (error) {
      if (stale && now() - stale.fetchedAt < options.staleForMs) {
        options.log?.warn({ err: error, organizationId }, `the owning service did not answer: using ${options.what} read before`);
        return stale.value;
      }
      if (retryAfter > 0) remember(failures, organizationId, { at: now(), error });
      throw error;
    }
  }

  return {
    get(organizationId) {
      const entry = entries.get(organizationId);
      if (entry && now() - entry.fetchedAt < options.ttlMs) return Promise.resolve(entry.value);
      const failed = failures.get(organizationId);
      if (!entry && failed && now() - failed.at < retryAfter) return Promise.reject(failed.error);
      const pending = inFlight.get(organizationId);
      if (pending) return pending;
      const loading = load(organizationId, entry).finally(() => inFlight.delete(organizationId));
      inFlight.set(organizationId, loading);
      return loading;
    },
    invalidate: drop,
    stop: () => subscriptions.forEach((s) => s.unsubscribe()),
  };
}
