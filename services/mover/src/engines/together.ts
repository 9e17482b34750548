/**
 * A feeder and the process it feeds (a download into pg_restore, pg_dump into an upload, an object into tar) run
 * together. When either fails, the other is stopped, and the first failure is thrown only once both have settled:
 * a job must not report Failed while the tool still runs or before the half-restored database it made is dropped
 * (a caller that saw Failed and then found the database would rightly call that a leak).
 */
export async function runTogether<T>(feeder: Promise<T>, consumer: Promise<unknown>, stop: () => void): Promise<T> {
  let first: { error: unknown } | undefined;
  const fail = (error: unknown): never => {
    if (!first) {
      first = { error };
      stop();
    }
    throw error;
  };
  const [fed] = await Promise.allSettled([feeder.catch(fail), consumer.catch(fail)]);
  if (first) throw first.error;
  return (fed as PromiseFulfilledResult<T>).value;
}
