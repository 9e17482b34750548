// The dashboard in Chromium: the JavaScript a first load downloads, and the envelopes page's time to interactive
// against a static page that renders the same rows from a JSON file (the baseline, served locally in the same run).
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { chromium, type Browser, type BrowserContext, type Page, type Response } from 'playwright-core';

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

/** A fresh context (empty HTTP cache) signed in with the dashboard session's cookie. */
export async function signedInContext(browser: Browser, gatewayUrl: string, sessionCookie: string | undefined): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  if (sessionCookie) {
    const [name, value] = sessionCookie.split('=') as [string, string];
    await context.addCookies([{ name, value, url: gatewayUrl, httpOnly: true, sameSite: 'Lax' }]);
  }
  return context;
}

/** The envelopes list's GraphQL request as the page sends it, and its answer's nodes; undefined if none was sent. */
export async function captureListRequest(context: BrowserContext, gatewayUrl: string): Promise<{ query: string; variables: Record<string, unknown>; nodes: unknown[] } | undefined> {
  const page = await context.newPage();
  try {
    const answered = page.waitForResponse((res) => res.url().endsWith('/graphql') && /\benvelopes\s*\(/.test(res.request().postData() ?? ''), { timeout: 90_000 });
    await page.goto(`${gatewayUrl}/app/envelopes`);
    const res = await answered.catch(() => undefined);
    if (!res) return undefined;
    const sent = JSON.parse(res.request().postData() as string) as { query: string; variables?: Record<string, unknown> };
    const body = (await res.json()) as { data?: { envelopes?: { nodes: unknown[] } } };
    return { query: sent.query, variables: sent.variables ?? {}, nodes: body.data?.envelopes?.nodes ?? [] };
  } finally {
    await page.close();
  }
}

export interface ScriptBytes {
  files: number;
  raw: number;
  /** The content-encodings the gateway served them with ("identity": it does not compress). */
  encodings: string[];
  gzip: number;
  brotli: number;
}

/**
 * Every script a cold load of `url` downloads until the network is idle, with their compressed sizes. Throws when the
 * page or a script is not answered 200 (another engineer's build replacing dist meanwhile): the caller tries again.
 */
export async function firstLoadScripts(context: BrowserContext, url: string): Promise<ScriptBytes> {
  const page = await context.newPage();
  const scripts: Response[] = [];
  let lastScriptAt = performance.now();
  const onResponse = (res: Response) => {
    if (res.request().resourceType() !== 'script' && !/javascript/.test(res.headers()['content-type'] ?? '')) return;
    scripts.push(res);
    lastScriptAt = performance.now();
  };
  page.on('response', onResponse);
  try {
    const document = await page.goto(url, { waitUntil: 'load' });
    // The page's own chunks come after the shell has run (and asked who is signed in): wait for its heading, then
    // for a second without a new script (networkidle alone came too early under load, before the lazy chunks).
    await page.waitForSelector('main h1', { timeout: 30_000 });
    while (performance.now() - lastScriptAt < 1000) await page.waitForTimeout(200);
    page.off('response', onResponse);
    const failed = [document, ...scripts].filter((res) => res?.status() !== 200);
    if (failed.length > 0) throw new Error(`not answered 200: ${failed.map((res) => `${res?.url()} ${res?.status()}`).join(', ')}`);
    const bodies = await Promise.all(scripts.map((res) => res.body()));
    return {
      files: scripts.length,
      raw: sum(bodies.map((body) => body.length)),
      encodings: [...new Set(scripts.map((res) => res.headers()['content-encoding'] ?? 'identity'))],
      gzip: sum(bodies.map((body) => gzipSync(body, { level: 9 }).length)),
      brotli: sum(bodies.map((body) => brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length)),
    };
  } finally {
    await page.close();
  }
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

/**
 * Navigates and answers the milliseconds from the navigation's start (the page's time origin) until the table's first
 * body row is on screen and the first control of `main` takes the keyboard focus, checked on every frame.
 */
export async function timeToInteractive(page: Page, url: string, timeoutMs = 15_000): Promise<number> {
  const document = await page.goto(url, { waitUntil: 'commit' });
  if (document?.status() !== 200) throw new Error(`${url} answered ${document?.status()}`);
  const ready = await page.waitForFunction(interactiveCheck, undefined, { polling: 'raf', timeout: timeoutMs });
  return (await ready.jsonValue()) as number;
}

/** What the check below uses of the page's globals (this project's TypeScript has no DOM types). */
interface PageGlobals {
  innerHeight: number;
  performance: { now(): number };
  document: {
    activeElement: unknown;
    querySelector(selector: string): { getBoundingClientRect(): { height: number; top: number } } | null;
    querySelectorAll(selector: string): Iterable<{ tabIndex: number; hasAttribute(name: string): boolean; getClientRects(): { length: number }; focus(): void }>;
  };
}

/** Run in the page on every frame (a function, not a string: the dashboard's CSP forbids eval). */
function interactiveCheck(): number | false {
  const page = globalThis as unknown as PageGlobals;
  const row = page.document.querySelector('main table tbody tr');
  if (!row) return false;
  const box = row.getBoundingClientRect();
  if (box.height === 0 || box.top >= page.innerHeight) return false;
  const focusable = [...page.document.querySelectorAll('main a[href], main button, main input, main select, main textarea, main [tabindex]')].find(
    (element) => element.tabIndex >= 0 && !element.hasAttribute('disabled') && element.getClientRects().length > 0,
  );
  if (!focusable) return false;
  focusable.focus();
  return page.document.activeElement === focusable ? page.performance.now() : false;
}

/**
 * The baseline: a static page (HTML, one external script, the rows as a JSON file) drawing the same rows into a
 * table with the same columns, under a search field, from a plain local HTTP server.
 */
export function startBaselineSite(rows: unknown[]): Promise<{ url: string; close(): Promise<void> }> {
  return serveStaticSite({
    '/index.html': { type: 'text/html; charset=utf-8', body: BASELINE_HTML },
    '/render.js': { type: 'text/javascript; charset=utf-8', body: BASELINE_SCRIPT },
    '/rows.json': { type: 'application/json', body: JSON.stringify(rows) },
  });
}

/** A plain local HTTP server of a few files (no caching), for a bench's baseline page; `url` is its index.html. */
export async function serveStaticSite(files: Record<string, { type: string; body: string }>): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const file = files[new URL(req.url ?? '/', 'http://x').pathname];
    if (!file) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store' }).end(file.body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/index.html`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const BASELINE_HTML = `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8" /><title>Envelopes (static)</title><script defer src="render.js"></script></head>
  <body>
    <main>
      <h1>Envelopes</h1>
      <label>Search <input type="search" name="q" /></label>
      <table>
        <thead><tr><th scope="col">Envelope</th><th scope="col">Recipients</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
        <tbody></tbody>
      </table>
    </main>
  </body>
</html>
`;

const BASELINE_SCRIPT = `(async () => {
  const rows = await (await fetch('rows.json')).json();
  const cell = (tr, text) => { const td = document.createElement('td'); td.textContent = text; tr.append(td); return td; };
  const body = document.querySelector('tbody');
  for (const envelope of rows) {
    const tr = document.createElement('tr');
    const first = cell(tr, '');
    const link = document.createElement('a');
    link.href = '#' + envelope.id;
    link.textContent = (envelope.template && envelope.template.name || '') + ' ' + envelope.id;
    first.append(link);
    cell(tr, (envelope.recipients || []).map((r) => r.name + ' ' + r.status).join(', '));
    cell(tr, envelope.status);
    cell(tr, new Date(envelope.createdAt).toLocaleString());
    body.append(tr);
  }
})();
`;
