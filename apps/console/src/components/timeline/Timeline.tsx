import { memo, useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent, type PointerEvent, type RefObject } from 'react';
import { Button } from 'react-aria-components';
import { count, formatMoment } from '../../format.ts';
import { gapsOf, isRestorable, keyStep, panned, ticksOf, zoomed, type TimeRange, type TimelineData } from './model.ts';
import './timeline.css';

const HEIGHT = 112;
/** About half the width of a tick's label ("09:10 AM" at 11 px). */
const TICK_LABEL_HALF_PX = 28;
const LANES = { windows: [4, 18], backups: [26, 46], spans: [54, 66], verifications: [72, 84], axis: 92 } as const;

export interface TimelineProps {
  data: TimelineData;
  /** What is drawn now; the parent keeps it (and may fetch finer data for it). */
  range: TimeRange;
  /** How far zooming out and panning may go (the target's whole history). */
  limit: TimeRange;
  onRangeChange(range: TimeRange): void;
  /** The picked moment; with `onSelect`, the timeline is a slider that picks it (click, arrows, Home/End). */
  selected?: number;
  onSelect?(at: number): void;
  /** Names the timeline for screen readers ("Restore windows of default/postgres"). */
  label: string;
  /** The id of the words that say how to use it (aria-describedby). */
  describedBy?: string;
}

/**
 * A target's history on one zoomable axis: where it can be restored to (windows, and the gaps between them), each full
 * backup, the change log's segments, each verification, and where the chain broke. Wheel or the buttons zoom and move;
 * picking a moment works with a click or the keyboard (arrows by about a pixel's worth, Shift by sixty times that,
 * Home/End to the ends, + and - to zoom around it).
 */
export function Timeline({ data, range, limit, onRangeChange, selected, onSelect, label, describedBy }: TimelineProps) {
  const box = useRef<SVGSVGElement>(null);
  const measured = useWidth(box);
  const width = measured ?? 800;
  const x = (at: number) => ((at - range.from) / (range.to - range.from)) * width;
  const at = (px: number) => range.from + (px / width) * (range.to - range.from);
  const ticks = useMemo(() => ticksOf(range, Math.max(2, Math.floor(width / 110))), [range, width]);

  useWheelZoom(box, (factor, px) => onRangeChange(zoomed(range, factor, at(px), limit)));

  const pick = (event: PointerEvent<SVGSVGElement>) => {
    if (!onSelect || !box.current) return;
    const bounds = box.current.getBoundingClientRect();
    onSelect(Math.round(at(event.clientX - bounds.left) / 1000) * 1000);
  };
  const onKeyDown = (event: KeyboardEvent<SVGSVGElement>) => {
    if (!onSelect) return;
    const step = keyStep(range, width) * (event.shiftKey ? 60 : 1);
    // The first key press starts from the newest restorable moment (what people restore to most), else the view's end.
    const current = selected ?? Math.max(...data.windows.map((w) => w.to), -Infinity);
    const start = Number.isFinite(current) ? current : range.to;
    const moves: Record<string, () => void> = {
      ArrowLeft: () => onSelect(Math.max(limit.from, start - (selected === undefined ? 0 : step))),
      ArrowDown: () => onSelect(Math.max(limit.from, start - (selected === undefined ? 0 : step))),
      ArrowRight: () => onSelect(Math.min(limit.to, start + (selected === undefined ? 0 : step))),
      ArrowUp: () => onSelect(Math.min(limit.to, start + (selected === undefined ? 0 : step))),
      Home: () => onSelect(range.from),
      End: () => onSelect(range.to),
      '+': () => onRangeChange(zoomed(range, 0.5, start, limit)),
      '=': () => onRangeChange(zoomed(range, 0.5, start, limit)),
      '-': () => onRangeChange(zoomed(range, 2, start, limit)),
    };
    const move = moves[event.key];
    if (!move) return;
    event.preventDefault();
    move();
  };
  // A moment picked by keyboard outside the view brings the view along.
  useEffect(() => {
    if (selected === undefined || (selected >= range.from && selected <= range.to)) return;
    onRangeChange(panned(range, selected < range.from ? selected - range.from - (range.to - range.from) * 0.1 : selected - range.to + (range.to - range.from) * 0.1, limit));
  }, [selected]);

  const restorable = selected !== undefined && isRestorable(selected, data.windows);
  const sliderProps = onSelect
    ? {
        role: 'slider',
        tabIndex: 0,
        'aria-valuemin': range.from,
        'aria-valuemax': range.to,
        'aria-valuenow': selected ?? range.to,
        'aria-valuetext': selected === undefined ? 'No moment picked' : `${formatMoment(selected)}, ${restorable ? 'restorable' : 'not restorable'}`,
        onKeyDown,
        onPointerDown: pick,
      }
    : { role: 'img' };

  return (
    <div className="timeline">
      <TimelineToolbar range={range} limit={limit} onRangeChange={onRangeChange} />
      <svg ref={box} className={onSelect ? 'timeline-svg picking' : 'timeline-svg'} width="100%" height={HEIGHT} viewBox={`0 0 ${width} ${HEIGHT}`} aria-label={label} aria-describedby={describedBy} {...sliderProps}>
        <Lane y={LANES.windows} />
        <Lane y={LANES.spans} />
        {/* Drawn once the width is known: thousands of marks are not drawn twice. */}
        {measured !== undefined && <TimelineMarks data={data} range={range} width={measured} />}
        <line className="tl-axis" x1={0} x2={width} y1={LANES.axis} y2={LANES.axis} />
        {ticks.map((tick) => (
          <g key={tick.at} className="tl-tick" transform={`translate(${x(tick.at)} ${LANES.axis})`}>
            <line y2={4} />
            <text y={16} textAnchor={tickAnchor(x(tick.at), width)}>
              {tick.label}
            </text>
          </g>
        ))}
        {selected !== undefined && selected >= range.from && selected <= range.to && <line className={restorable ? 'tl-selected' : 'tl-selected outside'} x1={x(selected)} x2={x(selected)} y1={0} y2={LANES.axis} />}
      </svg>
      <TimelineLegend />
    </div>
  );
}

/**
 * Every mark of the drawn range, each with its words (`<title>`). Kept apart and memoized: picking a moment re-renders
 * the timeline, not its thousands of marks.
 */
const TimelineMarks = memo(function TimelineMarks({ data, range, width }: { data: TimelineData; range: TimeRange; width: number }) {
  const x = (at: number) => ((at - range.from) / (range.to - range.from)) * width;
  const gaps = useMemo(() => gapsOf(range, data.windows), [range, data.windows]);
  const inRange = <T extends { at: number }>(items: readonly T[]) => items.filter((item) => item.at >= range.from && item.at <= range.to);
  return (
    <>
      {gaps.map((gap) => (
        <rect key={`gap-${gap.from}`} className="tl-gap" x={x(gap.from)} width={Math.max(1, x(gap.to) - x(gap.from))} y={LANES.windows[0]} height={LANES.windows[1] - LANES.windows[0]}>
          <title>{`Not restorable: ${formatMoment(gap.from)} to ${formatMoment(gap.to)}`}</title>
        </rect>
      ))}
      {data.windows.filter((w) => w.to >= range.from && w.from <= range.to).map((w) => (
        <rect key={`w-${w.from}`} className="tl-window" x={Math.max(0, x(w.from))} width={Math.max(2, Math.min(width, x(w.to)) - Math.max(0, x(w.from)))} y={LANES.windows[0]} height={LANES.windows[1] - LANES.windows[0]}>
          <title>{`Restorable: ${formatMoment(w.from)} to ${formatMoment(w.to)}`}</title>
        </rect>
      ))}
      {data.spans.filter((s) => s.to >= range.from && s.from <= range.to).map((s) => (
        <rect key={`s-${s.from}`} className={s.partial ? 'tl-span partial' : 'tl-span'} x={Math.max(0, x(s.from))} width={Math.max(2, Math.min(width, x(s.to)) - Math.max(0, x(s.from)))} y={LANES.spans[0]} height={LANES.spans[1] - LANES.spans[0]}>
          <title>{`Change log: ${count(s.segments, 'segment')}, ${count(s.commits, 'commit')}, ${formatMoment(s.from)} to ${formatMoment(s.to)}${s.partial ? ' (still being written)' : ''}`}</title>
        </rect>
      ))}
      {inRange(data.backups).map((b) => (
        <path key={b.id} className={`tl-backup${b.verifyFailed ? ' failed' : b.verified ? ' verified' : ''}${b.pinned ? ' pinned' : ''}`} d={`M ${x(b.at)} ${LANES.backups[0]} l 6 10 l -6 10 l -6 -10 z`}>
          <title>{`Full backup ${b.id} (${b.mode}) at ${formatMoment(b.at)}${b.verified ? ', verified' : ''}${b.verifyFailed ? ', verification failed' : ''}${b.pinned ? ', pinned' : ''}`}</title>
        </path>
      ))}
      {inRange(data.verifications).map((v) => (
        <circle key={`v-${v.backupId}-${v.at}`} className={v.passed ? 'tl-verify passed' : 'tl-verify failed'} cx={x(v.at)} cy={(LANES.verifications[0] + LANES.verifications[1]) / 2} r={5}>
          <title>{`Verification of ${v.backupId} ${v.passed ? 'passed' : 'failed'} at ${formatMoment(v.at)}`}</title>
        </circle>
      ))}
      {inRange(data.breaks).map((b) => (
        <line key={`b-${b.at}`} className="tl-break" x1={x(b.at)} x2={x(b.at)} y1={0} y2={LANES.axis}>
          <title>{`Chain broken at ${formatMoment(b.at)}: ${b.reason}`}</title>
        </line>
      ))}
    </>
  );
});

/** A tick's label centred on it, but kept whole near an edge (the view ends at now, often right on a round minute). */
function tickAnchor(px: number, width: number): 'start' | 'middle' | 'end' {
  if (px > width - TICK_LABEL_HALF_PX) return 'end';
  return px < TICK_LABEL_HALF_PX ? 'start' : 'middle';
}

function Lane({ y }: { y: readonly [number, number] }) {
  return <rect className="tl-lane" x={0} width="100%" y={y[0]} height={y[1] - y[0]} />;
}

function TimelineToolbar({ range, limit, onRangeChange }: { range: TimeRange; limit: TimeRange; onRangeChange(range: TimeRange): void }) {
  const middle = (range.from + range.to) / 2;
  const width = range.to - range.from;
  return (
    <div className="timeline-toolbar" role="toolbar" aria-label="Timeline view">
      <Button className="button button-small" onPress={() => onRangeChange(panned(range, -width / 2, limit))} isDisabled={range.from <= limit.from}>
        Earlier
      </Button>
      <Button className="button button-small" onPress={() => onRangeChange(zoomed(range, 0.5, middle, limit))}>
        Zoom in
      </Button>
      <Button className="button button-small" onPress={() => onRangeChange(zoomed(range, 2, middle, limit))} isDisabled={width >= limit.to - limit.from}>
        Zoom out
      </Button>
      <Button className="button button-small" onPress={() => onRangeChange(panned(range, width / 2, limit))} isDisabled={range.to >= limit.to}>
        Later
      </Button>
      <Button className="button button-small" onPress={() => onRangeChange(limit)}>
        Whole history
      </Button>
      <span className="muted small" aria-live="polite">
        {formatMoment(range.from)} – {formatMoment(range.to)}
      </span>
    </div>
  );
}

function TimelineLegend() {
  return (
    <ul className="timeline-legend small" aria-label="Legend">
      <li><span className="swatch tl-window" aria-hidden="true" /> restorable</li>
      <li><span className="swatch tl-gap" aria-hidden="true" /> not restorable</li>
      <li><span className="swatch diamond" aria-hidden="true">◆</span> full backup (green: verified)</li>
      <li><span className="swatch tl-span" aria-hidden="true" /> change log</li>
      <li><span className="swatch dot" aria-hidden="true">●</span> verification</li>
      <li><span className="swatch tl-break-swatch" aria-hidden="true" /> chain broken</li>
    </ul>
  );
}

/** The drawn width in CSS pixels, following resizes: undefined until measured (before the first paint). */
function useWidth(ref: RefObject<SVGSVGElement | null>): number | undefined {
  const [width, setWidth] = useState<number>();
  const widthOf = (pixels: number) => Math.max(200, Math.round(pixels));
  useLayoutEffect(() => {
    if (ref.current) setWidth(widthOf(ref.current.getBoundingClientRect().width));
  }, [ref]);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => entry && setWidth(widthOf(entry.contentRect.width)));
    observer.observe(element);
    return () => observer.disconnect();
  }, [ref]);
  return width;
}

/** The wheel zooms around the pointer (a listener that may prevent the page's scroll: React's onWheel is passive). */
function useWheelZoom(ref: RefObject<SVGSVGElement | null>, zoom: (factor: number, px: number) => void): void {
  const latest = useRef(zoom);
  latest.current = zoom;
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const onWheel = (event: WheelEvent) => {
      if (Math.abs(event.deltaY) < Math.abs(event.deltaX)) return;
      event.preventDefault();
      latest.current(event.deltaY < 0 ? 0.8 : 1.25, event.clientX - element.getBoundingClientRect().left);
    };
    element.addEventListener('wheel', onWheel, { passive: false });
    return () => element.removeEventListener('wheel', onWheel);
  }, [ref]);
}
