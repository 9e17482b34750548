import { useEffect, useState, type DependencyList } from 'react';

export interface ReadState<T> {
  data?: T;
  error?: unknown;
  loading: boolean;
}

/**
 * A console API read (one not in GraphQL: a sandbox's tables and rows), done again when `deps` change; `load`
 * undefined reads nothing. An answer that arrives after the deps changed is dropped, so a slow read of the previous
 * table never replaces the current one.
 */
export function useRead<T>(load: (() => Promise<T>) | undefined, deps: DependencyList): ReadState<T> {
  const [state, setState] = useState<ReadState<T>>({ loading: false });
  useEffect(() => {
    if (!load) {
      setState({ loading: false });
      return;
    }
    let current = true;
    setState((previous) => ({ data: previous.data, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) => current && setState({ error, loading: false }),
    );
    return () => {
      current = false;
    };
    // `load` is a new closure each render: `deps` say when to read anew.
  }, deps);
  return state;
}
