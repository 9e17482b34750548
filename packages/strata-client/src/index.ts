// The console API client: openapi-fetch typed by the generated `paths` of proto/openapi/strata.v1.yaml, used by the
// `strata` CLI and by strata-controller.
import createClient, { createQuerySerializer, type Client } from 'openapi-fetch';
import type { components, paths } from '@sigil/proto/api/strata';

/** Header of the access proxy's access token (the `accessToken` security scheme). */
export const TOKEN_HEADER = 'cf-access-token';
export const API_PREFIX = '/api/v1';

/** A schema of the console API document, e.g. `Schema<'Target'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];

/** A failed request: an HTTP error answer (status > 0) or a network failure (status 0). */
export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

export interface ClientOptions {
  server: string;
  token: string | undefined;
  fetch: typeof fetch;
  userAgent: string;
  /** Aborts every request (Ctrl-C). */
  signal?: AbortSignal | undefined;
}

export interface StrataClient {
  readonly server: string;
  readonly hasToken: boolean;
  /** The access token sent with each call (a tunnel sends it on its upgrade). */
  readonly token?: string;
  /** Every operation of the document: `api.GET('/targets', { params: { query } })`. */
  readonly api: Client<paths>;
}

// Empty options (`--env ''`) mean "no filter", as absent ones do.
const serializeQuery = createQuerySerializer();
function querySerializer(query: Record<string, unknown>): string {
  return serializeQuery(Object.fromEntries(Object.entries(query).filter(([, v]) => v !== '')));
}

export function createStrataClient(opts: ClientOptions): StrataClient {
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': opts.userAgent };
  if (opts.token) headers[TOKEN_HEADER] = opts.token;
  const api = createClient<paths>({
    baseUrl: opts.server + API_PREFIX,
    headers,
    signal: opts.signal ?? null,
    querySerializer,
    fetch: (request) => sendOrExplain(opts.fetch, opts.server, request),
  });
  return { server: opts.server, hasToken: Boolean(opts.token), ...(opts.token ? { token: opts.token } : {}), api };
}

/** Sends `request`; a request that never got an answer becomes an ApiError with status 0. */
export async function sendOrExplain(fetchImpl: typeof fetch, server: string, request: Request): Promise<Response> {
  try {
    return await fetchImpl(request);
  } catch (err) {
    throw networkError(server, err);
  }
}

interface Answer {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** The body of a successful answer; an error answer (or none) becomes an ApiError with the server's message. */
export async function expectData<A extends Answer>(pending: Promise<A>): Promise<NonNullable<A['data']>> {
  let answer: A;
  try {
    answer = await pending;
  } catch (err) {
    if (err instanceof SyntaxError) throw new ApiError(0, `the server's answer is not valid JSON: ${err.message}`);
    throw err;
  }
  const { data, error, response } = answer;
  if (!response.ok) throw new ApiError(response.status, errorMessage(response, error));
  if (data === undefined || data === null) throw new ApiError(response.status, `the server answered ${response.status} without a body`);
  return data;
}

/** The text an error answer states, else the status with a short plain-text body. */
export function errorMessage(res: Response, body: unknown): string {
  const stated = statedMessage(body);
  if (stated) return stated;
  const text = (typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body)).trim();
  const status = `${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
  if (text && text.length <= 300 && !text.startsWith('<')) return `${status}: ${text}`;
  return status;
}

/** The members an error answer states its text in: `{ error }`, a problem document's `detail`, `{ message }`. */
const STATED_FIELDS = ['error', 'detail', 'message'];

function statedMessage(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  for (const field of STATED_FIELDS) {
    const value = (body as Record<string, unknown>)[field];
    if (typeof value === 'string' && value) return value;
  }
  return undefined;
}

/** `text` parsed as JSON, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function networkError(server: string, err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as Error & { cause?: { code?: string; message?: string } };
  const detail = e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
  return new ApiError(0, `cannot reach ${server}: ${detail}`);
}
