import { useEffect, type RefObject } from 'react';

/**
 * Marks a sideways scroller with what lies outside its view: `data-more-before` when it is scrolled away from its
 * start, `data-more-after` when more follows past its end; the stylesheet fades that edge, the hint that the row
 * scrolls. Nothing is hidden: every item stays in the page for the keyboard and screen readers. `current` (a
 * selector) is scrolled into view when `key` changes (the page, the items shown), so its link is never the one cut off.
 */
export function useOverflowEdges(ref: RefObject<HTMLElement | null>, current: string, key: unknown): void {
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const mark = () => {
      const more = element.scrollWidth - element.clientWidth;
      element.toggleAttribute('data-more-before', more > 1 && element.scrollLeft > 1);
      element.toggleAttribute('data-more-after', more > 1 && element.scrollLeft < more - 1);
    };
    mark();
    element.addEventListener('scroll', mark, { passive: true });
    const observer = new ResizeObserver(mark);
    observer.observe(element);
    return () => {
      element.removeEventListener('scroll', mark);
      observer.disconnect();
    };
  }, [ref, key]);

  useEffect(() => {
    const element = ref.current;
    const link = element?.querySelector<HTMLElement>(current);
    if (!element || !link || element.scrollWidth <= element.clientWidth) return;
    // Only sideways, inside the row: the page itself does not move.
    const box = element.getBoundingClientRect();
    const place = link.getBoundingClientRect();
    if (place.left < box.left || place.right > box.right) element.scrollLeft += place.left - box.left - (box.width - place.width) / 2;
  }, [ref, current, key]);
}
