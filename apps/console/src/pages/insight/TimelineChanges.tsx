import { useEffect, useState } from 'react';
import { Link } from 'react-aria-components';
import type { TimeRange } from '../../components/timeline/model.ts';
import { formatMoment } from '../../format.ts';
import { ChangesList } from './ChangesList.tsx';
import { changesPath } from './insight-model.ts';

/** The range a person settled on: zooming and moving the timeline fire many ranges, the read waits for a pause. */
function useSettled(range: TimeRange, ms = 400): TimeRange {
  const [settled, setSettled] = useState(range);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(range), ms);
    return () => clearTimeout(timer);
  }, [range.from, range.to, ms]);
  return settled;
}

/** To the whole second: a read per second of movement, not per pixel. */
const second = (at: number, up: boolean) => new Date((up ? Math.ceil(at / 1000) : Math.floor(at / 1000)) * 1000).toISOString();

/** What each change-log segment in the timeline's visible range did (follows zooming and moving the timeline). */
export function TimelineChanges({ namespace, name, range }: { namespace: string; name: string; range: TimeRange }) {
  const settled = useSettled(range);
  const since = second(settled.from, false);
  const until = second(settled.to, true);
  return (
    <section aria-labelledby="changes-heading" className="target-section">
      <h2 id="changes-heading">Changes</h2>
      <p className="muted small">
        What each change-log segment did from {formatMoment(Date.parse(since))} to {formatMoment(Date.parse(until))}, the stretch the timeline shows (zoom or move it to see others).{' '}
        <Link href={changesPath(namespace, name, since, until)}>Open these changes on their own page</Link>
      </p>
      <ChangesList namespace={namespace} name={name} since={since} until={until} label="Changes by segment" />
    </section>
  );
}
