import { createLiveSource, useLiveSource, useRefetchWhenIdle } from '@sigil/web-ui';

/** One update from the console API's `/api/v1/events` stream (spec part 6), or `resync` after the stream dropped. */
export interface StrataEvent {
  kind: 'backup' | 'restore' | 'sandbox' | 'target' | 'catalog' | 'resync';
  namespace: string;
  name: string;
  phase: string;
  stage: string;
  message: string;
  bytes: number;
  version: number;
}

const KINDS = ['backup', 'restore', 'sandbox', 'target', 'catalog'] as const;

const events = createLiveSource<StrataEvent>({
  url: '/api/v1/events',
  events: KINDS,
  parse: (_name, data) => JSON.parse(data) as StrataEvent,
  resync: () => ({ kind: 'resync', namespace: '', name: '', phase: '', stage: '', message: '', bytes: 0, version: 0 }),
});

/**
 * Calls `onEvent` when something the page shows changed (the stream coalesces every 500 ms; bursts are collected once
 * more here). `kinds` limits the kinds (empty: all); `filter` narrows further. A `resync` always counts.
 */
export function useStrataEvents(onEvent: (event: StrataEvent) => void, options: { kinds?: readonly StrataEvent['kind'][]; filter?: (event: StrataEvent) => boolean } = {}): void {
  useLiveSource(events, onEvent, (event) => {
    if (event.kind === 'resync') return true;
    if (options.kinds?.length && !options.kinds.includes(event.kind)) return false;
    return options.filter ? options.filter(event) : true;
  });
}

/**
 * Reads a page's query again (network-only) when the events it shows arrive, never cutting off the read in flight:
 * `fetching` is the query's (urql's `useQuery`), `refetch` its re-execute function.
 */
export function useStrataRefetch(fetching: boolean, refetch: (options: { requestPolicy: 'network-only' }) => void, options: Parameters<typeof useStrataEvents>[1] = {}): void {
  useStrataEvents(useRefetchWhenIdle(fetching, () => refetch({ requestPolicy: 'network-only' })), options);
}
