import { useCallback, useEffect, useState } from 'react';
import { useQuery } from 'urql';
import type { TimeRange, TimelineData } from '../../components/timeline/model.ts';
import { timelineDataOf } from '../../components/timeline/fragment.ts';
import { viewAround } from './timeline-data.ts';
import { useDebounced } from './use-debounced.ts';
import { TimelineQuery } from './wizard-queries.ts';

/** Spans the server merges the change log into: about one per two pixels of a wide timeline. */
const MAX_SPANS = 600;

export interface TargetTimelineState {
  /** The last data read (kept while the next range loads, so the picture does not blink). */
  data?: TimelineData;
  /** What is shown, and the whole history it may zoom and pan over (to now). */
  range?: TimeRange;
  limit?: TimeRange;
  setRange(range: TimeRange): void;
  error?: unknown;
  /** Reads again, the history reaching to now (new segments, a new backup). */
  reload(): void;
}

/**
 * The target's timeline for the moment picker: first its whole history (which sets how far it may zoom out), then
 * the range shown, read again whenever it settles after a zoom or a pan. `focusAt` (a moment from the link) gives
 * the first view: an hour around it.
 */
export function useTargetTimeline(namespace: string, name: string, focusAt: number | undefined): TargetTimelineState {
  const [limit, setLimit] = useState<TimeRange>();
  const [range, setRange] = useState<TimeRange>();
  const settled = useDebounced(range, 250);
  const shown = range && settled;
  const iso = (at: number) => new Date(at).toISOString();
  const variables = { namespace, name, from: shown ? iso(shown.from) : null, to: shown ? iso(shown.to) : null, maxSpans: MAX_SPANS };
  const [{ data: answer, error }, refetch] = useQuery({ query: TimelineQuery, variables, pause: !name });
  const timeline = answer?.strataTarget?.timeline;
  const [data, setData] = useState<TimelineData>();

  useEffect(() => {
    setLimit(undefined);
    setRange(undefined);
    setData(undefined);
  }, [namespace, name]);

  useEffect(() => {
    if (!timeline) return;
    setData(timelineDataOf(timeline));
    // The first answer is the whole history: it sets the limit and the first view.
    if (!range) {
      const whole = { from: Date.parse(timeline.from), to: Math.max(Date.parse(timeline.to), Date.now()) };
      setLimit(whole);
      setRange(focusAt !== undefined && focusAt >= whole.from && focusAt <= whole.to ? viewAround(focusAt, whole) : whole);
    }
  }, [timeline]);

  const reload = useCallback(() => {
    const now = Date.now();
    // A view that reached the present keeps reaching it.
    setLimit((l) => l && { from: l.from, to: now });
    setRange((r) => (r && limit && r.to >= limit.to - 1000 ? { from: r.from, to: now } : r));
    refetch({ requestPolicy: 'network-only' });
  }, [refetch, limit]);

  return { data, range, limit, setRange, error, reload };
}
