import './timeline.css';
import { formatMoment } from '../../format.ts';
import { gapsOf, type TimeRange } from './model.ts';

/**
 * A target's restore windows over a range, as one thin bar for a list row: green where a restore is possible, grey
 * where not, red where the change log broke. Screen readers get the same in words.
 */
export function TimeBar({ range, windows, broken, label }: { range: TimeRange; windows: readonly TimeRange[]; broken?: { at?: number; reason: string }; label: string }) {
  const width = range.to - range.from;
  const pct = (at: number) => `${(Math.min(Math.max(at, range.from), range.to) - range.from) / width * 100}%`;
  const visible = windows.filter((w) => w.to > range.from && w.from < range.to);
  const gaps = gapsOf(range, windows);
  const words = visible.length
    ? `${label}: restorable ${visible.map((w) => `from ${formatMoment(w.from)} to ${formatMoment(w.to)}`).join('; ')}${gaps.length > 1 ? `; ${gaps.length - 1} gap${gaps.length > 2 ? 's' : ''} between` : ''}`
    : `${label}: nothing restorable in this period`;
  return (
    <div className="timebar" role="img" aria-label={broken ? `${words}; change log broken: ${broken.reason}` : words}>
      {visible.map((w) => (
        <span key={w.from} className="timebar-window" style={{ left: pct(w.from), width: `calc(${pct(w.to)} - ${pct(w.from)})` }} />
      ))}
      {broken?.at !== undefined && broken.at >= range.from && <span className="timebar-break" style={{ left: pct(broken.at) }} />}
    </div>
  );
}
