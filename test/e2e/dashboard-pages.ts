import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { call } from './stack.ts';

/**
 * What the dashboard's end-to-end test does to pages beyond clicking: accessibility audits with axe-core, the
 * screenshots (docs/dashboard/ with UPDATE_SCREENSHOTS=1), keyboard-only focus moves, and a recipient signing on the
 * hosted page.
 */

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };
/**
 * Every run takes the pictures (a page that cannot be drawn fails the run); they replace the ones kept in
 * docs/<app>/ (docs/dashboard/, docs/console/, docs/hosted-pages/) only when asked (UPDATE_SCREENSHOTS=1), so a test
 * run leaves the clone as it was.
 */
/** Where an app's pictures go (the console's end-to-end test photographs parts of long pages with it too). */
export function screenshotDir(app: 'dashboard' | 'console' | 'hosted-pages'): string {
  return process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '../../docs', app) : path.join(tmpdir(), `sigil-${app}-screenshots`);
}
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}

/** A one-page agreement, the document the person uploads. */
export async function agreementPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([612, 792]);
  page.drawText('Consulting agreement', { x: 72, y: 720, size: 20, font });
  page.drawText('The client engages the consultant on the terms below.', { x: 72, y: 690, size: 12, font });
  return Buffer.from(await doc.save());
}

interface AxeResult {
  id: string;
  impact: 'minor' | 'moderate' | 'serious' | 'critical' | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/**
 * axe-core on the page as it stands. Serious and critical violations fail the test (named with their elements);
 * moderate and minor ones are collected, to be printed once at the end without failing.
 */
export class Accessibility {
  readonly lesser: string[] = [];
  readonly audited: string[] = [];

  async check(page: Page, name: string): Promise<void> {
    // Evaluated rather than added as a <script>: the dashboard's CSP refuses inline scripts, and should.
    if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE_SOURCE);
    const violations = (await page.evaluate(async () => {
      const { axe } = globalThis as unknown as { axe: { run: (options: object) => Promise<{ violations: unknown[] }> } };
      return (await axe.run({ resultTypes: ['violations'] })).violations;
    })) as AxeResult[];
    const describe = (v: AxeResult) => `${name}: ${v.impact} ${v.id} (${v.help}) at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`;
    this.audited.push(name);
    this.lesser.push(...violations.filter((v) => v.impact !== 'serious' && v.impact !== 'critical').map(describe));
    expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map(describe), `axe on ${name}`).toEqual([]);
  }
}

/**
 * What every page test watches besides its steps: an uncaught error in the page fails the step it happened in, a failed
 * step prints where the page stood (its address and what a screen reader finds in it), and axe's moderate or minor
 * findings are listed once at the end.
 */
export class PageWatch {
  private readonly errors: string[] = [];
  private readonly page: Page;

  constructor(page: Page) {
    this.page = page;
    page.on('pageerror', (error) => this.errors.push(error.message));
  }

  async afterStep(task: { name: string; result?: { state?: string } }): Promise<void> {
    if (task.result?.state === 'fail') console.log(`after "${task.name}": ${this.page.url()}\n${(await this.page.locator('body').ariaSnapshot().catch(String)).slice(0, 3000)}`);
    expect(this.errors.splice(0), 'uncaught errors in the page').toEqual([]);
  }

  static reportLesser(a11y: Accessibility): void {
    if (a11y.lesser.length > 0) console.log(`axe: moderate or minor violations (not failing the test):\n  ${a11y.lesser.join('\n  ')}`);
  }
}

/**
 * The page from its top at desktop and phone widths into <the app's folder>/<name>-desktop.png and -phone.png (the
 * viewport only: long pages would make large files), back at the desktop width after.
 */
export async function screenshots(page: Page, name: string, app: 'dashboard' | 'console' | 'hosted-pages' = 'dashboard'): Promise<void> {
  const folder = screenshotDir(app);
  mkdirSync(folder, { recursive: true });
  for (const [size, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    await page.setViewportSize(viewport);
    // Fonts and a layout at the new width before the picture (pdf.js canvases redraw on resize).
    await page.evaluate('scrollTo(0, 0); document.fonts.ready.then(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))))');
    await page.screenshot({ path: path.join(folder, `${name}-${size}.png`), animations: 'disabled', caret: 'hide' });
  }
  await page.setViewportSize(DESKTOP);
}

/** A page of the dashboard, its h1 shown: what every step waits on after a navigation. */
export async function expectHeading(page: Page, name: string | RegExp): Promise<void> {
  await expect.poll(() => page.getByRole('heading', { level: 1, name }).isVisible(), { timeout: 15_000, message: `the page titled ${String(name)}` }).toBe(true);
}

/** The little of the DOM the browser-side functions below use (this project's TypeScript has no DOM library). */
interface DomNode {
  contains(other: unknown): boolean;
  ownerDocument: { activeElement: unknown };
  getAttribute(name: string): string | null;
}

/**
 * Keyboard only: presses Tab (Shift+Tab when `backwards`) until `target` has the focus, at most `limit` times. Reading
 * where the focus is is not input; the presses are the only thing that moves it.
 */
export async function tabTo(page: Page, target: Locator, { limit = 60, backwards = false } = {}): Promise<void> {
  for (let presses = 0; presses < limit; presses++) {
    const focused = await target
      .evaluate((element) => {
        const node = element as unknown as DomNode;
        return node.contains(node.ownerDocument.activeElement);
      })
      .catch(() => false);
    if (focused) return;
    await page.keyboard.press(backwards ? 'Shift+Tab' : 'Tab');
  }
  const where = await page.evaluate('document.activeElement?.outerHTML.slice(0, 200)');
  throw new Error(`Tab never reached ${String(target)} in ${limit} presses (focus on ${String(where)})`);
}

/** The session cookie of a browser context, for the API calls a test makes as the signed-in person. */
export async function sessionCookie(page: Page): Promise<string> {
  const cookie = (await page.context().cookies()).find((c) => c.name === 'sigil_session');
  if (!cookie) throw new Error('no sigil_session cookie: not signed in');
  return `${cookie.name}=${cookie.value}`;
}

/** A signing link for a recipient whose turn it is, minted as the signed-in person in test mode. */
export async function signingUrl(base: string, cookie: string, envelopeId: string, recipientId: string): Promise<string> {
  const minted = await call(base, 'POST', `/v1/envelopes/${envelopeId}/sessions`, { headers: { cookie, 'sigil-mode': 'test' }, body: { recipient: recipientId } });
  expect(minted.status, JSON.stringify(minted.body)).toBe(201);
  return minted.body.url as string;
}

/**
 * A recipient signs on the hosted signing page in a browser context of their own (no dashboard cookie): a typed
 * signature in each signature field, `texts` typed into text fields by field id, consent, finish.
 */
export async function signAsRecipient(browser: Browser, url: string, signature: string, texts: Record<string, string> = {}): Promise<void> {
  const context = await browser.newContext({ viewport: { width: 900, height: 1000 } });
  try {
    const page = await context.newPage();
    await page.goto(url);
    await signOnPage(page, signature, texts);
  } finally {
    await context.close();
  }
}

/** The hosted signing page, open in `page`: a typed signature in each signature field, `texts` by field id, consent, finish. */
export async function signOnPage(page: Page, signature: string, texts: Record<string, string> = {}): Promise<void> {
  await page.waitForSelector('[data-field] >> nth=0', { timeout: 15_000 });
  for (const id of await page.locator('button[data-field]').evaluateAll((buttons) => buttons.map((b) => (b as unknown as DomNode).getAttribute('data-field') as string))) {
    await page.click(`[data-field="${id}"]`);
    await page.fill('#typed', signature);
    await page.click('#apply-signature');
  }
  for (const [id, text] of Object.entries(texts)) await page.fill(`[data-field="${id}"] input`, text);
  await page.check('#consent');
  await page.click('#finish');
  await page.waitForSelector('text=/Thank you: you have signed|Everyone has signed/', { timeout: 15_000 });
}
