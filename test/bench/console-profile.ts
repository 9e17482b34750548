// Where the target page's script time goes (BENCH_PROFILE=1): one cold load of the target page under V8's sampling
// profiler (CDP Profiler, every 100 µs) until the timeline is drawn, summed by function: self time, and total time
// (self plus callees) of the app's own named functions. console.ts serves an unminified build for it (names kept),
// after the measurements: those are of the minified build; these figures are for attribution only.
import path from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { observeDrawn, type DrawnCheck } from './console-drawn.ts';

const SAMPLING_MICROSECONDS = 100;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  totalMs: number;
  /** Milliseconds by function (`name file:line`), largest first. */
  self: Array<[string, number]>;
  /** The app's named functions (its own chunks), self plus callees, largest first. */
  total: Array<[string, number]>;
}

/** One cold load of `url` in `context` (signed in), profiled from navigation until drawn. */
export async function profileLoad(context: BrowserContext, originUrl: string, url: string, check: DrawnCheck): Promise<ProfileSummary> {
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  let drawn: (() => void) | undefined;
  const reported = new Promise<void>((resolve) => (drawn = resolve));
  await page.exposeFunction('__benchDrawn', () => drawn?.());
  await page.addInitScript(observeDrawn, check);
  // A page of the same origin first: the profiler runs in the renderer, which a cross-site navigation would replace.
  await page.goto(originUrl);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: SAMPLING_MICROSECONDS });
  await cdp.send('Profiler.start');
  await page.goto(url, { waitUntil: 'commit' });
  await reported;
  const { profile } = (await cdp.send('Profiler.stop')) as unknown as { profile: Profile };
  await page.close();
  return summarize(profile);
}

const where = (frame: ProfileNode['callFrame']) => `${frame.functionName || '(anonymous)'} ${frame.url ? `${path.basename(frame.url)}:${frame.lineNumber + 1}` : ''}`.trim();
/** The app's chunks (served under /console/assets/), not the bench's or the browser's. */
const isApp = (frame: ProfileNode['callFrame']) => frame.url.includes('/console/assets/') && frame.functionName !== '';

function summarize(profile: Profile): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let totalMs = 0;
  profile.samples.forEach((id, i) => {
    // A sample's time is the gap to the next one (as DevTools counts it).
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const node = byId.get(id) as ProfileNode;
    if (node.callFrame.functionName === '(idle)') return;
    totalMs += ms;
    self.set(where(node.callFrame), (self.get(where(node.callFrame)) ?? 0) + ms);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = (byId.get(at) as ProfileNode).callFrame;
      if (!isApp(frame) || seen.has(where(frame))) continue;
      seen.add(where(frame));
      total.set(where(frame), (total.get(where(frame)) ?? 0) + ms);
    }
  });
  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]);
  return { totalMs, self: sorted(self), total: sorted(total) };
}
