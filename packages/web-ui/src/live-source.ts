import { useEffect, useRef } from 'react';
import { createRefetchGate, type RefetchGate } from './refetch-gate.ts';

/**
 * One server-sent event stream shared by every component of a page that listens to it: opened with the first
 * listener, closed with the last. After a dropped connection (the browser reconnects by itself) events may have been
 * missed, so listeners get `resync()` and read again.
 */
export interface LiveSource<T> {
  attach(listener: (event: T) => void): () => void;
}

export function createLiveSource<T>(options: { url: string; events: readonly string[]; parse: (name: string, data: string) => T | undefined; resync: () => T }): LiveSource<T> {
  const listeners = new Set<(event: T) => void>();
  let source: EventSource | undefined;
  let opened = false;
  const emit = (event: T) => {
    for (const listener of [...listeners]) listener(event);
  };
  return {
    attach(listener) {
      listeners.add(listener);
      if (!source) {
        source = new EventSource(options.url);
        for (const name of options.events) {
          source.addEventListener(name, (message) => {
            let event: T | undefined;
            try {
              event = options.parse(name, (message as MessageEvent<string>).data);
            } catch {
              return;
            }
            if (event !== undefined) emit(event);
          });
        }
        source.addEventListener('open', () => {
          if (opened) emit(options.resync());
          opened = true;
        });
      }
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) {
          source?.close();
          source = undefined;
          opened = false;
        }
      };
    },
  };
}

/**
 * Calls `onEvent` for the events `accept` keeps, a burst collected into one call (the last event) after `debounceMs`
 * (default 150 ms): pages refetch their queries from it.
 */
export function useLiveSource<T>(source: LiveSource<T>, onEvent: (event: T) => void, accept: (event: T) => boolean, debounceMs = 150): void {
  const latest = useRef({ onEvent, accept });
  latest.current = { onEvent, accept };
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let pending: T | undefined;
    const detach = source.attach((event) => {
      if (!latest.current.accept(event)) return;
      pending = event;
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (pending !== undefined) latest.current.onEvent(pending);
        pending = undefined;
      }, debounceMs);
    });
    return () => {
      clearTimeout(timer);
      detach();
    };
  }, [source, debounceMs]);
}

/** `createRefetchGate` for a component: `fetching` is its query's, `refetch` its re-execute function. */
export function useRefetchWhenIdle(fetching: boolean, refetch: () => void): () => void {
  const latest = useRef(refetch);
  latest.current = refetch;
  const gate = useRef<RefetchGate>(undefined);
  gate.current ??= createRefetchGate(() => latest.current());
  useEffect(() => gate.current!.fetching(fetching), [fetching]);
  const request = useRef(() => gate.current!.request());
  return request.current;
}
