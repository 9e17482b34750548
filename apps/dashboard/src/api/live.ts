import { useEffect, useRef } from 'react';
import type { Mode } from './mode.ts';

/** One change to the signed-in organization, from the gateway's `/app/live` stream (gateway/src/dashboard.ts). */
export interface Change {
  /** The domain event (`recipient.signed`, `envelope.created`, `apikey.revoked`, ...), or `resync` after lost events. */
  type: string;
  at: string;
  testMode?: boolean;
  ids: Record<string, string>;
}

type Listener = (change: Change) => void;

const listeners = new Set<Listener>();
let source: EventSource | undefined;

/** One EventSource for the whole app, opened with the first listener and closed with the last. */
function attach(listener: Listener): () => void {
  listeners.add(listener);
  if (!source) {
    source = new EventSource('/app/live');
    source.addEventListener('change', (message) => {
      let change: Change;
      try {
        change = JSON.parse((message as MessageEvent<string>).data) as Change;
      } catch {
        return;
      }
      for (const l of [...listeners]) l(change);
    });
    // After a dropped connection (the browser reconnects by itself) changes may have been missed: read again.
    source.addEventListener('open', () => {
      if (opened) for (const l of [...listeners]) l({ type: 'resync', at: new Date().toISOString(), ids: {} });
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
}
let opened = false;

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
  const latest = useRef({ onChange, options });
  latest.current = { onChange, options };
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let pending: Change | undefined;
    const detach = attach((change) => {
      const { options: o } = latest.current;
      if (change.type !== 'resync') {
        if (change.testMode !== undefined && change.testMode !== (o.mode === 'test')) return;
        if (o.types?.length && !o.types.some((t) => change.type === t || (t.endsWith('.') && change.type.startsWith(t)))) return;
        if (o.filter && !o.filter(change)) return;
      }
      pending = change;
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (pending) latest.current.onChange(pending);
        pending = undefined;
      }, o.debounceMs ?? 150);
    });
    return () => {
      clearTimeout(timer);
      detach();
    };
  }, []);
}
