import { useEffect, useRef } from 'react';

/** Webhook endpoints and deliveries have no domain event on the live stream: their pages read them again this often. */
export const POLL_MS = 5000;

/**
 * Calls `onTick` every `ms` while the page is visible, and once when it becomes visible again: for data without a
 * domain event on the live stream (webhook deliveries, invitations). Hidden tabs cost the API nothing.
 */
export function usePollWhileVisible(onTick: () => void, ms: number): void {
  const latest = useRef(onTick);
  latest.current = onTick;
  useEffect(() => {
    let timer: ReturnType<typeof setInterval> | undefined;
    const start = () => {
      clearInterval(timer);
      timer = setInterval(() => latest.current(), ms);
    };
    const onVisibility = () => {
      if (document.visibilityState === 'visible') {
        latest.current();
        start();
      } else {
        clearInterval(timer);
      }
    };
    if (document.visibilityState === 'visible') start();
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [ms]);
}
