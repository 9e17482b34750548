import { useEffect, useState } from 'react';
import { duration } from '../../format.ts';

/** The current time, renewed every `everyMs`: what a countdown needs. */
function useNow(everyMs: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

/** "3 h 5 min left", or "expired" once `expires` is past (or the sandbox says it expired). */
export function timeLeftText(expires: string, phase: string, now: number): string {
  const seconds = (Date.parse(expires) - now) / 1000;
  if (phase === 'Expired' || !(seconds > 0)) return 'expired';
  return `${duration(seconds)} left`;
}

/**
 * The time a sandbox has left, counting down. Not a live region: a screen reader reads it when it gets there instead
 * of hearing it every second.
 */
export function TimeLeft({ expires, phase }: { expires: string; phase: string }) {
  const now = useNow(1000);
  const text = timeLeftText(expires, phase, now);
  return <span className={text === 'expired' ? 'danger' : undefined}>{text}</span>;
}
