import { useMemo, useRef, useState } from 'react';
import { Link } from 'react-aria-components';
import { useQuery } from 'urql';
import { FormError, Loading } from '@sigil/web-ui';
import { refusalOf } from '../../api/graphql-refusal.ts';
import { useSession } from '../../app/session.tsx';
import { useStrataRefetch } from '../../api/events.ts';
import { Timeline } from '../../components/timeline/Timeline.tsx';
import { isRestorable, type TimeRange } from '../../components/timeline/model.ts';
import { formatMoment } from '../../format.ts';
import { graphql } from '../../gql';
import { historyRange, timelineDataOf } from '../../components/timeline/fragment.ts';
import type { TimelinePartsFragment } from '../../gql/graphql.ts';
import { TimelineChanges } from '../insight/TimelineChanges.tsx';

const TimelineQuery = graphql(`
  query ConsoleTargetTimeline($namespace: String!, $name: String!, $from: String, $to: String) {
    strataTarget(namespace: $namespace, name: $name) {
      namespace
      name
      timeline(from: $from, to: $to) {
        ...TimelineParts
      }
    }
  }
`);

/**
 * The target's history on the zoomable timeline. The first answer (no range: the whole history) sets how far the view
 * may zoom out; each zoom or move asks for its range (finer change-log spans). A restorer picks a moment on it and
 * goes to the restore wizard with it.
 */
export function TargetTimeline({ namespace, name }: { namespace: string; name: string }) {
  const { can } = useSession();
  const [range, setRange] = useState<TimeRange>();
  const [picked, setPicked] = useState<number>();
  const variables = { namespace, name, from: range ? new Date(range.from).toISOString() : undefined, to: range ? new Date(range.to).toISOString() : undefined };
  const [{ data, fetching, error }, refetch] = useQuery({ query: TimelineQuery, variables });
  useStrataRefetch(fetching, refetch, { kinds: ['backup', 'target', 'restore'], filter: (e) => e.namespace === namespace });
  const limit = useRef<TimeRange>(undefined);
  const shown = useRef<TimelinePartsFragment>(undefined);
  const answer = data?.strataTarget?.timeline;
  if (answer) shown.current = answer;
  // An answer for the whole history (no range asked) sets how far the view reaches: from its start to now.
  if (answer && (!limit.current || !range)) limit.current = historyRange(answer);
  const timeline = useMemo(() => (shown.current ? timelineDataOf(shown.current) : undefined), [shown.current]);

  if (!timeline || !limit.current) return error ? <FormError error={refusalOf(error)} /> : <Loading what="the timeline" />;
  const view = range ?? limit.current;
  const restorer = can('restorer');
  return (
    <>
      <section aria-labelledby="timeline-heading" className="target-section">
        <h2 id="timeline-heading">Timeline</h2>
        <FormError error={refusalOf(error)} />
        <Timeline
          data={timeline}
          range={view}
          limit={limit.current}
          onRangeChange={setRange}
          label={`History of ${namespace}/${name}: restore windows, full backups, change log and verifications`}
          describedBy={restorer ? 'timeline-help' : undefined}
          {...(restorer ? { selected: picked, onSelect: setPicked } : {})}
        />
        {restorer && picked !== undefined && (
          <p className="picked" aria-live="polite">
            {isRestorable(picked, timeline.windows) ? (
              <>
                {formatMoment(picked)} can be restored.{' '}
                <Link href={`/restore?target=${encodeURIComponent(`${namespace}/${name}`)}&at=${encodeURIComponent(new Date(picked).toISOString())}`}>Restore to this moment</Link>
              </>
            ) : (
              <>{formatMoment(picked)} lies outside every restore window: pick a moment on a green stretch.</>
            )}
          </p>
        )}
        {restorer && (
          <p id="timeline-help" className="muted small">
            Click the timeline, or focus it and use the arrow keys (Shift for bigger steps, + and − to zoom), to pick a moment to restore to.
          </p>
        )}
      </section>
      <TimelineChanges namespace={namespace} name={name} range={view} />
    </>
  );
}
