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

export interface Catalog {
  apply(document: object): Promise<ApplyAnswer>;
  get(kind: string, namespace: string, name: string): Promise<CatalogDocument | undefined>;
  /** The catalog's answer (for a target it names the replication slot released); undefined when it had no such resource. */
  remove(kind: string, namespace: string, name: string): Promise<string | undefined>;
}

export function createCatalog(options: { url: string; token: string; fetch?: typeof fetch; timeoutMs?: number }): Catalog {
  const send = options.fetch ?? fetch;
  const base = options.url.replace(/\/+$/, '') + API_PREFIX;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const path = (kind: string, namespace: string, name: string) => `/resources/${encodeURIComponent(kind)}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;

  async function call(method: string, route: string, body?: object): Promise<{ status: number; body: unknown }> {
    let res: Response;
    try {
      res = await send(base + route, {
        method,
        headers: { accept: 'application/json', [TOKEN_HEADER]: options.token, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new CatalogError(0, `Strata's API at ${options.url} did not answer: ${(error as Error).message}`);
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: the text is the message
    }
    return { status: res.status, body: parsed };
  }

  const fail = (answer: { status: number; body: unknown }) => new CatalogError(answer.status, errorText(answer));

  return {
    async apply(document) {
      const answer = await call('POST', '/resources', document);
      if (answer.status !== 200) throw fail(answer);
      return answer.body as ApplyAnswer;
    },
    async get(kind, namespace, name) {
      const answer = await call('GET', path(kind, namespace, name));
      if (answer.status === 404) return undefined;
      if (answer.status !== 200) throw fail(answer);
      return answer.body as CatalogDocument;
    },
    async remove(kind, namespace, name) {
      const answer = await call('DELETE', path(kind, namespace, name));
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
