import { useCallback, useEffect, useRef, type PointerEvent as ReactPointerEvent } from 'react';
import { clampToPage, snapMove, snapResize, type Box, type PageSize } from './model.ts';

export type DragMode = 'move' | 'resize';
/** Where a field stands: its page and its box there, in points. */
export type Placement = Box & { page: number };

interface FieldDragOptions {
  pageSizes: readonly PageSize[];
  /** The boxes of the other fields on `page` (what a moved or resized edge snaps to). */
  othersOn: (page: number, except: string) => Box[];
  /** Puts field `id` at `placement`, on its page or another. */
  place: (id: string, placement: Placement) => void;
}

/** A pointer that moved less than this (pixels) clicked: the field is chosen, not moved by a jitter and a snap. */
const CLICK_SLOP = 3;
/** How near (pixels) the pointer must come to the window's edge (or the sticky toolbar's) to scroll, and how fast. */
const EDGE = 48;
const SCROLL_STEP = 14;

interface PageGeometry {
  number: number;
  rect: DOMRect;
  size: PageSize;
}

/** The page element whose box is nearest the pointer (the one under it when there is one): between pages, the closer. */
function nearestPage(pages: Element, x: number, y: number, sizes: readonly PageSize[]): PageGeometry | undefined {
  let best: (PageGeometry & { distance: number }) | undefined;
  for (const element of pages.querySelectorAll<HTMLElement>('[data-page]')) {
    const number = Number(element.dataset.page);
    const size = sizes[number - 1];
    if (!size) continue;
    const rect = element.getBoundingClientRect();
    const distance = Math.hypot(Math.max(rect.left - x, 0, x - rect.right), Math.max(rect.top - y, 0, y - rect.bottom));
    if (!best || distance < best.distance) best = { number, rect, size, distance };
  }
  return best;
}

function pageGeometry(pages: Element, number: number, sizes: readonly PageSize[]): PageGeometry | undefined {
  const element = pages.querySelector(`[data-page="${number}"]`);
  const size = sizes[number - 1];
  return element && size ? { number, rect: element.getBoundingClientRect(), size } : undefined;
}

/** A point of the window (pixels) in a page's points from its top-left corner. */
function toPoints(page: PageGeometry, x: number, y: number): { x: number; y: number } {
  const scale = page.size.width / page.rect.width;
  return { x: (x - page.rect.left) * scale, y: (y - page.rect.top) * scale };
}

/** How far to scroll the window this frame: near its bottom edge down, near the top (below the sticky toolbar) up. */
function edgeScroll(y: number): number {
  const top = Math.max(0, document.querySelector('.tpl-toolbar')?.getBoundingClientRect().bottom ?? 0);
  if (y < top + EDGE) return -SCROLL_STEP;
  if (y > window.innerHeight - EDGE) return SCROLL_STEP;
  return 0;
}

/**
 * Moving and resizing placed fields with the pointer. A moved field follows the pointer onto whichever page it is
 * over (its page changes there), snapping to that page's grid and fields; the window scrolls when the pointer nears
 * its edge, so a field can travel to a page out of view. The listeners are the window's, not the field's: a field
 * that changes page is drawn by that page (a new element), and the drag goes on.
 */
export function useFieldDrag(options: FieldDragOptions) {
  const latest = useRef(options);
  latest.current = options;
  const stop = useRef<() => void>(undefined);
  useEffect(() => () => stop.current?.(), []);

  return useCallback((event: ReactPointerEvent<HTMLElement>, field: Placement & { id: string }, mode: DragMode) => {
    const pages = event.currentTarget.closest('.tpl-pages');
    const start = pages && pageGeometry(pages, field.page, latest.current.pageSizes);
    if (event.button !== 0 || !pages || !start) return;
    event.preventDefault();
    event.stopPropagation();
    stop.current?.();
    const origin = { x: event.clientX, y: event.clientY };
    const startPoint = toPoints(start, origin.x, origin.y);
    const box: Box = { x: field.x, y: field.y, width: field.width, height: field.height };
    let pointer = origin;
    let moved = false;

    const follow = () => {
      const { pageSizes, othersOn, place } = latest.current;
      if (mode === 'resize') {
        const page = pageGeometry(pages, field.page, pageSizes);
        if (!page) return;
        const at = toPoints(page, pointer.x, pointer.y);
        const resized = snapResize({ ...box, width: box.width + at.x - startPoint.x, height: box.height + at.y - startPoint.y }, othersOn(field.page, field.id));
        place(field.id, { page: field.page, ...clampToPage(resized, page.size) });
        return;
      }
      const page = nearestPage(pages, pointer.x, pointer.y, pageSizes);
      if (!page) return;
      const at = toPoints(page, pointer.x, pointer.y);
      // The point grabbed stays under the pointer (in the start page's points: pages of one document share a scale).
      const shifted = snapMove({ ...box, x: at.x - (startPoint.x - box.x), y: at.y - (startPoint.y - box.y) }, othersOn(page.number, field.id));
      place(field.id, { page: page.number, ...clampToPage(shifted, page.size) });
    };

    const onMove = (e: PointerEvent) => {
      if (e.pointerId !== event.pointerId) return;
      pointer = { x: e.clientX, y: e.clientY };
      moved ||= Math.hypot(pointer.x - origin.x, pointer.y - origin.y) >= CLICK_SLOP;
      if (moved) follow();
    };
    let frame = requestAnimationFrame(function scrollNearEdge() {
      const by = moved ? edgeScroll(pointer.y) : 0;
      if (by !== 0) {
        window.scrollBy(0, by);
        follow();
      }
      frame = requestAnimationFrame(scrollNearEdge);
    });
    const end = () => {
      cancelAnimationFrame(frame);
      window.removeEventListener('pointermove', onMove);
      window.removeEventListener('pointerup', end);
      window.removeEventListener('pointercancel', end);
      stop.current = undefined;
    };
    window.addEventListener('pointermove', onMove);
    window.addEventListener('pointerup', end);
    window.addEventListener('pointercancel', end);
    stop.current = end;
  }, []);
}
