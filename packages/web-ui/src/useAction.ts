import { useCallback, useState } from 'react';

/**
 * The state of one write: `run(job)` marks it busy, keeps the refusal (an ApiError for `Field`/`FormError`) and
 * rethrows it, so a caller (a dialog) can stay open.
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = useCallback(async <T,>(job: () => Promise<T>): Promise<T> => {
    setBusy(true);
    setError(undefined);
    try {
      return await job();
    } catch (e) {
      setError(e);
      throw e;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, reset: () => setError(undefined) };
}
