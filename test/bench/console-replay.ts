// The target page's API answers, recorded from the stack while the bench opens the page once, then replayed by the
// browser to every measured load: the page's script time is measured on the answers the services gave in this run,
// while the services themselves may be too busy to answer in time (the catalog's own passes over 50,000 segments,
// see docs/benchmarks.md). The page's code still comes from the gateway; the change-event stream is not replayed.
import type { BrowserContext, Page, Request } from 'playwright-core';

interface Answer {
  status: number;
  contentType: string;
  body: Buffer;
}

export type Recording = Map<string, Answer>;

/** The page's reads: its GraphQL requests and the console API's GETs, but the event stream (it never ends). */
const isRead = (request: Request) => {
  const { pathname } = new URL(request.url());
  if (pathname === '/graphql') return request.method() === 'POST';
  return request.method() === 'GET' && pathname.startsWith('/api/v1/') && pathname !== '/api/v1/events';
};

/** A GraphQL request by its document and variables; any other by its method and URL. */
function keyOf(request: Request): string {
  if (request.method() !== 'POST') return `${request.method()} ${request.url().replace(/^https?:\/\/[^/]+/, '')}`;
  const sent = JSON.parse(request.postData() ?? '{}') as { query?: string; variables?: unknown };
  return `POST ${sent.query ?? ''}\n${JSON.stringify(sent.variables ?? {})}`;
}

/** Records the page's reads as they are answered; `settled()` waits until none has been in flight for a second. */
export function recordReads(page: Page, recording: Recording): { settled(): Promise<void> } {
  const inFlight = new Set<Request>();
  const bodies: Array<Promise<void>> = [];
  let lastChange = Date.now();
  page.on('request', (request) => {
    if (!isRead(request)) return;
    inFlight.add(request);
    lastChange = Date.now();
  });
  page.on('requestfailed', (request) => void (inFlight.delete(request) && (lastChange = Date.now())));
  page.on('response', (response) => {
    const request = response.request();
    if (!isRead(request)) return;
    bodies.push(
      response
        .body()
        .then((body) => void recording.set(keyOf(request), { status: response.status(), contentType: response.headers()['content-type'] ?? 'application/json', body }))
        .catch(() => undefined)
        .finally(() => {
          inFlight.delete(request);
          lastChange = Date.now();
        }),
    );
  });
  return {
    async settled() {
      while (inFlight.size > 0 || Date.now() - lastChange < 1000) await page.waitForTimeout(200);
      await Promise.all(bodies);
    },
  };
}

/** Answers the context's recorded reads from the recording; anything else goes to the gateway as usual. */
export async function replayReads(context: BrowserContext, recording: Recording): Promise<void> {
  await context.route(
    (url) => url.pathname === '/graphql' || url.pathname.startsWith('/api/v1/'),
    (route) => {
      const answer = isRead(route.request()) ? recording.get(keyOf(route.request())) : undefined;
      return answer ? route.fulfill({ status: answer.status, contentType: answer.contentType, body: answer.body }) : route.continue();
    },
  );
}
