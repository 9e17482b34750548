import { useEffect, useState } from 'react';

/**
 * `value` once it has stayed the same for `ms`: a moment moved by held-down arrow keys asks the server for its plan
 * and its timeline once it settles, not at every step.
 */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}
