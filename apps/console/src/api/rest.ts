import createClient from 'openapi-fetch';
import { ApiError, statusTitle } from '@sigil/web-ui';
import type { paths } from '@sigil/proto/api/strata';

/**
 * Writes go through the console API (`/api/v1`, proto/openapi/strata.v1.yaml), typed from its description. The access
 * proxy's credentials travel by themselves: the access cookie, same origin.
 */
export function createRestClient() {
  return createClient<paths>({ baseUrl: '/api/v1', credentials: 'same-origin' });
}

export type RestClient = ReturnType<typeof createRestClient>;

/** The data of an answer, or an ApiError with the console API's `{ error }` as its detail (and its status's title). */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch (error) {
    throw new ApiError({ title: statusTitle(0), status: 0, detail: `The console API could not be reached (${error instanceof Error ? error.message : String(error)}).` });
  }
  if (result.response.ok) return result.data as T;
  const status = result.response.status;
  const message = (result.error as { error?: unknown } | undefined)?.error;
  throw new ApiError({ title: statusTitle(status), status, detail: typeof message === 'string' ? message : `The console API answered ${status} ${result.response.statusText}.` });
}
