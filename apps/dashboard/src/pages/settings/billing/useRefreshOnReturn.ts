import { useEffect, useRef } from 'react';

/**
 * Calls `onReturn` when the person comes back to the page: the window regains the focus, or the tab becomes visible
 * again. A plan changes elsewhere (the processor's portal in another tab, a colleague): billing has no domain event on
 * the live stream, so the page reads it again then.
 */
export function useRefreshOnReturn(onReturn: () => void): void {
  const latest = useRef(onReturn);
  latest.current = onReturn;
  useEffect(() => {
    // Focus and visibility often arrive together: one read for both.
    let last = 0;
    const refresh = () => {
      if (document.visibilityState !== 'visible' || Date.now() - last < 500) return;
      last = Date.now();
      latest.current();
    };
    window.addEventListener('focus', refresh);
    document.addEventListener('visibilitychange', refresh);
    return () => {
      window.removeEventListener('focus', refresh);
      document.removeEventListener('visibilitychange', refresh);
    };
  }, []);
}
