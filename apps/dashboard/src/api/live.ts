import { createLiveSource, useLiveSource, useRefetchWhenIdle } from '@sigil/web-ui';
import type { Mode } from './mode.ts';

/** One change to the signed-in organization, from the gateway's `/app/live` stream (gateway/src/dashboard.ts). */
export interface Change {
  /** The domain event (`recipient.signed`, `envelope.created`, `apikey.revoked`, ...), or `resync` after lost events. */
  type: string;
  at: string;
  testMode?: boolean;
  ids: Record<string, string>;
}

/** One EventSource for the whole app, opened with the first listener and closed with the last. */
const changes = createLiveSource<Change>({
  url: '/app/live',
  events: ['change'],
  parse: (_name, data) => JSON.parse(data) as Change,
  resync: () => ({ type: 'resync', at: new Date().toISOString(), ids: {} }),
});

export interface LiveOptions {
  /** The current mode: changes of the other mode are ignored (events without a mode always count). */
  mode: Mode;
  /** Event types that matter (prefixes: `envelope.` matches every envelope event). Empty: every change. */
  types?: readonly string[];
  /** Further filter, e.g. only this envelope's changes. */
  filter?: (change: Change) => boolean;
  /** Collects bursts (a send emits several events) into one call; default 150 ms. */
  debounceMs?: number;
}

/**
 * Calls `onChange` when the organization changes in a way the page shows; pages refetch their queries
 * (`requestPolicy: 'network-only'`) from it. A `resync` always counts.
 */
export function useLive(onChange: (change: Change) => void, options: LiveOptions): void {
  useLiveSource(
    changes,
    onChange,
    (change) => {
      if (change.type === 'resync') return true;
      if (change.testMode !== undefined && change.testMode !== (options.mode === 'test')) return false;
      if (options.types?.length && !options.types.some((t) => change.type === t || (t.endsWith('.') && change.type.startsWith(t)))) return false;
      return options.filter ? options.filter(change) : true;
    },
    options.debounceMs,
  );
}

/**
 * Reads a page's query again (network-only) on the changes it shows, never cutting off the read in flight: `fetching`
 * is the query's (urql's `useQuery`), `refetch` its re-execute function.
 */
export function useLiveRefetch(fetching: boolean, refetch: (options: { requestPolicy: 'network-only' }) => void, options: LiveOptions): void {
  useLive(useRefetchWhenIdle(fetching, () => refetch({ requestPolicy: 'network-only' })), options);
}
