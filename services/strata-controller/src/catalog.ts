/**
 * Strata's console API as the controller uses it: apply a document exactly as `strata apply` does
 * (`POST /api/v1/resources`), read it back with its status, delete it. Through the CLI's typed client
 * (`@strata/client`), authenticated with an access token in the access proxy's header.
 */
import { ApiError, createStrataClient, errorMessage, type Schema, type StrataClient } from '@strata/client';

/** A failed call: the HTTP status (0 when no answer came) and the catalog's own error text. */
export { ApiError as CatalogError };

export interface CatalogDocument {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; generation?: number };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

export type ApplyAnswer = Schema<'ApplyResult'>;

/** Every call also takes a signal: the controller aborts what is in flight when it loses the Lease. */
export interface Catalog {
  apply(document: object, signal?: AbortSignal): Promise<ApplyAnswer>;
  get(kind: string, namespace: string, name: string, signal?: AbortSignal): Promise<CatalogDocument | undefined>;
  /**
   * The catalog's answer (for a target it says whether the replication slot was released, or names the SQL that
   * drops it when it could not be); undefined when it had no such resource.
   */
  remove(kind: string, namespace: string, name: string, signal?: AbortSignal): Promise<string | undefined>;
}

export interface CatalogOptions {
  url: string;
  /** The token, or a function answering it at each call (read from a mounted Secret's file). */
  token: string | (() => string | Promise<string>);
  fetch?: typeof fetch;
  /** Each call's limit; the controller keeps it below the Lease's renew deadline. */
  timeoutMs?: number;
  /** Called on a 401 (the token expired or was revoked): the process exits so its pod restarts with the Secret's token. */
  onUnauthorized?: () => void;
}

const USER_AGENT = 'strata-controller';

interface Answer {
  data?: unknown;
  error?: unknown;
  response: Response;
}

export function createCatalog(options: CatalogOptions): Catalog {
  const server = options.url.replace(/\/+$/, '');
  const send = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const notAnswered = (error: unknown) => new ApiError(0, `Strata's API at ${options.url} did not answer: ${(error as Error).message}`);

  async function readToken(): Promise<string> {
    try {
      return typeof options.token === 'string' ? options.token : await options.token();
    } catch (error) {
      throw new ApiError(0, `the API token could not be read: ${(error as Error).message}`);
    }
  }

  // The `fetch` option is called as `fetch(url, init)` with a string body, as callers wrapping it expect.
  async function sendRequest(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const request = input instanceof Request ? input : new Request(input, init);
    try {
      const body = request.body ? await request.text() : undefined;
      return await send(request.url, { method: request.method, headers: request.headers, signal: request.signal, ...(body === undefined ? {} : { body }) });
    } catch (error) {
      throw notAnswered(error);
    }
  }

  /** One call with the token of the moment, ended by the timeout or the caller's signal. */
  async function call<A extends Answer>(signal: AbortSignal | undefined, operation: (api: StrataClient['api']) => Promise<A>): Promise<A> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const token = await readToken();
    const client = createStrataClient({ server, token, fetch: sendRequest, userAgent: USER_AGENT, signal: signal ? AbortSignal.any([timeout, signal]) : timeout });
    let answer: A;
    try {
      answer = await operation(client.api);
    } catch (error) {
      // Reading the answer can fail too (aborted half-way, a success that is not JSON).
      throw error instanceof ApiError ? error : notAnswered(error);
    }
    if (answer.response.status === 401) options.onUnauthorized?.();
    return answer;
  }

  const resource = (kind: string, namespace: string, name: string) => ({ params: { path: { kind: kind as Schema<'ResourceKind'>, ns: namespace, name } } });

  return {
    async apply(document, signal) {
      const answer = await call(signal, (api) => api.POST('/resources', { body: document as Record<string, never> }));
      return dataOf(answer) as ApplyAnswer;
    },
    async get(kind, namespace, name, signal) {
      const answer = await call(signal, (api) => api.GET('/resources/{kind}/{ns}/{name}', resource(kind, namespace, name)));
      return answer.response.status === 404 ? undefined : (dataOf(answer) as CatalogDocument);
    },
    async remove(kind, namespace, name, signal) {
      const answer = await call(signal, (api) => api.DELETE('/resources/{kind}/{ns}/{name}', resource(kind, namespace, name)));
      return answer.response.status === 404 ? undefined : (dataOf(answer)?.message ?? 'deleted');
    },
  };
}

/** The data of a 200 answer; any other status is a CatalogError with the catalog's text. */
function dataOf<A extends Answer>(answer: A): A['data'] {
  const { response } = answer;
  if (response.status !== 200) throw new ApiError(response.status, errorMessage(response, answer.error ?? answer.data));
  return answer.data;
}
