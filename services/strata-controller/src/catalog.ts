/**
 * Strata's console API as the controller uses it: apply a document exactly as `strata apply` does
 * (`POST /api/v1/resources`), read it back with its status, delete it. Authenticated with an access token in the
 * access proxy's header, like the CLI (apps/strata/src/client.ts).
 */
export const TOKEN_HEADER = 'cf-access-token';
const API_PREFIX = '/api/v1';

/** A failed call: the HTTP status (0 when no answer came) and the catalog's own error text. */
export class CatalogError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'CatalogError';
    this.status = status;
  }
}

export interface CatalogDocument {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; generation?: number };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

export interface ApplyAnswer {
  applied: Array<{ kind: string; namespace: string; name: string; action: 'created' | 'updated' | 'unchanged' }>;
  message: string;
  warnings?: Array<{ path: string; message: string }>;
}

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

export function createCatalog(options: CatalogOptions): Catalog {
  const send = options.fetch ?? fetch;
  const base = options.url.replace(/\/+$/, '') + API_PREFIX;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const path = (kind: string, namespace: string, name: string) => `/resources/${encodeURIComponent(kind)}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;

  async function call(method: string, route: string, body?: object, signal?: AbortSignal): Promise<{ status: number; body: unknown }> {
    const timeout = AbortSignal.timeout(timeoutMs);
    let token: string;
    try {
      token = typeof options.token === 'string' ? options.token : await options.token();
    } catch (error) {
      throw new CatalogError(0, `the API token could not be read: ${(error as Error).message}`);
    }
    let res: Response;
    let text: string;
    try {
      res = await send(base + route, {
        method,
        headers: { accept: 'application/json', [TOKEN_HEADER]: token, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
      });
      text = await res.text();
    } catch (error) {
      throw new CatalogError(0, `Strata's API at ${options.url} did not answer: ${(error as Error).message}`);
    }
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: the text is the message
    }
    if (res.status === 401) options.onUnauthorized?.();
    return { status: res.status, body: parsed };
  }

  const fail = (answer: { status: number; body: unknown }) => new CatalogError(answer.status, errorText(answer));

  return {
    async apply(document, signal) {
      const answer = await call('POST', '/resources', document, signal);
      if (answer.status !== 200) throw fail(answer);
      return answer.body as ApplyAnswer;
    },
    async get(kind, namespace, name, signal) {
      const answer = await call('GET', path(kind, namespace, name), undefined, signal);
      if (answer.status === 404) return undefined;
      if (answer.status !== 200) throw fail(answer);
      return answer.body as CatalogDocument;
    },
    async remove(kind, namespace, name, signal) {
      const answer = await call('DELETE', path(kind, namespace, name), undefined, signal);
      if (answer.status === 404) return undefined;
      if (answer.status !== 200) throw fail(answer);
      return String((answer.body as { message?: unknown } | undefined)?.message ?? 'deleted');
    },
  };
}

/** The catalog's error (`{ error }`, or a problem document's `detail`), else the status line. */
function errorText(answer: { status: number; body: unknown }): string {
  const body = answer.body as { error?: unknown; detail?: unknown; message?: unknown } | string | undefined;
  if (typeof body === 'string' && body) return `${answer.status}: ${body.slice(0, 2000)}`;
  if (body && typeof body === 'object') {
    for (const field of ['error', 'detail', 'message'] as const) {
      const value = body[field];
      if (typeof value === 'string' && value) return value;
    }
  }
  return `Strata's API answered ${answer.status}`;
}
