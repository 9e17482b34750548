// On demand: `node_modules/.bin/node test/bench/console.ts` (the console's target page, Performance). Starts the whole
// stack in a fresh state folder (with the bench's own S3 process, console-s3.ts), applies a store, a policy with change
// capture and a Postgres target of the stack's own server, takes ONE real backup through the API, then seeds the target
// with 2,000 backups and 50,000 change-log segments over ~70 days (console-seed.ts: copies of the real rows), builds
// the console into the run's own folder (served with CONSOLE_DIST_DIR) and measures:
//   (a) the timeline's GraphQL query through the gateway (the document and variables Chromium sends), the whole
//       history and a range zoomed in with the page's button; baselines: the REST backups list (limit 1,000) and the
//       REST segments since the zoomed range's start, through the same gateway;
//   (b) the main thread's script time (CPU) from navigation to /console/targets/default/postgres until the timeline's
//       SVG holds every backup's mark at its laid-out width, against a static page listing the same answer as a
//       plain <ul> from a JSON file, cold (new browser context) and warm (reload).
// Every figure is printed with the machine's load average. Targets: (a) p50 ≤ 100 ms, (b) ≤ 300 ms of script.
// The run stops at once, saying which, when a process of the stack dies (a service out of heap); (a) is skipped when a
// first answer takes more than 10 s (the catalog busy with its own passes); (b) runs on the answers recorded while the
// page was first opened, so it does not depend on the catalog. `kill -INT <pid>` stops the run and its stack.
// Options (environment): BENCH_BACKUPS (2000), BENCH_SEGMENTS (50000), BENCH_QUERY_ROUNDS (4, of 25 runs per series),
// BENCH_PAGE_ROUNDS (10), BENCH_SUSPEND=1 to suspend the target once seeded (its change-log streamer stops),
// BENCH_PROFILE=1 to profile one load of the page afterwards (console-profile.ts), BENCH_VARIANT=<a modified copy of
// apps/console, its node_modules linked to the repository's> to measure (b) again with it, BENCH_KEEP_STATE=1 to keep the
// stack's state folder, BENCH_HOLD=1 to keep the stack up after the figures (to profile a service) until kill -INT;
// STACK_NODE_FLAGS (the stack's) replaces the services' V8 flags (heap size).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startStack, type Stack } from '@sigil/local-stack';
import { baselineRows, startBaselineSite } from './console-baseline.ts';
import { captureTimelineRequests, preparePage, type Captured, type CapturedRequest, type PageTimes } from './console-browser.ts';
import { appDrawn, listDrawn, type DrawnCheck } from './console-drawn.ts';
import { replayReads, type Recording } from './console-replay.ts';
import { buildConsole, CONSOLE_DIR, viteBuild } from './console-build.ts';
import { profileLoad } from './console-profile.ts';
import { counting, firstAnswer, runRestBackups, runRestSegments, runTimeline } from './console-query.ts';
import { startBenchS3 } from './console-s3.ts';
import { seedHistory } from './console-seed.ts';
import { deadProcesses, idleCpuRate, peakRss, serviceFlags, StackProcessDied, watchForDeath } from './console-stack.ts';
import { devSession, suspendTarget, TARGET, targetWithOneBackup } from './console-target.ts';
import { launchChromium, signedInContext } from './dashboard-browser.ts';
import { cpuMsOf, measureInterleaved, percentile, type Caller, type Series } from './dashboard-query.ts';

const BACKUPS = Number(process.env.BENCH_BACKUPS ?? 2_000);
const SEGMENTS = Number(process.env.BENCH_SEGMENTS ?? 50_000);
const QUERY_ROUNDS = Number(process.env.BENCH_QUERY_ROUNDS ?? 4);
const QUERY_RUNS_PER_ROUND = 25;
const QUERY_WARMUP = 10;
const PAGE_ROUNDS = Number(process.env.BENCH_PAGE_ROUNDS ?? 10);
/** "Zoom in" presses: each halves the view, so 6 take ~70 days to about a day. */
const ZOOM_STEPS = 6;
const REST_BACKUPS_LIMIT = 1_000;
/** A first answer slower than this stops (a): see measureQueries. */
const FIRST_ANSWER_LIMIT_MS = 10_000;
/** How long the servers' CPU is watched with nothing asked, before the series (a retention period: its pass runs every minute). */
const IDLE_SECONDS = 60;

const load = () => `(load ${loadavg().map((value) => value.toFixed(2)).join(' / ')})`;
const ms = (value: number) => `${value.toFixed(1)} ms`;
const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} KB`;
const days = (from: unknown, to: unknown) => `${((Date.parse(String(to)) - Date.parse(String(from))) / 86_400_000).toFixed(2)} days`;

// `kill -INT <pid>` (or Ctrl-C) ends the measurements; the `finally` below then stops Chromium, the stack and the S3.
const interrupted = new Promise<never>((_, reject) => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.log(`${signal}: stopping Chromium, the stack and the S3 (a second ${signal} ends the bench at once) ${load()}`);
      reject(new Error(`interrupted (${signal})`));
    });
  }
});
interrupted.catch(() => undefined);

const namespace = `benchcon_${Date.now()}_`;
const stateDir = await mkdtemp(path.join(tmpdir(), 'strata-bench-console-'));
const distDir = path.join(stateDir, 'console-dist');
buildConsole(distDir);
const s3 = await startBenchS3(path.join(stateDir, 'bench-s3')).catch(async (error: unknown) => {
  await rm(stateDir, { recursive: true, force: true });
  throw error;
});
let stack: Stack | undefined;
let browser: Browser | undefined;
try {
  console.log(`starting the stack in ${stateDir} ${load()}`);
  stack = await startStack({ stateDir, env: { ...process.env, ...s3.env, CONSOLE_DIST_DIR: distDir }, namespace, logLevel: 'warn' });
  browser = await launchChromium();
  console.log(`gateway ${stack.gatewayUrl}; Node ${process.version}, services run with ${serviceFlags()}; Chromium ${browser.version()} ${load()}`);
  const watch = watchForDeath(stack, stateDir);
  try {
    await Promise.race([benchmark(stack, browser), watch.died, interrupted]);
  } finally {
    watch.stop();
  }
} catch (error) {
  // A service that ran out of heap takes the step with it: say which, not only the step's timeout.
  if (stack && !(error instanceof StackProcessDied)) for (const line of await deadProcesses(stack, stateDir)) console.log(line);
  throw error;
} finally {
  await browser?.close();
  await stack?.stop();
  await s3.stop();
  // Its databases and S3 hold the seeded history: kept only when asked (to read the services' logs/).
  if (!process.env.BENCH_KEEP_STATE) await rm(stateDir, { recursive: true, force: true });
}

/** Everything measured, once the stack and Chromium are up. */
async function benchmark(stack: Stack, browser: Browser): Promise<void> {
  const admin = await devSession(stack.gatewayUrl, 'restorer-admin');
  const real = await targetWithOneBackup(stack, stateDir, admin);
  console.log(`the real backup ${real.backupId} (physical, through backup-now) succeeded in ${real.seconds.toFixed(1)} s ${load()}`);
  const seeded = await seedHistory(stack, namespace, s3, TARGET, { backups: BACKUPS - 1, segments: SEGMENTS });
  console.log(`seeded ${seeded.backups} backups and ${seeded.segments} segments from ${seeded.historyFrom.toISOString()} to ${seeded.historyTo.toISOString()}: store objects in ${seeded.objectSeconds.toFixed(1)} s, rows in ${seeded.copySeconds.toFixed(1)} s ${load()}`);

  if (process.env.BENCH_SUSPEND) {
    await suspendTarget(stack.gatewayUrl, admin);
    console.log(`BENCH_SUSPEND: the target is suspended (its streamer stopped: no new segment renews its chain while measured) ${load()}`);
  }
  const viewer = await devSession(stack.gatewayUrl, 'viewer');
  const pageUrl = `${stack.gatewayUrl}/console/targets/${TARGET.namespace}/${TARGET.name}`;
  const context = await signedInContext(browser, stack.gatewayUrl, viewer);
  const captured = await captureTimelineRequests(context, pageUrl, ZOOM_STEPS).finally(() => context.close());
  describeAnswer('whole history', captured.whole);
  describeAnswer(`zoomed in ${ZOOM_STEPS} times`, captured.zoomed);

  const caller: Caller = { gatewayUrl: stack.gatewayUrl, headers: { cookie: viewer } };
  const queryP50 = await measureQueries(stack, caller, captured);
  const scriptP50 = await measurePage(browser, stack.gatewayUrl, viewer, pageUrl, captured, 'apps/console');
  if (process.env.BENCH_PROFILE) await profilePage(browser, stack.gatewayUrl, viewer, pageUrl, captured, CONSOLE_DIR);
  const variant = process.env.BENCH_VARIANT ? path.resolve(process.env.BENCH_VARIANT) : undefined;
  if (variant) {
    // A modified copy of apps/console (a proposal), built as the app is and measured the same way, in the same run.
    viteBuild(variant, distDir, { minify: true });
    await measurePage(browser, stack.gatewayUrl, viewer, pageUrl, captured, `the variant ${variant}`);
    if (process.env.BENCH_PROFILE) await profilePage(browser, stack.gatewayUrl, viewer, pageUrl, captured, variant);
  }
  console.log(`\npeak resident memory: ${await peakRss(stack, ['gateway', 'backup-catalog'])}`);
  console.log(`summary ${load()}`);
  console.log(`  timeline query p50 ≤ 100 ms: ${queryP50 === undefined ? 'not measured' : `${queryP50 <= 100 ? 'met' : 'missed'} (worst p50 ${ms(queryP50)})`}`);
  console.log(`  timeline render ≤ 300 ms of script (cold p50): ${scriptP50 <= 300 ? 'met' : 'missed'} (${ms(scriptP50)})`);
  if (process.env.BENCH_HOLD) await holdStack(stack, captured.whole, viewer);
}

/** BENCH_HOLD=1: the stack stays up with its history (to profile a service by hand) until `kill -INT`. */
async function holdStack(stack: Stack, whole: CapturedRequest, cookie: string): Promise<never> {
  const request = path.join(stateDir, 'whole-history.json');
  await writeFile(request, JSON.stringify({ query: whole.query, variables: whole.variables }));
  console.log(`BENCH_HOLD: the stack stays up at ${stack.gatewayUrl} until kill -INT ${process.pid}; the whole-history request is in ${request}, the viewer's cookie: ${cookie}`);
  return await interrupted;
}

function describeAnswer(label: string, request: CapturedRequest): void {
  const { timeline } = request;
  const range = `${timeline.from} – ${timeline.to} (${days(timeline.from, timeline.to)})`;
  console.log(`the page's timeline request, ${label}: variables ${JSON.stringify(request.variables)}; answered ${range}: ${timeline.windows.length} windows, ${timeline.backups.length} backups, ${timeline.segmentSpans.length} change-log spans (${timeline.segmentSpans.reduce((n, s) => n + s.segments, 0)} segments), ${timeline.verifications.length} verifications, ${timeline.breaks.length} breaks`);
}

/**
 * (a) Answers the worst p50 of the two timeline series; undefined when a first answer took longer than
 * FIRST_ANSWER_LIMIT_MS (the series would take hours and measure only the catalog's backlog).
 */
async function measureQueries(stack: Stack, caller: Caller, captured: Captured): Promise<number | undefined> {
  const since = captured.zoomed.timeline.from;
  const timed = async <T extends object>(run: () => Promise<T>) => {
    const started = performance.now();
    return { ...(await firstAnswer(run)), ms: performance.now() - started };
  };
  const sizes = {
    whole: await timed(() => runTimeline(caller, captured.whole)),
    zoomed: await timed(() => runTimeline(caller, captured.zoomed)),
    backups: await timed(() => runRestBackups(caller, TARGET, REST_BACKUPS_LIMIT)),
    segments: await timed(() => runRestSegments(caller, TARGET, since)),
  };
  console.log(`\n(a) the timeline query through the gateway, the page's document (${QUERY_ROUNDS} rounds of ${QUERY_RUNS_PER_ROUND} per series, ${QUERY_WARMUP} warm-up runs) ${load()}`);
  console.log(`  answers: whole history ${kb(sizes.whole.bytes)} (${sizes.whole.timeline.backups.length} backups), zoomed ${kb(sizes.zoomed.bytes)} (${sizes.zoomed.timeline.backups.length} backups); REST backups ${kb(sizes.backups.bytes)} (${sizes.backups.rows} rows), REST segments since ${since} ${kb(sizes.segments.bytes)} (${sizes.segments.rows} rows)`);
  const firstTimes = Object.entries(sizes).map(([name, answer]) => `${name} ${ms(answer.ms)}`).join(', ');
  console.log(`  first answers (up to 3 tries each): ${firstTimes} ${load()}`);
  if (Object.values(sizes).some((answer) => answer.ms > FIRST_ANSWER_LIMIT_MS)) {
    console.log(`  NOT MEASURED: a first answer took more than ${FIRST_ANSWER_LIMIT_MS / 1000} s; the catalog is busy with its own passes (its log says which)`);
    return undefined;
  }
  const runs = [
    counting(() => runTimeline(caller, captured.whole)),
    counting(() => runTimeline(caller, captured.zoomed)),
    counting(() => runRestBackups(caller, TARGET, REST_BACKUPS_LIMIT)),
    counting(() => runRestSegments(caller, TARGET, since)),
  ];
  const names = ['GraphQL timeline, whole history', 'GraphQL timeline, zoomed', `REST backups?limit=${REST_BACKUPS_LIMIT} (baseline)`, 'REST segments?since= (baseline)'];
  const series: Series[] = runs.map((counted, i) => ({ name: names[i] as string, run: counted.run, times: [], cpuMs: 0 }));
  const pidOf = (name: string) => stack.processes.find((one) => one.name === name)?.pid ?? -1;
  const servers = [pidOf('gateway'), pidOf('backup-catalog')];
  const idle = await idleCpuRate(async () => [await cpuMsOf([servers[0] as number]), await cpuMsOf([servers[1] as number])], IDLE_SECONDS);
  console.log(`  with nothing asked (over ${IDLE_SECONDS} s): the catalog uses ${ms(idle[1] as number)} of CPU a second, the gateway ${ms(idle[0] as number)} ${load()}`);
  const idleRate = (idle[0] as number) + (idle[1] as number);
  await measureInterleaved(series, QUERY_ROUNDS, QUERY_RUNS_PER_ROUND, QUERY_WARMUP, () => cpuMsOf(servers));
  for (const one of series) {
    const busyMs = one.times.reduce((total, time) => total + time, 0);
    const net = (one.cpuMs - idleRate * (busyMs / 1000)) / one.times.length;
    const failures = runs[series.indexOf(one)]?.failures ?? [];
    console.log(`  ${one.name.padEnd(36)} p50 ${ms(percentile(one.times, 50)).padStart(9)}   p95 ${ms(percentile(one.times, 95)).padStart(9)}   CPU a request ${ms(one.cpuMs / one.times.length)}, net of the idle rate ${ms(net)}   (${one.times.length} runs${failures.length ? `, ${failures.length} FAILED: ${failures[0]}` : ''})`);
  }
  const [whole, zoomed, backups, segments] = series.map((one) => percentile(one.times, 50)) as [number, number, number, number];
  console.log(`  GraphQL ÷ REST at p50: whole history ÷ backups list ${(whole / backups).toFixed(2)}x, zoomed ÷ segments list ${(zoomed / segments).toFixed(2)}x ${load()}`);
  return Math.max(whole, zoomed);
}

/** (b) Answers the app's cold p50 script time. */
async function measurePage(browser: Browser, gatewayUrl: string, cookie: string, pageUrl: string, captured: Captured, built: string): Promise<number> {
  const { timeline } = captured.whole;
  const app = appDrawn(timeline);
  const marks = app.count;
  const base = listDrawn(baselineRows(timeline));
  const baseline = await startBaselineSite(timeline);
  const times = { app: { cold: [] as PageTimes[], warm: [] as PageTimes[] }, baseline: { cold: [] as PageTimes[], warm: [] as PageTimes[] } };
  try {
    for (let round = 0; round < PAGE_ROUNDS; round++) {
      // Alternating which goes first, so that a change of load hits both alike.
      const order = [['baseline', baseline.url, base], ['app', pageUrl, app]] as const;
      for (const [which, url, check] of round % 2 ? [...order].reverse() : order) {
        const [cold, warm] = await twoLoads(browser, gatewayUrl, cookie, captured.reads, url, check);
        times[which].cold.push(cold);
        times[which].warm.push(warm);
      }
    }
  } finally {
    await baseline.close();
  }
  console.log(`\n(b) main-thread time (CPU) from navigation until drawn, ${PAGE_ROUNDS} rounds, the console built from ${built}: the target page until its timeline holds ${marks} backup marks; the static page until its <ul> holds ${base.count} rows ${load()}`);
  for (const kind of ['cold', 'warm'] as const) {
    for (const which of ['app', 'baseline'] as const) {
      const runs = times[which][kind];
      const p = (key: keyof PageTimes, q: number) => ms(percentile(runs.map((run) => run[key]), q));
      console.log(`  ${kind} ${which === 'app' ? 'target page' : 'static <ul> '}  script p50 ${p('script', 50).padStart(9)} p95 ${p('script', 95).padStart(9)}   all tasks p50 ${p('task', 50).padStart(9)}   layout p50 ${p('layout', 50)}   style p50 ${p('style', 50)}   wall-clock p50 ${p('wall', 50)}`);
    }
    const ratio = percentile(times.app[kind].map((run) => run.script), 50) / percentile(times.baseline[kind].map((run) => run.script), 50);
    console.log(`  ${kind}: script of the target page ÷ the static list at p50: ${ratio.toFixed(2)}x`);
  }
  console.log(`  ${load()}`);
  return percentile(times.app.cold.map((run) => run.script), 50);
}

/** A new context (empty cache), the page loaded twice: cold, then warm (its scripts cached). Tried again once on failure. */
async function twoLoads(browser: Browser, gatewayUrl: string, cookie: string, reads: Recording, url: string, check: DrawnCheck): Promise<[PageTimes, PageTimes]> {
  for (let attempt = 1; ; attempt++) {
    const context = await signedInContext(browser, gatewayUrl, cookie);
    await replayReads(context, reads);
    try {
      const page = await preparePage(context, check);
      return [await page.measure(url), await page.measure(url)];
    } catch (error) {
      if (attempt >= 2) throw error;
      console.log(`  (tried again: ${(error as Error).message}) ${load()}`);
    } finally {
      await context.close();
    }
  }
}

/** BENCH_PROFILE=1: where the target page's script time goes (console-profile.ts), on an unminified build. */
async function profilePage(browser: Browser, gatewayUrl: string, cookie: string, pageUrl: string, captured: Captured, appDir: string): Promise<void> {
  viteBuild(appDir, distDir, { minify: false });
  const context = await signedInContext(browser, gatewayUrl, cookie);
  await replayReads(context, captured.reads);
  const profile = await profileLoad(context, `${gatewayUrl}/readyz`, pageUrl, appDrawn(captured.whole.timeline)).finally(() => context.close());
  console.log(`\nprofile of one cold load (unminified build of ${appDir}, sampled every 100 µs): ${ms(profile.totalMs)} on the main thread, not idle ${load()}`);
  console.log('  self time, by function:');
  for (const [where, time] of profile.self.slice(0, 20)) console.log(`    ${ms(time).padStart(9)}  ${where}`);
  console.log("  total time (self and callees) of the app's own functions:");
  for (const [where, time] of profile.total.slice(0, 25)) console.log(`    ${ms(time).padStart(9)}  ${where}`);
}
