import { request, type Agent, type Dispatcher } from 'undici';
import { pinnedAgent } from './pinned-agent.ts';
import { checkUrl, UrlRefused, type UrlPolicy } from './url-policy.ts';

export interface PublicFetchOptions {
  /** Which URLs may be called: every hop is checked with it before it is dialled. */
  policy: UrlPolicy;
  /** The largest body accepted; a longer one is refused while it streams. */
  maxBytes: number;
  /** The whole exchange, DNS to the body's last byte, is given up after this. */
  timeoutMs: number;
  maxRedirects?: number;
}

/** A `fetch` (openid-client's `customFetch` too) that only ever reaches what the policy allows. */
export type PublicFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([204, 205, 304]);

interface Outgoing {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

/** Reads the request as fetch would (methods, bodies, default content types) into what undici sends on every hop. */
async function outgoing(input: string | URL | Request, init: RequestInit): Promise<Outgoing> {
  const url = input instanceof Request ? input.url : String(input);
  // A neutral URL: `new Request` would throw its own TypeError for a URL with credentials, which checkUrl refuses.
  const normalised = input instanceof Request ? new Request(input, init) : new Request('http://request.invalid/', init);
  const body = normalised.body ? Buffer.from(await normalised.arrayBuffer()) : undefined;
  return { url, method: normalised.method, headers: Object.fromEntries(normalised.headers), body };
}

function responseHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
  return headers;
}

/** The next hop of a redirect as fetch does it: 303 (and 301/302 of a POST) become a body-less GET. */
function redirected(previous: Outgoing, from: URL, location: string, status: number): Outgoing {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw new UrlRefused(`redirected to ${location}: is not a URL`);
  }
  const toGet = status === 303 ? previous.method !== 'HEAD' : (status === 301 || status === 302) && previous.method === 'POST';
  const headers = { ...previous.headers };
  if (toGet) for (const name of Object.keys(headers)) if (/^content-/i.test(name)) delete headers[name];
  // Credentials are for the origin they were given to.
  if (next.origin !== from.origin) for (const name of Object.keys(headers)) if (/^(authorization|cookie|proxy-authorization)$/i.test(name)) delete headers[name];
  return { url: next.href, method: toGet ? 'GET' : previous.method, headers, body: toGet ? undefined : previous.body };
}

/** A URL for a message, without the credentials it may carry. */
function shown(raw: string): string {
  try {
    const url = new URL(raw);
    url.username = '';
    url.password = '';
    return url.href;
  } catch {
    return raw.slice(0, 200);
  }
}

/** Drops an answer's body unread (undici reports a destroyed body as an error nobody needs to hear). */
function discard(answer: Dispatcher.ResponseData): void {
  answer.body.on('error', () => undefined);
  answer.body.destroy();
}

/** Rejects as soon as the signal aborts (a resolver cannot be cancelled, but the caller need not wait for it). */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * A fetch for URLs someone else chose (an IdP's metadata or OIDC endpoints): https only (and the policy's allowed
 * origins), every address the host resolves to public, the connection pinned to the checked address, redirects
 * followed by hand with each hop checked again before it is dialled (at most `maxRedirects`), bodies over `maxBytes`
 * refused while they stream, and everything given up after `timeoutMs`. Each refusal is a UrlRefused saying why.
 * `init.redirect: 'manual'` answers the 3xx itself, as fetch does (openid-client asks for it); non-2xx final answers
 * are answered as they are.
 */
export function createPublicFetch(options: PublicFetchOptions): PublicFetch {
  const { policy, maxBytes, timeoutMs, maxRedirects = 3 } = options;
  return async (input, init = {}) => {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new UrlRefused(`did not answer within ${timeoutMs} ms`)), timeoutMs);
    const signal = init.signal ? AbortSignal.any([deadline.signal, init.signal]) : deadline.signal;
    const agents: Agent[] = [];
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      for (const agent of agents) void agent.destroy().catch(() => undefined);
    };
    // Also when nobody reads the body the caller was given: its connection goes at the deadline.
    signal.addEventListener('abort', finish, { once: true });
    // What the caller sees: our timeout or size refusal, the caller's own abort as it gave it, anything else a reason.
    const reason = (error: unknown): Error => {
      if (deadline.signal.aborted) return deadline.signal.reason as UrlRefused;
      if (init.signal?.aborted) return init.signal.reason as Error;
      if (error instanceof UrlRefused) return error;
      const e = error as Error & { code?: string; cause?: { code?: string } };
      return new UrlRefused(`could not be fetched (${e.cause?.code ?? e.code ?? e.message})`);
    };

    try {
      let hop = await outgoing(input, init);
      for (let redirects = 0; ; redirects++) {
        let checked: Awaited<ReturnType<typeof checkUrl>>;
        try {
          checked = await unlessAborted(checkUrl(hop.url, policy), signal);
        } catch (error) {
          if (redirects > 0 && error instanceof UrlRefused) throw new UrlRefused(`redirected to ${shown(hop.url)}: ${error.message}`);
          throw error;
        }
        const agent = pinnedAgent(checked.address, { connectTimeoutMs: timeoutMs, connections: 1 });
        agents.push(agent);
        const answer: Dispatcher.ResponseData = await request(checked.url, { method: hop.method as Dispatcher.HttpMethod, headers: hop.headers, body: hop.body ?? null, dispatcher: agent, signal });
        const location = answer.headers.location;
        if (REDIRECTS.has(answer.statusCode) && typeof location === 'string' && init.redirect !== 'manual') {
          discard(answer);
          if (init.redirect === 'error') throw new UrlRefused(`redirected (${answer.statusCode}) where no redirect is allowed`);
          if (redirects >= maxRedirects) throw new UrlRefused(`redirected more than ${maxRedirects} times`);
          hop = redirected(hop, checked.url, location, answer.statusCode);
          continue;
        }
        return respond(answer, hop.method, checked.url.href, redirects > 0);
      }
    } catch (error) {
      finish();
      throw reason(error);
    }

    function respond(answer: Dispatcher.ResponseData, method: string, url: string, wasRedirected: boolean): Response {
      const length = Number(answer.headers['content-length']);
      if (Number.isFinite(length) && length > maxBytes) {
        discard(answer);
        throw new UrlRefused(`answered more than ${maxBytes} bytes (${length})`);
      }
      if (answer.statusCode < 200 || answer.statusCode > 599) {
        discard(answer);
        throw new UrlRefused(`answered an invalid status (${answer.statusCode})`);
      }
      let body: ReadableStream<Uint8Array> | null = null;
      if (NULL_BODY.has(answer.statusCode) || method === 'HEAD') {
        discard(answer);
        finish();
      } else {
        const chunks = answer.body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
        let received = 0;
        body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            try {
              const { value, done } = await chunks.next();
              if (done) {
                finish();
                controller.close();
                return;
              }
              received += value.length;
              if (received > maxBytes) throw new UrlRefused(`answered more than ${maxBytes} bytes`);
              controller.enqueue(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
            } catch (error) {
              discard(answer);
              finish();
              controller.error(reason(error));
            }
          },
          cancel() {
            discard(answer);
            finish();
          },
        });
      }
      const response = new Response(body, { status: answer.statusCode, statusText: answer.statusText, headers: responseHeaders(answer.headers) });
      // Response's constructor cannot set these; fetch's answers have them.
      Object.defineProperty(response, 'url', { value: url });
      Object.defineProperty(response, 'redirected', { value: wasRedirected });
      return response;
    }
  };
}

/**
 * GETs a URL someone else chose, within the limits of createPublicFetch, and answers its body; a final answer other
 * than 2xx is refused (`answered 404`).
 */
export async function fetchPublicUrl(url: string, options: PublicFetchOptions & { headers?: Record<string, string> }): Promise<{ url: string; status: number; contentType: string; body: Buffer }> {
  const response = await createPublicFetch(options)(url, { headers: options.headers });
  if (!response.ok) {
    await response.body?.cancel();
    throw new UrlRefused(`answered ${response.status}`);
  }
  const body = Buffer.from(await response.arrayBuffer());
  return { url: response.url, status: response.status, contentType: response.headers.get('content-type') ?? '', body };
}
