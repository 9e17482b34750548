import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from '@sigil/proto/api/sigil';
import { modeHeaders, type Mode } from './mode.ts';
import { ApiError, isProblem, localProblem } from './problem.ts';

/**
 * Writes go through the REST contract (the canonical API), typed from proto/openapi/sigil.v1.yaml: the session cookie
 * travels by itself (same origin), the mode in `sigil-mode`.
 */
export function createRestClient(getMode: () => Mode, onUnauthorized: () => void = () => undefined) {
  const client = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });
  const mode: Middleware = {
    onRequest({ request }) {
      for (const [name, value] of Object.entries(modeHeaders(getMode()))) request.headers.set(name, value);
      return request;
    },
    // A 401 means the session is gone (signed out elsewhere, removed from the organization, deprovisioned).
    onResponse({ response }) {
      if (response.status === 401) onUnauthorized();
      return response;
    },
  };
  client.use(mode);
  return client;
}

export type RestClient = ReturnType<typeof createRestClient>;

/**
 * The data of an openapi-fetch answer, or an ApiError carrying the API's problem (its `errors[].pointer` name the
 * fields the pages show it beside).
 */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch (error) {
    throw new ApiError(localProblem(0, `The API could not be reached (${error instanceof Error ? error.message : String(error)}).`));
  }
  if (result.response.ok) return result.data as T;
  if (isProblem(result.error)) throw new ApiError(result.error);
  throw new ApiError(localProblem(result.response.status, `The API answered ${result.response.status} ${result.response.statusText}.`));
}
