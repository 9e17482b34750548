import './timeline.css';
import { count, formatMoment } from '../../format.ts';
import { gapsOf, type TimeRange } from './model.ts';

/** The narrowest a window is drawn: one only seconds wide in a week (a target whose change log just started) still shows. */
export const MIN_WINDOW_PX = 4;

/**
 * Where a window sits on the bar, as CSS: its share of the range, but never narrower than MIN_WINDOW_PX, and pulled
 * back inside the bar when that minimum would push it past the right edge (the newest window usually ends at now).
 */
export function windowPlacement(range: TimeRange, window: TimeRange): { left: string; width: string } {
  const share = (at: number) => ((Math.min(Math.max(at, range.from), range.to) - range.from) / (range.to - range.from)) * 100;
  const from = share(window.from);
  const width = share(window.to) - from;
  return { left: `min(${from}%, 100% - ${MIN_WINDOW_PX}px)`, width: `max(${width}%, ${MIN_WINDOW_PX}px)` };
}

/** What the bar shows, in words: each window with its real ends (the drawn minimum width is not a longer window). */
export function timeBarWords(range: TimeRange, windows: readonly TimeRange[], label: string, broken?: { reason: string }): string {
  const visible = windows.filter((w) => w.to > range.from && w.from < range.to);
  const first = Math.min(...visible.map((w) => w.from));
  const last = Math.max(...visible.map((w) => w.to));
  // Gaps between windows only: not the stretch before the first one nor after the last one.
  const between = gapsOf(range, windows).filter((gap) => gap.from > first && gap.to < last).length;
  const words = visible.length
    ? `${label}: restorable ${visible.map((w) => `from ${formatMoment(w.from)} to ${formatMoment(w.to)}`).join('; ')}${between ? `; ${count(between, 'gap')} between` : ''}`
    : `${label}: nothing restorable in this period`;
  return broken ? `${words}; change log broken: ${broken.reason}` : words;
}

/**
 * A target's restore windows over a range, as one thin bar for a list row: green where a restore is possible, grey
 * where not, red where the change log broke. Screen readers get the same in words.
 */
export function TimeBar({ range, windows, broken, label }: { range: TimeRange; windows: readonly TimeRange[]; broken?: { at?: number; reason: string }; label: string }) {
  const visible = windows.filter((w) => w.to > range.from && w.from < range.to);
  const breakAt = broken?.at !== undefined && broken.at >= range.from ? windowPlacement(range, { from: broken.at, to: broken.at }).left : undefined;
  return (
    <div className="timebar" role="img" aria-label={timeBarWords(range, windows, label, broken)}>
      {visible.map((w) => (
        <span key={w.from} className="timebar-window" style={windowPlacement(range, w)} />
      ))}
      {breakAt && <span className="timebar-break" style={{ left: breakAt }} />}
    </div>
  );
}
