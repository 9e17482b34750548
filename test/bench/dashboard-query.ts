// The envelopes list's GraphQL query through the gateway, as the dashboard sends it: the first page and a page deep in
// the cursor chain, against the REST list of the same page size through the same gateway as the baseline.
import { readFile } from 'node:fs/promises';

/** A GraphQL request as the page sends it: the document and its variables. */
export interface ListRequest {
  query: string;
  variables: Record<string, unknown>;
  /** Where the document came from: the envelopes page in Chromium, or this bench's stand-in. */
  source: string;
}

export interface Caller {
  gatewayUrl: string;
  /** The signed-in dashboard user's cookie, and the mode header the dashboard adds in test mode. */
  headers: Record<string, string>;
}

export const PAGE_SIZE = 50;

/** What a list of envelopes shows, for a build whose envelopes page sends no query. */
const STAND_IN_QUERY = `query EnvelopesListBench($first: Int, $after: String) {
  envelopes(first: $first, after: $after) {
    nodes { id status seal testMode externalId createdAt sentAt completedAt expiresAt template { id name } recipients { id name email status order } }
    hasMore
    nextCursor
  }
}`;

/** The stand-in, used only when the browser sent no envelopes query (the page is missing or broken). */
export function standInListRequest(): ListRequest {
  return { query: STAND_IN_QUERY, variables: { first: PAGE_SIZE }, source: "the bench's stand-in: the browser sent no envelopes query" };
}

interface Connection {
  nodes: unknown[];
  hasMore: boolean;
  nextCursor: string | null;
}

/** One run of the list query; throws on an HTTP or GraphQL error. */
export async function runList(caller: Caller, request: ListRequest, after?: string): Promise<Connection> {
  const variables = after === undefined ? request.variables : { ...request.variables, after };
  const res = await fetch(`${caller.gatewayUrl}/graphql`, { method: 'POST', headers: { ...caller.headers, 'content-type': 'application/json' }, body: JSON.stringify({ query: request.query, variables }) });
  const body = (await res.json()) as { data?: { envelopes?: Connection }; errors?: unknown };
  if (res.status !== 200 || body.errors || !body.data?.envelopes) throw new Error(`GraphQL answered ${res.status}: ${JSON.stringify(body.errors ?? body).slice(0, 500)}`);
  return body.data.envelopes;
}

/** One page of the REST list (GET /v1/envelopes), the baseline: the same rows without GraphQL and federation. */
export async function runRest(caller: Caller, pageSize: number, cursor?: string): Promise<{ data: unknown[]; nextCursor: string | null }> {
  const query = new URLSearchParams({ limit: String(pageSize), ...(cursor ? { cursor } : {}) });
  const res = await fetch(`${caller.gatewayUrl}/v1/envelopes?${query}`, { headers: caller.headers });
  const body = (await res.json()) as { data: unknown[]; nextCursor: string | null };
  if (res.status !== 200) throw new Error(`GET /v1/envelopes answered ${res.status}: ${JSON.stringify(body).slice(0, 500)}`);
  return body;
}

/** Walks the whole cursor chain once (also a warm-up); returns the cursor that starts page `depth` (1-based) and the count. */
export async function walkChain(next: (cursor?: string) => Promise<{ rows: number; cursor: string | null }>, depth: number): Promise<{ cursorAtDepth: string; rows: number; pages: number }> {
  let cursor: string | undefined;
  let cursorAtDepth: string | undefined;
  let rows = 0;
  let pages = 0;
  for (;;) {
    const page = await next(cursor);
    rows += page.rows;
    pages += 1;
    if (pages === depth - 1 && page.cursor) cursorAtDepth = page.cursor;
    if (!page.cursor) break;
    cursor = page.cursor;
  }
  if (!cursorAtDepth) throw new Error(`the chain has ${pages} pages, fewer than ${depth}`);
  return { cursorAtDepth, rows, pages };
}

export interface Series {
  name: string;
  run: () => Promise<unknown>;
  times: number[];
  /** CPU milliseconds the stack's processes used during the series' timed runs. */
  cpuMs: number;
}

/**
 * Runs the series in interleaved rounds (so load changes hit them alike), after `warmup` untimed runs each. `cpuNow`
 * answers the CPU time the servers have used so far: on a loaded machine the CPU a request costs moves far less than
 * its latency.
 */
export async function measureInterleaved(series: Series[], rounds: number, perRound: number, warmup: number, cpuNow: () => Promise<number>): Promise<void> {
  for (const one of series) for (let i = 0; i < warmup; i++) await one.run();
  for (let round = 0; round < rounds; round++) {
    for (const one of series) {
      const cpuBefore = await cpuNow();
      for (let i = 0; i < perRound; i++) {
        const started = performance.now();
        await one.run();
        one.times.push(performance.now() - started);
      }
      one.cpuMs += (await cpuNow()) - cpuBefore;
    }
  }
}

/** CPU time (user + system) the processes have used so far, in milliseconds (clock ticks of 10 ms). */
export async function cpuMsOf(pids: number[]): Promise<number> {
  let total = 0;
  for (const pid of pids) {
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')).split(') ')[1]?.split(' ') ?? [];
    total += (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) * 10;
  }
  return total;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}
