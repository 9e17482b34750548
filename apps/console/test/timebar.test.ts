import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { MIN_WINDOW_PX, TimeBar, timeBarWords, windowPlacement } from '../src/components/timeline/TimeBar.tsx';
import { formatMoment } from '../src/format.ts';

const DAY = 86_400_000;
const now = Date.parse('2026-11-28T12:00:00Z');
const week = { from: now - 7 * DAY, to: now };
const lastSeconds = { from: now - 5000, to: now };

describe('the list row’s time bar', () => {
  it('draws a window only seconds wide at least MIN_WINDOW_PX wide, and inside the bar at the right edge', () => {
    const { left, width } = windowPlacement(week, lastSeconds);
    expect(width).toMatch(new RegExp(`^max\\([0-9.e-]+%, ${MIN_WINDOW_PX}px\\)$`));
    expect(left).toMatch(new RegExp(`^min\\([0-9.]+%, 100% - ${MIN_WINDOW_PX}px\\)$`));
    const html = renderToStaticMarkup(createElement(TimeBar, { range: week, windows: [lastSeconds], label: 'prod/orders' }));
    expect(html).toContain(`width:max(`);
    expect(html).toContain(`left:min(`);
  });

  it('places a wide window by its share of the range', () => {
    expect(windowPlacement(week, { from: now - 7 * DAY, to: now - 3.5 * DAY })).toEqual({ left: `min(0%, 100% - ${MIN_WINDOW_PX}px)`, width: `max(50%, ${MIN_WINDOW_PX}px)` });
    // A window that began before the range is drawn from its start.
    expect(windowPlacement(week, { from: now - 30 * DAY, to: now - 6 * DAY }).left).toBe(`min(0%, 100% - ${MIN_WINDOW_PX}px)`);
  });

  it('says each window with its real ends, whatever width it is drawn', () => {
    const words = timeBarWords(week, [lastSeconds], 'prod/orders');
    expect(words).toBe(`prod/orders: restorable from ${formatMoment(lastSeconds.from)} to ${formatMoment(lastSeconds.to)}`);
    const html = renderToStaticMarkup(createElement(TimeBar, { range: week, windows: [lastSeconds], label: 'prod/orders' }));
    expect(html).toContain('role="img"');
    expect(html).toContain(`aria-label="prod/orders: restorable from ${formatMoment(lastSeconds.from)}`);
  });

  it('counts only the gaps between windows, in the right number', () => {
    const early = { from: now - 3 * DAY, to: now - 2 * DAY };
    expect(timeBarWords(week, [early, lastSeconds], 'x')).toMatch(/; 1 gap between$/);
    expect(timeBarWords(week, [early, { from: now - DAY, to: now - DAY / 2 }, lastSeconds], 'x')).toMatch(/; 2 gaps between$/);
    expect(timeBarWords(week, [early], 'x')).not.toContain('gap');
    expect(timeBarWords(week, [], 'x')).toBe('x: nothing restorable in this period');
    expect(timeBarWords(week, [early], 'x', { reason: 'a segment is missing' })).toMatch(/; change log broken: a segment is missing$/);
  });
});
