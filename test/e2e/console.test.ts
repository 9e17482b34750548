import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { createMysqlFixture, dropMysqlDatabase, dropPostgresDatabase, uniqueDatabaseName } from '@strata/mover/testing';
import { Accessibility, expectHeading, launchChromium, tabTo } from './dashboard-pages.ts';
import { apiAsViewer, consoleContext, offeredControls, recordPage, signInByRequest, slotOf, slotsNamed, Source, strataCli, zoneTime, type TargetView } from './console-pages.ts';
import { startTestStack, type TestStack } from './stack.ts';
import { waitFor } from '../integration/wait.ts';

/**
 * The Strata console's story in Chromium, on one stack: `strata quickstart` backs up a small Postgres database of the
 * test's own with change capture; two rows are committed seconds apart; a restorer signed in through the sign-in page
 * sees the target's windows move, opens a sandbox at a second between the two commits with the keyboard only, queries
 * it (the rows committed by then, the masked column masked); a viewer sees the same pages without a control their role
 * may not use; the restorer deletes the sandbox and the lists open meanwhile drop it; an admin applies YAML with two
 * mistakes and sees both on their lines. axe-core and screenshots (docs/console/ with UPDATE_SCREENSHOTS=1) on every
 * page the restorer and the admin see, axe on the viewer's. Each step builds on the one before.
 */
const pgAdmin = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const mysqlAdmin = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';
const databases = { postgres: uniqueDatabaseName('e2econ'), mysql: uniqueDatabaseName('e2econmy') };
/** How long a condition on a page may take to hold (the waits end as soon as it holds). */
const SOON = { timeout: 20_000 };
const people = { restorer: 'rita.restorer@example.test', viewer: 'victor.viewer@example.test', admin: 'ada.admin@example.test' };

let stack: TestStack;
let browser: Browser;
let source: Source;
const strata = strataCli();
const a11y = new Accessibility();
/** The page of each person, and the uncaught errors of all of them (each step ends with none). */
const pages: Partial<Record<keyof typeof people, Page>> = {};
const pageErrors: string[] = [];
/** The two commits after the backup, and the moment between them (a whole second, by the database's clock). */
let first: { began: number; committed: number };
let second: { began: number; committed: number };
let moment: number;
let sandbox: string;
/** Whether the sandbox is still there to delete at the end (its server would outlive the stack). */
let sandboxLives = false;
/** The replication slot of default/postgres's change capture, dropped at the end. */
let slot: string | undefined;

const url = (pathName: string) => `${stack.gatewayUrl}/console${pathName}`;

/** Audits and photographs the page under `name`, once it has loaded what it shows: from its top, or down to `at`. */
const record = (page: Page, name: string, at?: Locator) => recordPage(page, a11y, name, at);

async function newPage(who: keyof typeof people): Promise<Page> {
  const page = await (await consoleContext(browser)).newPage();
  page.setDefaultTimeout(20_000);
  page.on('pageerror', (error) => pageErrors.push(`${who}: ${error.message}`));
  pages[who] = page;
  return page;
}

async function sandboxListed(): Promise<boolean> {
  return (await apiAsViewer<{ sandboxes: Array<{ name: string }> }>(stack.gatewayUrl, '/sandboxes')).sandboxes.some((s) => s.name === sandbox);
}

async function deleteSandbox(): Promise<void> {
  const deleted = await strata('sandbox', 'delete', sandbox);
  if (deleted.code !== 0) throw new Error(deleted.err);
  await waitFor(`sandbox ${sandbox} gone`, async () => ((await sandboxListed()) ? undefined : true), 30_000);
}

/** A page of the console opened by its address, its title shown. */
async function open(page: Page, pathName: string, heading: string | RegExp): Promise<void> {
  await page.goto(url(pathName));
  await expectHeading(page, heading);
}

beforeAll(async () => {
  [stack, browser, source] = await Promise.all([
    startTestStack(),
    launchChromium(),
    Source.create(pgAdmin, databases.postgres),
    // The quickstart's other target, default/mariadb, backs up a tiny database of its own.
    createMysqlFixture(mysqlAdmin, databases.mysql, { rows: 2, largeRowBytes: 1024 }),
  ]);
}, 240_000);

afterEach(async ({ task }) => {
  if (task.result?.state === 'fail') {
    for (const [who, page] of Object.entries(pages)) console.log(`after "${task.name}", ${who}: ${page.url()}\n${(await page.getByRole('main').ariaSnapshot().catch(String)).slice(-4000)}`);
    // And where the API stood: the sandboxes and restores; the services' own words are in their logs.
    for (const list of ['/sandboxes', '/restores']) console.log(`GET ${list}: ${JSON.stringify(await apiAsViewer(stack.gatewayUrl, list).catch(String)).slice(0, 3000)}`);
    console.log(`the stack's logs: ${stack.stateDir}/logs`);
  }
  expect(pageErrors.splice(0), 'uncaught errors in the console').toEqual([]);
});

afterAll(async () => {
  if (a11y.lesser.length > 0) console.log(`axe: moderate or minor violations (not failing the test):\n  ${a11y.lesser.join('\n  ')}`);
  await browser?.close();
  // A step failed with the sandbox alive: deleted, and gone (its server stopped) before the stack stops.
  if (sandboxLives) await deleteSandbox().catch((error: unknown) => console.log(`sandbox ${sandbox} left behind: ${String(error)}`));
  await stack?.stop();
  await source?.end();
  if (slot) await waitFor(`replication slot ${slot} dropped`, async () => ((await slotsNamed(pgAdmin, slot!, true)).length === 0 ? true : undefined), 30_000);
  await dropPostgresDatabase(pgAdmin, databases.postgres);
  await dropMysqlDatabase(mysqlAdmin, databases.mysql);
}, 120_000);

describe('the Strata console in Chromium', () => {
  it('backs up the source with `strata quickstart --apply` and a backup now', async () => {
    const login = await strata('login', '--server', stack.gatewayUrl, '--email', people.admin);
    expect(login.code, login.err).toBe(0);
    const quickstart = await strata(
      'quickstart', '--stack', stack.stateDir, '--file', 'stack.yaml', '--apply',
      '--bucket', `${stack.namespace.replace(/_/g, '-')}backups`.replace(/-+$/, ''),
      '--postgres-databases', databases.postgres, '--mysql-databases', databases.mysql,
    );
    expect(quickstart.code, quickstart.err).toBe(0);
    expect(quickstart.out).toMatch(/backuptarget\/default\/postgres created/i);
    // The change log streams from before the full backup, so the backup opens a window.
    const resource = await strata('get', 'resource', 'BackupTarget', 'default/postgres', '-o', 'json');
    slot = slotOf(JSON.parse(resource.out).metadata.uid);
    await waitFor('change capture of default/postgres', async () => ((await apiAsViewer<{ target: TargetView }>(stack.gatewayUrl, '/targets/default/postgres')).target.pitr ? true : undefined), 60_000);
    await waitFor('the WAL stream\'s replication slot', async () => ((await slotsNamed(pgAdmin, slot!)).length === 1 ? true : undefined), 60_000);
    const backup = await strata('backup-now', 'default/postgres', '--reason', 'console e2e', '--watch', '--timeout', '3m');
    expect(backup.code, backup.err + backup.out).toBe(0);
    expect(backup.out).toMatch(/Succeeded/);
  }, 240_000);

  it('commits row 101, then row 102 seconds later, and the restore window reaches past the second', async () => {
    first = await source.commit(101, 'Katherine Johnson', 'katherine@example.com');
    // The first whole second after the first commit: what the restorer types.
    moment = Math.ceil((first.committed + 1) / 1000) * 1000;
    // At least two seconds after the first commit and a second past the moment, by the database's clock.
    await new Promise((resolve) => setTimeout(resolve, Math.max(first.committed + 2000, moment + 1000) - first.committed));
    second = await source.commit(102, 'Dorothy Vaughan', 'dorothy@example.com');
    expect(first.committed).toBeLessThan(moment);
    expect(second.began).toBeGreaterThan(moment + 900);
    const window = await waitFor('the window to pass the second commit', async () => {
      const { target } = await apiAsViewer<{ target: TargetView }>(stack.gatewayUrl, '/targets/default/postgres');
      const last = target.windows.at(-1);
      return last && Date.parse(last.to) > second.committed ? last : undefined;
    }, 60_000);
    expect(Date.parse(window.from)).toBeLessThan(first.began);
  }, 90_000);

  it('signs the restorer in on the sign-in page; the targets page and the target page show the windows and the timeline', async () => {
    const page = await newPage('restorer');
    await open(page, '/sign-in', 'Sign in to Strata');
    await record(page, 'sign-in');
    await page.getByLabel('E-mail').fill(people.restorer);
    await page.getByRole('button', { name: /\bRole$/ }).click();
    await page.getByRole('option', { name: /^restorer(?!-)/ }).click();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectHeading(page, 'Targets');
    await expect.poll(() => page.getByRole('banner').textContent(), SOON).toContain(`${people.restorer} restorer`);

    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'default/postgres', exact: true }) });
    await expect.poll(() => row.getByRole('img', { name: /^default\/postgres: restorable from / }).count(), SOON).toBe(1);
    await record(page, 'targets');

    await row.getByRole('link', { name: 'default/postgres', exact: true }).click();
    await expectHeading(page, 'default/postgres');
    await page.getByRole('heading', { name: 'Timeline', level: 2 }).waitFor();
    await page.getByRole('slider', { name: /^History of default\/postgres/ }).waitFor();
    for (const name of ['Restore…', 'Open a sandbox…']) await page.getByRole('link', { name, exact: true }).waitFor();
    // The windows the page lists are the API's, in the browser's time zone with UTC beside.
    const { target } = await apiAsViewer<{ target: TargetView }>(stack.gatewayUrl, '/targets/default/postgres');
    await expect.poll(() => page.getByRole('main').textContent(), SOON).toContain(`(${new Date(target.windows[0]!.from).toISOString().slice(11, 19)} UTC) → `);
    await record(page, 'target');
  }, 60_000);

  it('opens a sandbox at a second between the two commits with the keyboard only', async () => {
    const page = pages.restorer!;
    await open(page, '/restore?target=default%2Fpostgres&mode=sandbox', 'Restore');
    const field = page.getByRole('textbox', { name: 'Moment (your time zone)' });
    await field.waitFor();
    expect(await page.getByRole('radio', { name: /^Sandbox/ }).isChecked()).toBe(true);
    await tabTo(page, field);
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type(zoneTime(moment));
    const utc = new Date(moment).toISOString().slice(0, 19).replace('T', ' ');
    await expect.poll(() => field.evaluate((input) => (input as unknown as { value: string }).value), SOON).toBe(zoneTime(moment));
    // Under the field, the same moment in UTC; beside it, the verdict; below, the server's plan for it.
    await page.getByText(`${utc} UTC`, { exact: true }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Restorable to the second.' }).waitFor();
    const plan = page.getByRole('region', { name: /Plan$/ });
    await expect.poll(() => plan.getByRole('definition').first().textContent(), SOON).toContain(`(${utc.slice(11)} UTC)`);
    await expect.poll(() => plan.textContent(), SOON).toMatch(/Change log to replay\d+ segments?, up to the moment/);
    await record(page, 'restore-wizard');

    const start = page.getByRole('button', { name: 'Open sandbox', exact: true });
    await tabTo(page, start);
    await page.keyboard.press('Enter');
    const progress = page.getByRole('region', { name: 'Progress' });
    // The answer names the sandbox at once; it lives from then on (deleted at the end should a step fail).
    sandbox = (await progress.getByRole('link', { name: /^Sandbox / }).textContent())!.replace(/^Sandbox /, '');
    sandboxLives = true;
    const ready = progress.getByRole('link', { name: `Open sandbox ${sandbox}`, exact: true });
    await waitFor('the sandbox to be Ready, or the restore to fail', async () => {
      if (await progress.getByRole('alert').count()) throw new Error(`the restore failed: ${await progress.getByRole('alert').textContent()}`);
      return (await ready.count()) > 0 ? true : undefined;
    }, 150_000);
    await expect.poll(() => progress.textContent()).toContain(`Sandbox ${sandbox} is ready.`);
    await record(page, 'restore-ready', progress);
    await tabTo(page, ready);
    await page.keyboard.press('Enter');
    await expectHeading(page, sandbox);
  }, 200_000);

  it('queries the sandbox: exactly the rows committed by the moment, the e-mails masked', async () => {
    const page = pages.restorer!;
    await expect.poll(() => page.getByRole('main').textContent(), SOON).toMatch(new RegExp(`its data as of [^.]*, ${zoneTime(moment).slice(11)} \\(${new Date(moment).toISOString().slice(11, 19)} UTC\\)`));
    const sql = page.getByRole('textbox', { name: 'SQL' });
    await tabTo(page, sql);
    await page.keyboard.type('select id, name, email from customers order by id');
    await tabTo(page, page.getByRole('button', { name: 'Run', exact: true }));
    await page.keyboard.press('Enter');
    const grid = page.getByRole('table', { name: 'Query result' });
    await grid.waitFor();
    const headers = await grid.getByRole('columnheader').allTextContents();
    expect(headers).toEqual(['id', 'name', 'emailmasked']);
    expect(await grid.getByRole('columnheader', { name: /^email/ }).locator('.sbx-masked').textContent()).toBe('masked');
    const rows = await grid.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from((tr as unknown as { cells: ArrayLike<{ textContent: string }> }).cells, (c) => c.textContent)));
    expect(rows).toEqual([
      ['1', 'Ada Lovelace', '***'],
      ['2', 'Grace Hopper', '***'],
      ['101', 'Katherine Johnson', '***'],
    ]);
    await page.getByRole('status').filter({ hasText: /^3 rows/ }).waitFor();
    await record(page, 'sandbox-query', grid);
  }, 60_000);

  it('shows a viewer the same pages without any restore control, and no audit log', async () => {
    const page = await newPage('viewer');
    await page.goto(url('/sign-in'));
    await signInByRequest(page, stack.gatewayUrl, people.viewer, 'viewer');
    const visits: Array<[string, string | RegExp, (page: Page) => Promise<unknown>]> = [
      ['/', 'Targets', (p) => p.getByRole('img', { name: /^default\/postgres: restorable from / }).waitFor()],
      ['/targets/default/postgres', 'default/postgres', (p) => p.getByRole('img', { name: /^History of default\/postgres/ }).waitFor()],
      ['/restore?target=default%2Fpostgres&mode=sandbox', 'Restore', (p) => p.getByText('Your role (viewer) cannot restore').waitFor()],
      ['/sandboxes', 'Sandboxes', (p) => p.getByRole('link', { name: sandbox, exact: true }).waitFor()],
      [`/sandboxes/${sandbox}`, sandbox, (p) => p.getByText('need the role restorer').waitFor()],
      ['/restores', 'Restores', (p) => p.getByRole('cell', { name: /^sandbox/ }).first().waitFor()],
      ['/activity', 'Activity', (p) => p.getByRole('heading', { name: 'Backup runs' }).waitFor()],
      ['/settings', 'Settings', (p) => p.getByText('which needs the role restorer-admin').waitFor()],
    ];
    for (const [pathName, heading, loaded] of visits) {
      await open(page, pathName, heading);
      await loaded(page);
      await expect.poll(() => page.getByRole('status').filter({ hasText: /^Loading / }).count(), SOON).toBe(0);
      expect(await offeredControls(page), `controls offered to a viewer on ${pathName}`).toEqual([]);
      expect(await page.getByRole('slider').count(), `a moment picker on ${pathName}`).toBe(0);
      expect(await page.getByRole('textbox', { name: /^(SQL|Resources \(YAML\))$/ }).count()).toBe(0);
      expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).count()).toBe(0);
      await a11y.check(page, `viewer ${pathName}`);
    }
  }, 90_000);

  it('deletes the sandbox from its page, and the lists open meanwhile, the restorer\'s and a viewer\'s, drop it by themselves', async () => {
    const page = pages.restorer!;
    const watching = pages.viewer!;
    /** Whether an open /sandboxes page lists the sandbox (the list is live: no reload). */
    const listed = async (p: Page) => {
      const table = p.getByRole('table', { name: 'Sandboxes' });
      return (await table.count()) === 0 ? 'no list yet' : (await table.getByRole('link', { name: sandbox, exact: true }).count()) > 0 ? 'listed' : 'gone';
    };
    await open(watching, '/sandboxes', 'Sandboxes');
    await expect.poll(() => listed(watching), SOON).toBe('listed');
    await open(page, '/sandboxes', 'Sandboxes');
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: sandbox, exact: true }) });
    await row.getByRole('cell', { name: /^Ready \d/ }).waitFor(); // "Phase and time left": Ready, then the time left
    await record(page, 'sandboxes');

    await row.getByRole('link', { name: sandbox, exact: true }).click();
    await expectHeading(page, sandbox);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('dialog', { name: 'Delete the sandbox?' }).getByRole('button', { name: 'Delete sandbox' }).click();
    await expectHeading(page, 'Sandboxes');
    await page.getByRole('status').filter({ hasText: `Sandbox ${sandbox} is being deleted` }).waitFor();
    // The sandbox service ends it within a pass or two; from then on the API lists it no more, and no page may.
    await waitFor('the API to drop the sandbox', async () => ((await sandboxListed()) ? undefined : true), 30_000);
    sandboxLives = false;
    for (const [who, p] of [['the restorer', page], ['a viewer', watching]] as const) {
      await expect.poll(() => listed(p), { ...SOON, message: `${who}'s open /sandboxes page still lists ${sandbox}, which the API no longer does` }).toBe('gone');
    }
    await page.getByRole('cell', { name: /^No sandbox is running/ }).waitFor();
  }, 90_000);

  it('shows an admin both mistakes of a refused apply, each on its line', async () => {
    const page = await newPage('admin');
    await page.goto(url('/sign-in'));
    await signInByRequest(page, stack.gatewayUrl, people.admin, 'restorer-admin');
    await open(page, '/settings', 'Settings');
    const yaml = [
      'apiVersion: backups.strata.dev/v1alpha1',
      'kind: BackupPolicy',
      'metadata:',
      '  name: hourly',
      '  namespace: default',
      'spec:',
      '  store: local',
      '  full:',
      '    schedule: every hour', // line 9: not a cron expression
      '  retain:',
      '    daily: 7',
      '---',
      'apiVersion: backups.strata.dev/v1alpha1',
      'kind: BackupTarget',
      'metadata:',
      '  name: orders',
      '  namespace: default',
      'spec:', // line 18: no engine under it
      '  endpoint:',
      '    host: 127.0.0.1',
      '    port: 5432',
      '  credentials:',
      '    secretRef:',
      '      name: postgres-credentials',
      '  policy: hourly',
    ].join('\n');
    await page.getByRole('textbox', { name: 'Resources (YAML)' }).fill(yaml);
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'Nothing was applied: 2 problems' }).waitFor();
    const problems = page.getByRole('list', { name: 'Problems' }).getByRole('listitem');
    expect((await problems.allTextContents()).map((text) => text.replace(/\s+/g, ' ').replace(/Go to line \d+$/, '').trim())).toEqual([
      'Line 9: spec.full.schedule: "every hour" is not a 5-field cron expression (BackupPolicy default/hourly)',
      'Line 18: spec.engine: is required (BackupTarget default/orders)',
    ]);
    // The gutter marks the same two lines, and only those.
    const marks = await page.locator('.set-line-problem').evaluateAll((lines) => lines.map((line) => (line as unknown as { title: string }).title));
    expect(marks).toEqual(['Line 9: problem', 'Line 18: problem']);
    await record(page, 'settings-apply', page.getByRole('list', { name: 'Problems' }));

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Activity', exact: true }).click();
    await expectHeading(page, 'Activity');
    await page.getByRole('heading', { name: 'Backup runs' }).waitFor();
    await record(page, 'activity');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log', exact: true }).click();
    await expectHeading(page, /^Audit/);
    const applied = page.getByRole('row').filter({ hasText: 'applyResources' }).filter({ hasText: people.admin });
    await expect.poll(() => applied.first().textContent(), SOON).toMatch(/invalid/);
    await record(page, 'audit');
  }, 90_000);
});
