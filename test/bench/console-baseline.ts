// The baseline of the page measurement: a static page (HTML, one external script, the timeline answer as a JSON file)
// listing the same windows, backups, change-log spans, verifications and breaks as plain <li> rows of one <ul>,
// served by a plain local HTTP server in the bench's process.
import type { TimelineAnswer } from './console-browser.ts';
import { serveStaticSite } from './dashboard-browser.ts';

/** Serves the baseline page for this answer; its <ul id="history"> holds a `row` <li> for each thing listed. */
export function startBaselineSite(timeline: TimelineAnswer): Promise<{ url: string; close(): Promise<void> }> {
  return serveStaticSite({
    '/index.html': { type: 'text/html; charset=utf-8', body: BASELINE_HTML },
    '/render.js': { type: 'text/javascript; charset=utf-8', body: BASELINE_SCRIPT },
    '/timeline.json': { type: 'application/json', body: JSON.stringify(timeline) },
  });
}

/** The rows the baseline draws for an answer: what its <ul> holds once drawn. */
export const baselineRows = (timeline: TimelineAnswer) => timeline.windows.length + timeline.backups.length + timeline.segmentSpans.length + timeline.verifications.length + timeline.breaks.length;

const BASELINE_HTML = `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8" /><title>Timeline (static)</title><script defer src="render.js"></script></head>
  <body><main><h1>History</h1></main></body>
</html>
`;

const BASELINE_SCRIPT = `(async () => {
  const t = await (await fetch('timeline.json')).json();
  const list = document.createElement('ul');
  list.id = 'history';
  const row = (text) => { const li = document.createElement('li'); li.className = 'row'; li.textContent = text; list.append(li); };
  for (const w of t.windows) row('Restorable ' + w.from + ' to ' + w.to);
  for (const b of t.backups) row('Full backup ' + b.id + ' (' + b.mode + ', ' + b.phase + ') at ' + b.time + (b.verified ? ', verified' : '') + (b.pinned ? ', pinned' : ''));
  for (const s of t.segmentSpans) row('Change log: ' + s.segments + ' segments, ' + s.commits + ' commits, ' + s.firstTime + ' to ' + s.lastTime);
  for (const v of t.verifications) row('Verification of ' + v.backupID + (v.passed ? ' passed' : ' failed') + ' at ' + v.at);
  for (const b of t.breaks) row('Broken at ' + b.from + ': ' + b.reason);
  document.querySelector('main').append(list);
})();
`;
