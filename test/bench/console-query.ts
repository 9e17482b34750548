// The timeline's GraphQL query through the gateway, as the console sends it, and its REST baselines through the same
// gateway: the target's backups (the whole history's heaviest part) and its segments since the zoomed range's start.
import type { Caller } from './dashboard-query.ts';
import type { CapturedRequest, TimelineAnswer } from './console-browser.ts';
import type { Target } from './console-target.ts';

/**
 * A request not answered in this time counts as failed (its time is kept): a catalog stuck in its own passes answers in
 * minutes (see docs/benchmarks.md), and the series must still end.
 */
const REQUEST_TIMEOUT_MS = 60_000;

/** One run of the page's timeline request; answers its JSON size. Throws on an HTTP or GraphQL error. */
export async function runTimeline(caller: Caller, request: Pick<CapturedRequest, 'query' | 'variables'>): Promise<{ bytes: number; timeline: TimelineAnswer }> {
  const res = await fetch(`${caller.gatewayUrl}/graphql`, { method: 'POST', headers: { ...caller.headers, 'content-type': 'application/json' }, body: JSON.stringify({ query: request.query, variables: request.variables }), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const text = await res.text();
  const body = JSON.parse(text) as { data?: { strataTarget?: { timeline?: TimelineAnswer } }; errors?: unknown };
  const timeline = body.data?.strataTarget?.timeline;
  if (res.status !== 200 || body.errors || !timeline) throw new Error(`GraphQL answered ${res.status}: ${text.slice(0, 500)}`);
  return { bytes: Buffer.byteLength(text), timeline };
}

/** `GET /api/v1/targets/{ns}/{name}/backups?limit=…`: every run of the target, newest first (at most 1,000). */
export async function runRestBackups(caller: Caller, target: Target, limit: number): Promise<{ bytes: number; rows: number }> {
  return restList(caller, `/api/v1/targets/${target.namespace}/${target.name}/backups?limit=${limit}`, 'backups');
}

/** `GET /api/v1/targets/{ns}/{name}/segments?since=…`: the segments uploaded since then, oldest first (at most 1,000). */
export async function runRestSegments(caller: Caller, target: Target, since: string): Promise<{ bytes: number; rows: number }> {
  return restList(caller, `/api/v1/targets/${target.namespace}/${target.name}/segments?since=${encodeURIComponent(since)}`, 'segments');
}

async function restList(caller: Caller, url: string, member: string): Promise<{ bytes: number; rows: number }> {
  const res = await fetch(`${caller.gatewayUrl}${url}`, { headers: caller.headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${text.slice(0, 500)}`);
  const rows = (JSON.parse(text) as Record<string, unknown[]>)[member];
  if (!Array.isArray(rows)) throw new Error(`GET ${url}: no ${member} in the answer`);
  return { bytes: Buffer.byteLength(text), rows: rows.length };
}

/**
 * A series' run that counts its failures instead of ending the bench: a catalog too busy to answer (a transaction
 * timeout, a 502) is a finding, printed with the series. The time of a failed run is kept with the others.
 */
export function counting(run: () => Promise<unknown>): { run: () => Promise<void>; failures: string[] } {
  const failures: string[] = [];
  return {
    failures,
    run: async () => {
      await run().catch((error: Error) => void failures.push(error.message.slice(0, 200)));
    },
  };
}

/** The first answer of up to `attempts` tries (the answers' sizes are printed once, before the series). */
export async function firstAnswer<T>(run: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (attempt >= attempts) throw error;
    }
  }
}
