// The console's target page in Chromium: the timeline's GraphQL requests as the page sends them (whole history, then
// zoomed in with the page's own button) and the page's reads (replayed to the measured loads, console-replay.ts), and
// the main thread's time from navigation until drawn (console-drawn.ts says when), for the target page and for the
// static baseline (console-baseline.ts).
import type { BrowserContext, CDPSession, Page, Request } from 'playwright-core';
import { appDrawn, countMarks, describeDrawn, observeDrawn, type DrawnCheck } from './console-drawn.ts';
import { recordReads, type Recording } from './console-replay.ts';

/** A GraphQL request as the page sent it, and the timeline it was answered. */
export interface CapturedRequest {
  query: string;
  variables: Record<string, unknown>;
  timeline: TimelineAnswer;
}

/** What the bench reads of a `timeline` answer (the page's ConsoleTargetTimeline selection). */
export interface TimelineAnswer {
  from: string;
  to: string;
  windows: Array<{ from: string; to: string }>;
  backups: Array<{ id: string; time: string; phase: string; mode: string; verified: boolean; verifyFailed: boolean; pinned: boolean }>;
  verifications: Array<{ backupID: string; at: string; passed: boolean }>;
  segmentSpans: Array<{ firstTime: string; lastTime: string; segments: number; commits: number; partial: boolean }>;
  breaks: Array<{ kind: string; from?: string | null; to?: string | null; reason: string }>;
}

const isTimelineRequest = (postData: string | null) => /\bquery ConsoleTargetTimeline\b/.test(postData ?? '');

/** The timeline requests the page sent, and every read the page made to draw the whole history (console-replay.ts). */
export interface Captured {
  whole: CapturedRequest;
  zoomed: CapturedRequest;
  reads: Recording;
}

/**
 * Opens the target page, keeps its first timeline request (the whole history) and records its reads until it is drawn
 * and nothing is in flight; then presses "Zoom in" `zoomSteps` times (each halves the view around its middle and asks
 * for that range) and keeps the last timeline request.
 */
export async function captureTimelineRequests(context: BrowserContext, pageUrl: string, zoomSteps: number): Promise<Captured> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await captureOnce(context, pageUrl, zoomSteps);
    } catch (error) {
      // An answer with errors (the catalog too busy to answer, see the report) is tried again from a new page.
      if (attempt >= CAPTURE_ATTEMPTS) throw error;
      console.log(`  (capture tried again: ${(error as Error).message.slice(0, 300)})`);
    }
  }
}

const CAPTURE_ATTEMPTS = 3;
const CAPTURE_TIMEOUT_MS = 300_000;

async function captureOnce(context: BrowserContext, pageUrl: string, zoomSteps: number): Promise<Captured> {
  const page = await context.newPage();
  try {
    const recording: Recording = new Map();
    const recorder = recordReads(page, recording);
    const first = nextTimelineAnswer(page);
    await page.goto(pageUrl);
    const whole = await first;
    const drawn = appDrawn(whole.timeline);
    await page.waitForFunction(countMarks, drawn, { polling: 500, timeout: CAPTURE_TIMEOUT_MS });
    await recorder.settled();
    const reads = new Map(recording);
    let zoomed = whole;
    const zoomIn = page.getByRole('button', { name: 'Zoom in' });
    for (let step = 0; step < zoomSteps; step++) {
      const answered = nextTimelineAnswer(page);
      await zoomIn.click();
      zoomed = await answered;
    }
    if (zoomed === whole) throw new Error('zooming in sent no new timeline request');
    return { whole, zoomed, reads };
  } finally {
    await page.close();
  }
}

async function nextTimelineAnswer(page: Page): Promise<CapturedRequest> {
  const res = await page.waitForResponse((r) => r.url().endsWith('/graphql') && isTimelineRequest(r.request().postData()), { timeout: CAPTURE_TIMEOUT_MS });
  const sent = JSON.parse(res.request().postData() as string) as { query: string; variables?: Record<string, unknown> };
  const body = (await res.json()) as { data?: { strataTarget?: { timeline?: TimelineAnswer } }; errors?: unknown };
  const timeline = body.data?.strataTarget?.timeline;
  if (!timeline) throw new Error(`the page's timeline request was answered ${res.status()}: ${JSON.stringify(body.errors ?? body).slice(0, 500)}`);
  return { query: sent.query, variables: sent.variables ?? {}, timeline };
}

/** Main-thread time of one navigation until drawn, from Chromium's Performance domain (thread CPU time), in ms. */
export interface PageTimes {
  script: number;
  task: number;
  layout: number;
  style: number;
  /** Wall-clock time from the navigation's start until drawn (the page's own clock), in ms. */
  wall: number;
}

/**
 * A page prepared for `timeToDrawn`: Chromium's Performance domain counting in thread time (CPU time of the main
 * thread, so other processes on a loaded machine do not inflate it) and an observer, installed before any script of
 * the page runs, that reports the moment the page is drawn.
 */
export async function preparePage(context: BrowserContext, check: DrawnCheck): Promise<{ page: Page; measure(url: string): Promise<PageTimes> }> {
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable', { timeDomain: 'threadTicks' } as never);
  let drawn: ((wall: number) => void) | undefined;
  await page.exposeFunction('__benchDrawn', (wall: number) => drawn?.(wall));
  await page.addInitScript(observeDrawn, check);
  const pending = pendingGraphql(page);
  return {
    page,
    async measure(url) {
      const reported = new Promise<number>((resolve) => (drawn = resolve));
      const document = await page.goto(url, { waitUntil: 'commit' });
      if (document?.status() !== 200) throw new Error(`${url} answered ${document?.status()}`);
      const wall = await Promise.race([reported, sleep(DRAW_TIMEOUT_MS).then(() => undefined)]);
      if (wall === undefined) throw new Error(`${url} not drawn within ${DRAW_TIMEOUT_MS / 1000} s: ${await pageState(page, check)}; GraphQL requests unanswered: ${[...pending].join(', ') || 'none'}`);
      return { ...(await mainThreadTimes(cdp)), wall };
    },
  };
}

const DRAW_TIMEOUT_MS = 120_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** The operations of the page's GraphQL requests still waiting for an answer (to say why a page is not drawn). */
function pendingGraphql(page: Page): Set<string> {
  const pending = new Set<string>();
  const name = (request: Request) => /\b(?:query|mutation)\s+(\w+)/.exec(request.postData() ?? '')?.[1] ?? request.url();
  page.on('request', (request) => void (request.url().endsWith('/graphql') && pending.add(name(request))));
  page.on('requestfinished', (request) => void pending.delete(name(request)));
  page.on('requestfailed', (request) => void pending.delete(name(request)));
  return pending;
}

/** What the page shows now, for a page not drawn in time. */
async function pageState(page: Page, check: DrawnCheck): Promise<string> {
  return page.evaluate(describeDrawn, check).catch((error: Error) => `(the page could not be read: ${error.message})`);
}

/** The current document's counters (Chromium starts them anew with each document). */
async function mainThreadTimes(cdp: CDPSession): Promise<Omit<PageTimes, 'wall'>> {
  const { metrics } = await cdp.send('Performance.getMetrics');
  const value = (name: string) => (metrics.find((metric) => metric.name === name)?.value ?? Number.NaN) * 1000;
  return { script: value('ScriptDuration'), task: value('TaskDuration'), layout: value('LayoutDuration'), style: value('RecalcStyleDuration') };
}
