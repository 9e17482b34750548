/**
 * Live events turned into reads that never cut off the read in flight. urql's `refetch` replaces the running request,
 * so a stream of events faster than the query answers (backups reporting progress while the server is busy) would
 * keep a page on "Loading…" for as long as the events flow. An event that comes while the query is fetching is
 * remembered, and the query is read once more when the answer is in.
 */
export interface RefetchGate {
  /** An event asks for a fresh read. */
  request(): void;
  /** The query's `fetching` changed (after each render). */
  fetching(now: boolean): void;
}

export function createRefetchGate(refetch: () => void): RefetchGate {
  let busy = false;
  let pending = false;
  return {
    request() {
      if (busy) pending = true;
      else refetch();
    },
    fetching(now) {
      busy = now;
      if (busy || !pending) return;
      pending = false;
      refetch();
    },
  };
}

