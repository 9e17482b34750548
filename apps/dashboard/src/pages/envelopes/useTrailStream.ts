import { useEffect, useRef, useState } from 'react';
import { AUDITED_TYPES, type TrailEntry } from './trail.ts';

export type StreamState = 'connecting' | 'live' | 'reconnecting';

/** Until the trail's first entry exists the stream answers 404 and EventSource gives up: try again, less and less often. */
const REOPEN_MS = 3000;
const REOPEN_MAX_MS = 30_000;

/**
 * The envelope's audit trail as it happens, from `GET /v1/envelopes/{id}/events/stream` (same-origin cookie). The
 * browser reconnects by itself and sends Last-Event-ID, so nothing is missed; entries are kept once each, in seq order.
 * `onEntry` hears each new one (the page reads the envelope again). No stream while `envelopeId` is undefined.
 */
export function useTrailStream(envelopeId: string | undefined, onEntry: (entry: TrailEntry) => void): { entries: TrailEntry[]; state: StreamState } {
  const [entries, setEntries] = useState<TrailEntry[]>([]);
  const [state, setState] = useState<StreamState>('connecting');
  const latest = useRef(onEntry);
  latest.current = onEntry;
  useEffect(() => {
    if (!envelopeId) return;
    let wait = REOPEN_MS;
    let source: EventSource | undefined;
    let reopen: ReturnType<typeof setTimeout> | undefined;
    const receive = (message: MessageEvent<string>) => {
      let entry: TrailEntry;
      try {
        entry = JSON.parse(message.data) as TrailEntry;
      } catch {
        return;
      }
      setEntries((seen) => (seen.some((e) => e.seq === entry.seq) ? seen : [...seen, entry].sort((a, b) => a.seq - b.seq)));
      latest.current(entry);
    };
    const open = () => {
      source = new EventSource(`/v1/envelopes/${encodeURIComponent(envelopeId)}/events/stream`);
      for (const type of AUDITED_TYPES) source.addEventListener(type, receive);
      source.addEventListener('message', receive);
      source.onopen = () => {
        wait = REOPEN_MS;
        setState('live');
      };
      source.onerror = () => {
        if (source?.readyState !== EventSource.CLOSED) return setState('reconnecting');
        // Refused (no trail yet, or the session ended): opened again later.
        setState('connecting');
        reopen = setTimeout(open, wait);
        wait = Math.min(wait * 2, REOPEN_MAX_MS);
      };
    };
    setEntries([]);
    setState('connecting');
    open();
    return () => {
      clearTimeout(reopen);
      source?.close();
    };
  }, [envelopeId]);
  return { entries, state };
}
