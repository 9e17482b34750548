import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import pg from 'pg';
import { expect } from 'vitest';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { runCli } from '@strata/cli';
import { DESKTOP, PHONE, screenshotDir, screenshots, type Accessibility } from './dashboard-pages.ts';
import { call } from './stack.ts';

/**
 * What the console's end-to-end test does besides pages: the `strata` CLI in a folder of its own, API calls as a
 * role, the source database's commits with the database's own clock, browser contexts in Berlin time, and the check
 * that a page offers none of the controls a role may not use.
 */

/** The browser's time zone: the moment is typed in it, so the test formats it there too. */
export const ZONE = 'Europe/Berlin';

/** YYYY-MM-DD HH:MM:SS in `ZONE`, as the wizard's "Moment (your time zone)" takes it. */
export function zoneTime(at: number): string {
  return new Intl.DateTimeFormat('sv-SE', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(at);
}

/** A `strata` CLI with its login in a temporary folder. */
export function strataCli(): (...args: string[]) => Promise<{ code: number; out: string; err: string }> {
  const configDir = mkdtempSync(path.join(tmpdir(), 'strata-console-cli-'));
  return async (...args) => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (c) => (out += c));
    stderr.on('data', (c) => (err += c));
    const code = await runCli(args, { stdout, stderr, env: { STRATA_CONFIG: path.join(configDir, 'config.json'), HOME: configDir, PWD: configDir } });
    return { code, out, err };
  };
}

/** What the test reads of a target in the console API. */
export interface TargetView {
  pitr: boolean;
  windows: Array<{ from: string; to: string }>;
}

/** GET on the console API as a viewer (a dev-issuer token in the access proxy's header). */
export async function apiAsViewer<T>(base: string, pathName: string): Promise<T> {
  const minted = await call(base, 'POST', '/api/dev/token', { body: { email: 'probe@example.test', role: 'viewer' } });
  expect(minted.status, JSON.stringify(minted.body)).toBe(200);
  const answer = await call(base, 'GET', `/api/v1${pathName}`, { headers: { 'cf-access-jwt-assertion': minted.body.token } });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as T;
}

/** Creates `database` on the server of `adminUrl`; answers the URL that connects to it. */
export async function createDatabase(adminUrl: string, database: string): Promise<string> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${database}"`).finally(() => admin.end());
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The source database: a connection that commits rows and says when, by the database server's own clock. */
export class Source {
  private readonly client: pg.Client;

  private constructor(client: pg.Client) {
    this.client = client;
  }

  static async create(adminUrl: string, database: string): Promise<Source> {
    const client = new pg.Client({ connectionString: await createDatabase(adminUrl, database) });
    await client.connect();
    await client.query('CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, email text NOT NULL)');
    await client.query("INSERT INTO customers VALUES (1, 'Ada Lovelace', 'ada@example.com'), (2, 'Grace Hopper', 'grace@example.com')");
    return new Source(client);
  }

  /** The server's clock now, in epoch milliseconds. */
  async now(): Promise<number> {
    return (await this.client.query<{ at: number }>('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS at')).rows[0]!.at;
  }

  /** Commits one customer: `began` is the transaction's now(), `committed` a moment after its COMMIT returned. */
  async commit(id: number, name: string, email: string): Promise<{ began: number; committed: number }> {
    await this.client.query('BEGIN');
    const { rows } = await this.client.query<{ at: number }>('INSERT INTO customers VALUES ($1, $2, $3) RETURNING (extract(epoch FROM now()) * 1000)::float8 AS at', [id, name, email]);
    await this.client.query('COMMIT');
    return { began: rows[0]!.at, committed: await this.now() };
  }

  async end(): Promise<void> {
    await this.client.end();
  }
}

/**
 * The replication slot the catalog names after a Postgres target's uid (services/backup-catalog change-capture/streams.ts
 * slotName). It outlives the stack (the server keeps WAL for it, and has ten slots in all): the test drops it.
 */
export function slotOf(uid: string): string {
  return `strata_${uid.toLowerCase().replace(/[^a-z0-9]/g, '_')}`.slice(0, 63);
}

/** The replication slots of that name on the server (the mover advances its slot itself: it is seldom active), dropped first when asked. */
export async function slotsNamed(adminUrl: string, slot: string, drop = false): Promise<Array<{ active: boolean }>> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    if (drop) await client.query('SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active', [slot]);
    return (await client.query<{ active: boolean }>('SELECT active FROM pg_replication_slots WHERE slot_name = $1', [slot])).rows;
  } finally {
    await client.end();
  }
}

/** A browser context in Berlin time, British English, at the desktop width. */
export function consoleContext(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({ viewport: DESKTOP, timezoneId: ZONE, locale: 'en-GB' });
}

/** Signed in without the sign-in page: the dev session posted from the page's context (its cookie lands there). */
export async function signInByRequest(page: Page, base: string, email: string, role: string): Promise<void> {
  const answer = await page.request.post(`${base}/api/dev/session`, { data: { email, role } });
  expect(answer.status(), await answer.text()).toBe(200);
}

/** Every control a role below restorer must not be offered, by the names the console gives them. */
export const RESTORE_CONTROLS = [
  'Restore…', 'Open a sandbox…', 'New sandbox', 'New restore', 'Open sandbox', 'Start restore', 'Start restore in place', 'Restore to this moment',
  'Run', 'Reveal credentials', 'Extend', 'Reset', 'Delete', 'Back up now', 'Suspend', 'Resume', 'Pin', 'Unpin', 'Apply', 'Load a YAML file…',
];

/** The controls of `names` the page offers (buttons and links, by accessible name): none is expected. */
export async function offeredControls(page: Page, names: readonly string[] = RESTORE_CONTROLS): Promise<string[]> {
  const offered: string[] = [];
  for (const name of names) {
    const count = (await page.getByRole('button', { name, exact: true }).count()) + (await page.getByRole('link', { name, exact: true }).count());
    if (count > 0) offered.push(name);
  }
  return offered;
}

/**
 * As `screenshots` (dashboard-pages.ts), into the console's folder, for what lies below a page's top: `target` is
 * scrolled to the bottom of the viewport at each width, so the picture shows it and what leads to it.
 */
export async function screenshotsOf(page: Page, name: string, target: Locator): Promise<void> {
  const folder = screenshotDir('console');
  mkdirSync(folder, { recursive: true });
  for (const [size, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    await page.setViewportSize(viewport);
    await target.evaluate((element) => (element as unknown as { scrollIntoView(options: object): void }).scrollIntoView({ block: 'end' }));
    await page.evaluate('document.fonts.ready.then(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))))');
    await page.screenshot({ path: path.join(folder, `${name}-${size}.png`), animations: 'disabled', caret: 'hide' });
  }
  await page.setViewportSize(DESKTOP);
}

/**
 * Audits a console page with axe at the desktop and the phone width once it has loaded what it shows (no "Loading …"
 * left), then photographs it at both: from its top, or down to `at`.
 */
export async function recordPage(page: Page, a11y: Accessibility, name: string, at?: Locator): Promise<void> {
  await expect.poll(() => page.getByRole('status').filter({ hasText: /^Loading / }).count(), { timeout: 20_000, message: `${name} still loading` }).toBe(0);
  await a11y.check(page, name);
  // At a phone's width too: tables scroll sideways there, and a scrolling region must be reachable from the keyboard.
  await page.setViewportSize(PHONE);
  await a11y.check(page, `${name} (phone)`);
  await page.setViewportSize(DESKTOP);
  await (at ? screenshotsOf(page, name, at) : screenshots(page, name, 'console'));
}
