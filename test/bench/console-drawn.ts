// When a measured page counts as drawn, checked inside the page: its marks (every backup's on the target page's
// timeline, every row of the static list) are in their container and, for the timeline, at the width it is laid out
// at (it draws first at a guessed width, then again at its measured one). The functions below run in the page
// (Playwright serialises them): plain functions with their own types, since this project's TypeScript has no DOM.
import type { TimelineAnswer } from './console-browser.ts';

/** `count` elements of class `className` inside the element `container` matches; `settled`: that SVG's viewBox is as wide as its box. */
export interface DrawnCheck {
  container: string;
  className: string;
  count: number;
  settled?: boolean;
}

/** The target page: a mark for every backup that succeeded, in the timeline's SVG, drawn at its laid-out width. */
export function appDrawn(timeline: TimelineAnswer): DrawnCheck {
  return { container: 'svg.timeline-svg', className: 'tl-backup', count: timeline.backups.filter((backup) => backup.phase === 'Succeeded').length, settled: true };
}

/** The static list: a row for each thing it lists. */
export const listDrawn = (rows: number): DrawnCheck => ({ container: 'ul#history', className: 'row', count: rows });

interface Element {
  nodeType: number;
  isConnected: boolean;
  textContent: string | null;
  matches(selector: string): boolean;
  querySelector(selector: string): Element | null;
  getElementsByClassName(className: string): { length: number };
  viewBox: { baseVal: { width: number } };
}
interface PageGlobals {
  document: Element;
  performance: { now(): number };
  MutationObserver: new (callback: (records: Array<{ addedNodes: Iterable<Element> }>) => void) => { observe(target: unknown, options: object): void; disconnect(): void };
  ResizeObserver: new (callback: (entries: Array<{ contentRect: { width: number } }>) => void) => { observe(target: Element): void; disconnect(): void };
  __benchDrawn(wall: number): void;
}

/**
 * An init script (it runs before the page's own scripts; the console's CSP forbids inline script, not this): reports
 * the page's clock the first time the page is drawn. Made to add next to nothing to the script time it bounds: a
 * mutation observer looks for the container among added nodes only, then counts its marks with a live collection of
 * the container alone; the laid-out width comes from a ResizeObserver (reading the box from script would force a
 * layout). A first version (a selector query over the document on every batch, and clientWidth) cost ~35–50 ms in a
 * profile of the target page.
 */
export function observeDrawn(check: DrawnCheck): void {
  const page = globalThis as unknown as PageGlobals;
  let container: Element | undefined;
  let marks: { length: number } | undefined;
  let width: number | undefined;
  let reported = false;
  const report = () => {
    if (reported || !container || !marks || marks.length < check.count) return;
    if (check.settled && (width === undefined || Math.abs(container.viewBox.baseVal.width - width) > 1)) return;
    reported = true;
    mutations.disconnect();
    sizes.disconnect();
    page.__benchDrawn(page.performance.now());
  };
  const sizes = new page.ResizeObserver((entries) => {
    width = Math.round(entries[entries.length - 1]?.contentRect.width ?? 0);
    report();
  });
  const mutations = new page.MutationObserver((records) => {
    // A container the page replaced is looked for again.
    if (container && !container.isConnected) container = marks = undefined;
    for (const record of container ? [] : records) {
      for (const node of record.addedNodes) {
        if (node.nodeType !== 1) continue;
        container = node.matches(check.container) ? node : (node.querySelector(check.container) ?? undefined);
        if (!container) continue;
        marks = container.getElementsByClassName(check.className);
        if (check.settled) sizes.observe(container);
        break;
      }
      if (container) break;
    }
    report();
  });
  mutations.observe(page.document, { childList: true, subtree: true, attributes: true, attributeFilter: ['viewBox'] });
}

/** The marks in the page now (the capture waits for them; polled, not measured). */
export function countMarks(check: DrawnCheck): boolean {
  const container = (globalThis as unknown as PageGlobals).document.querySelector(check.container);
  return !!container && container.getElementsByClassName(check.className).length >= check.count;
}

/** What the page shows now, for a page not drawn in time. */
export function describeDrawn(check: DrawnCheck): string {
  const { document } = globalThis as unknown as PageGlobals;
  const container = document.querySelector(check.container);
  const main = document.querySelector('main');
  const shown = container ? `${container.getElementsByClassName(check.className).length} of ${check.count} marks${check.settled ? `, viewBox ${container.viewBox.baseVal.width} wide` : ''}` : `no ${check.container}`;
  return `${shown}; main: ${(main?.textContent ?? '').slice(0, 160)}`;
}
