import { request, type Agent } from 'undici';
import { pinnedAgent, type ResolvedAddress } from '@sigil/kit/http';

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** What one attempt sends: the body and headers, to the address the policy checked. */
export interface Attempt {
  url: URL;
  /** The checked address to connect to (null: an allow-listed origin, connected as the URL says). */
  address: ResolvedAddress | null;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

/**
 * Keep-alive connection pools, one per origin and checked address: a connection is only ever opened to the address
 * that was checked (DNS is not asked again between the check and the connect), and TLS still checks the host's name.
 */
export function createSender(options: { maxIdle?: number } = {}) {
  const agents = new Map<string, Agent>();
  const agentFor = (attempt: Attempt): Agent => {
    const key = `${attempt.url.origin}|${attempt.address?.address ?? ''}`;
    let agent = agents.get(key);
    if (!agent) {
      agent = pinnedAgent(attempt.address, { keepAliveTimeout: 30_000, connections: 8, connectTimeoutMs: 5_000 });
      agents.set(key, agent);
      // Bounded: the oldest pool goes when there are too many.
      if (agents.size > (options.maxIdle ?? 500)) {
        const [oldest] = agents;
        agents.delete(oldest![0]);
        void oldest![1].close();
      }
    }
    return agent;
  };

  async function send(attempt: Attempt): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    // A timer cleared when the attempt ends: AbortSignal.timeout would keep every request's state alive for the
    // whole timeout (thousands of them under load).
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new DOMException('timeout', 'TimeoutError')), attempt.timeoutMs);
    try {
      const response = await request(attempt.url, { method: 'POST', headers: attempt.headers, body: attempt.body, dispatcher: agentFor(attempt), signal: abort.signal });
      // undici never follows redirects on its own: a 3xx is a failed attempt like any other non-2xx.
      // Read at most a little of the body, so the connection can be reused, and never keep it.
      await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return { ok, statusCode: response.statusCode, error: ok ? null : response.statusCode >= 300 && response.statusCode < 400 ? `redirect (${response.statusCode}) not followed` : `HTTP ${response.statusCode}`, durationMs: elapsed() };
    } catch (error) {
      const e = error as Error & { code?: string; cause?: { code?: string } };
      const reason = abort.signal.aborted ? `timeout after ${attempt.timeoutMs} ms` : (e.cause?.code ?? e.code ?? e.message);
      return { ok: false, statusCode: null, error: reason, durationMs: elapsed() };
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    send,
    close: async () => {
      await Promise.all([...agents.values()].map((a) => a.close()));
      agents.clear();
    },
  };
}

export type Sender = ReturnType<typeof createSender>;
