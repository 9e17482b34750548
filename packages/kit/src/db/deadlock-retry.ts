/**
 * Postgres aborts one of two transactions that wait on each other (40P01, deadlock) or that a serializable snapshot
 * cannot order (40001); Prisma reports either as P2034. The aborted transaction was rolled back whole, and Postgres'
 * documentation asks the application to run it again. `retryAborted` does, a few times, after a short random pause so
 * the two do not meet again; any other error, and the last abort, is thrown as it is.
 *
 * Lock order is still the first defence (docs/architecture.md, the catalog's lock order); this covers the writers whose
 * order a trigger decides (a backup's insert renews its target's chain inputs).
 */
const ABORT_CODES = new Set(['40P01', '40001']);

export function isAbortedTransaction(error: unknown): boolean {
  const e = error as { code?: unknown; meta?: { driverAdapterError?: { cause?: { originalCode?: unknown } } } } | null;
  if (!e || typeof e !== 'object') return false;
  return e.code === 'P2034' || ABORT_CODES.has(String(e.code)) || ABORT_CODES.has(String(e.meta?.driverAdapterError?.cause?.originalCode));
}

export async function retryAborted<T>(run: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (attempt >= attempts || !isAbortedTransaction(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80 * attempt));
    }
  }
}
