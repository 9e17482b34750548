/** What a timeline draws, in epoch milliseconds: independent of where the data came from (GraphQL, a bench's JSON). */
export interface TimeRange {
  from: number;
  to: number;
}

export interface TimelineData {
  /** Where a restore to any moment is possible (a full plus an unbroken change log after it). */
  windows: TimeRange[];
  backups: Array<{ id: string; at: number; verified: boolean; verifyFailed: boolean; pinned: boolean; mode: string }>;
  /** Change-log segments merged into spans (the server merges neighbours closer than a pixel or so). */
  spans: Array<TimeRange & { segments: number; commits: number; partial: boolean }>;
  verifications: Array<{ at: number; passed: boolean; backupId: string }>;
  /** Where the change log broke, and why. */
  breaks: Array<{ at: number; reason: string }>;
}

/** The gaps of a range: what no window covers (windows sorted or not). */
export function gapsOf(range: TimeRange, windows: readonly TimeRange[]): TimeRange[] {
  const sorted = [...windows].filter((w) => w.to > range.from && w.from < range.to).sort((a, b) => a.from - b.from);
  const gaps: TimeRange[] = [];
  let cursor = range.from;
  for (const window of sorted) {
    if (window.from > cursor) gaps.push({ from: cursor, to: Math.min(window.from, range.to) });
    cursor = Math.max(cursor, window.to);
  }
  if (cursor < range.to) gaps.push({ from: cursor, to: range.to });
  return gaps;
}

/** Whether a moment lies in a window (a restore to it is possible). */
export function isRestorable(at: number, windows: readonly TimeRange[]): boolean {
  return windows.some((w) => at >= w.from && at <= w.to);
}

/** A range zoomed by `factor` (< 1 zooms in) around `anchor`, never wider than `limit` nor narrower than a minute. */
export function zoomed(range: TimeRange, factor: number, anchor: number, limit: TimeRange): TimeRange {
  const width = Math.min(limit.to - limit.from, Math.max(60_000, (range.to - range.from) * factor));
  const ratio = (anchor - range.from) / (range.to - range.from);
  return clamp({ from: anchor - width * ratio, to: anchor - width * ratio + width }, limit);
}

/** A range moved by `delta` milliseconds, kept inside `limit`. */
export function panned(range: TimeRange, delta: number, limit: TimeRange): TimeRange {
  return clamp({ from: range.from + delta, to: range.to + delta }, limit);
}

function clamp(range: TimeRange, limit: TimeRange): TimeRange {
  const width = range.to - range.from;
  if (range.from < limit.from) return { from: limit.from, to: limit.from + width };
  if (range.to > limit.to) return { from: limit.to - width, to: limit.to };
  return range;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const SECOND = 1000;
const STEPS = [SECOND, 5 * SECOND, 10 * SECOND, 30 * SECOND, MINUTE, 5 * MINUTE, 15 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 7 * DAY, 30 * DAY];

/** Axis ticks: round moments about `count` apart over the range, labelled in the person's time zone. */
export function ticksOf(range: TimeRange, count: number): Array<{ at: number; label: string }> {
  const step = STEPS.find((s) => (range.to - range.from) / s <= count) ?? STEPS[STEPS.length - 1]!;
  const offset = new Date(range.from).getTimezoneOffset() * MINUTE;
  const first = Math.ceil((range.from - offset) / step) * step + offset;
  const ticks: Array<{ at: number; label: string }> = [];
  for (let at = first; at <= range.to && ticks.length < 200; at += step) {
    const date = new Date(at);
    const label =
      step >= DAY
        ? date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })
        : date.toLocaleTimeString(undefined, step < MINUTE ? { hour: '2-digit', minute: '2-digit', second: '2-digit' } : { hour: '2-digit', minute: '2-digit' });
    ticks.push({ at, label });
  }
  return ticks;
}

/** The keyboard step of the moment picker at this zoom: about a pixel's worth, rounded to a second, a minute or more. */
export function keyStep(range: TimeRange, widthPx: number): number {
  const perPixel = (range.to - range.from) / Math.max(1, widthPx);
  return [1000, 10_000, MINUTE, 5 * MINUTE, 15 * MINUTE, HOUR].find((s) => s >= perPixel) ?? HOUR;
}
