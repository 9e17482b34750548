import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { dropMysqlDatabase, uniqueDatabaseName } from '@strata/mover/testing';
import { Accessibility, expectHeading, launchChromium, tabTo } from './dashboard-pages.ts';
import { apiAsViewer, consoleContext, recordPage, signInByRequest, strataCli } from './console-pages.ts';
import { startTestStack, type TestStack } from './stack.ts';
import { waitFor } from '../integration/wait.ts';

/**
 * A segment's masked row previews in the console, in Chromium: the quickstart's MariaDB target (previews on by
 * default, `^email$` masked) streams a database of the test's own; one transaction inserts, updates and deletes
 * customers with planted e-mail addresses; a restorer opens "Sample rows" of that segment from the changes along the
 * target's timeline with the keyboard and reads the rows, the e-mail column masked, SQL NULL apart from the text
 * "NULL", the update's changed value marked; no planted address is anywhere in the page. An unknown segment's page
 * says why it has none. axe-core and screenshots (docs/console/ with UPDATE_SCREENSHOTS=1) on both pages.
 */
const mysqlAdmin = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';
const database = uniqueDatabaseName('e2eprev');
const table = `${database}.customers`;
/** The addresses the mask must hide: none may reach the browser. */
const PLANTED = ['ada.planted-5e1c@example.com', 'grace.planted-5e1c@example.com', 'grace.moved-5e1c@example.com'];
const MASKED = "masked (hidden by the target's mask)";
const SOON = { timeout: 20_000 };

let stack: TestStack;
let browser: Browser;
let page: Page;
const strata = strataCli();
const a11y = new Accessibility();
const pageErrors: string[] = [];
/** The quickstart's resources (with the store's private key): removed at the end. */
let file: string | undefined;

const url = (pathName: string) => `${stack.gatewayUrl}/console${pathName}`;

/** SQL on the test's database, one connection. */
async function onSource(...statements: Array<string | [string, unknown[]]>): Promise<void> {
  const at = new URL(mysqlAdmin);
  at.pathname = `/${database}`;
  const connection = await mysql.createConnection({ uri: at.toString() });
  try {
    for (const statement of statements) await (typeof statement === 'string' ? connection.query(statement) : connection.query(...statement));
  } finally {
    await connection.end();
  }
}

/** The text of each body row's cells (header cells included) of a table. */
async function rowsOf(table: Locator): Promise<string[][]> {
  const rows = table.locator('tbody tr');
  const out: string[][] = [];
  for (let i = 0; i < (await rows.count()); i++) out.push((await rows.nth(i).locator('th, td').allTextContents()).map((t) => t.trim()));
  return out;
}

/** The column headers of a table. */
const headersOf = (table: Locator) => table.locator('thead th').allTextContents();

const record = (name: string, at?: Locator) => recordPage(page, a11y, name, at);

beforeAll(async () => {
  const admin = await mysql.createConnection({ uri: mysqlAdmin });
  await admin.query(`CREATE DATABASE \`${database}\``).finally(() => admin.end());
  await onSource('CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL, email VARCHAR(191) NOT NULL, note TEXT NULL)');
  [stack, browser] = await Promise.all([startTestStack(), launchChromium()]);
}, 240_000);

afterEach(async ({ task }) => {
  if (task.result?.state === 'fail' && page) console.log(`after "${task.name}": ${page.url()}\n${(await page.getByRole('main').ariaSnapshot().catch(String)).slice(-4000)}\nthe stack's logs: ${stack.stateDir}/logs`);
  expect(pageErrors.splice(0), 'uncaught errors in the console').toEqual([]);
});

afterAll(async () => {
  if (a11y.lesser.length > 0) console.log(`axe: moderate or minor violations (not failing the test):\n  ${a11y.lesser.join('\n  ')}`);
  await browser?.close();
  if (file) await rm(file, { force: true });
  await stack?.stop();
  await dropMysqlDatabase(mysqlAdmin, database);
}, 120_000);

describe('a segment\'s masked sample rows in the console', () => {
  it('streams the MariaDB target and captures one transaction\'s inserts, update and delete with previews', async () => {
    const login = await strata('login', '--server', stack.gatewayUrl, '--email', 'ada.admin@example.test');
    expect(login.code, login.err).toBe(0);
    // The quickstart's resources without its Postgres target: this test needs the MariaDB one only.
    file = path.join(tmpdir(), `${stack.namespace}previews.yaml`);
    const bucket = `${stack.namespace.replace(/_/g, '-')}previews`.replace(/-+$/, '');
    const written = await strata('quickstart', '--stack', stack.stateDir, '--file', file, '--bucket', bucket, '--mysql-databases', database);
    expect(written.code, written.err).toBe(0);
    const documents = (await readFile(file, 'utf8')).split(/^---\n/m);
    const kept = documents.filter((doc) => !/^ {2}name: postgres(-credentials)?$/m.test(doc));
    expect(documents.length - kept.length).toBe(2);
    expect(kept.join('')).toMatch(/mask:\n\s+- \^email\$/);
    await writeFile(file, kept.join('---\n'), { mode: 0o600 });
    const applied = await strata('apply', '-f', file);
    expect(applied.code, applied.err + applied.out).toBe(0);
    // The binlog streamer runs before the transaction, or the segment would not hold it.
    await waitFor('the MariaDB streamer', async () => {
      const resource = await strata('get', 'resource', 'BackupTarget', 'default/mariadb', '-o', 'json');
      return JSON.parse(resource.out).status?.pitr?.streamerReady ? true : undefined;
    }, 90_000);

    const began = new Date(Date.now() - 60_000).toISOString();
    // One transaction: one segment holds it all. Row 2's note is the text "NULL", row 1's is SQL NULL.
    await onSource(
      'START TRANSACTION',
      ['INSERT INTO customers VALUES (1, ?, ?, NULL), (2, ?, ?, ?)', ['Ada Lovelace', PLANTED[0], 'Grace Hopper', PLANTED[1], 'NULL']],
      ['UPDATE customers SET name = ?, email = ? WHERE id = 2', ['Grace B. Hopper', PLANTED[2]]],
      'DELETE FROM customers WHERE id = 1',
      'COMMIT',
    );
    // The streamer cuts every 10 s (the quickstart's partialInterval): the segment and its previews follow.
    const segment = await waitFor('a segment with the transaction and its previews', async () => {
      const { segments } = await apiAsViewer<{ segments: Array<{ name: string; previewsKey?: string; previewRows?: number; tables?: Record<string, { deletes?: number }> }> }>(
        stack.gatewayUrl,
        `/targets/default/mariadb/changes?since=${encodeURIComponent(began)}`,
      );
      return segments.find((s) => s.tables?.[table]?.deletes === 1 && s.previewsKey);
    }, 90_000);
    expect(segment.previewRows).toBe(4);
  }, 300_000);

  it('opens "Sample rows" from the changes along the timeline with the keyboard: e-mail masked, the rest shown', async () => {
    page = await (await consoleContext(browser)).newPage();
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(url('/sign-in'));
    await signInByRequest(page, stack.gatewayUrl, 'rita.restorer@example.test', 'restorer');
    await page.goto(url('/targets/default/mariadb'));
    await expectHeading(page, 'default/mariadb');
    const section = page.locator('section[aria-labelledby="changes-heading"]');
    const changes = section.getByRole('table', { name: 'Changes by segment' });
    const row = changes.getByRole('row').filter({ hasText: `${database}.customers` }).first();
    const link = row.getByRole('link', { name: /^Sample rows \(4\) of the changes at / });
    await expect.poll(() => link.count(), SOON).toBe(1);
    expect(await link.textContent()).toBe('Sample rows (4)');
    await record('target-changes-previews', section);
    await tabTo(page, link, { limit: 150 });
    await page.keyboard.press('Enter');

    await expectHeading(page, 'Sample rows');
    const customers = page.getByRole('region', { name: table, exact: true });
    await page.getByRole('heading', { name: table, level: 2 }).waitFor();
    const inserted = customers.getByRole('table', { name: `Inserted rows of ${table}` });
    expect(await headersOf(inserted)).toEqual(['id', 'name', 'email', 'note']);
    expect(await rowsOf(inserted)).toEqual([
      ['1', 'Ada Lovelace', MASKED, 'SQL NULL'],
      ['2', 'Grace Hopper', MASKED, 'NULL'],
    ]);
    // SQL NULL and the text "NULL" differ on the screen too: a marked value against plain text.
    expect(await inserted.locator('tbody tr').nth(0).locator('.preview-null').count()).toBe(1);
    expect(await inserted.locator('tbody tr').nth(1).locator('.preview-null').count()).toBe(0);
    const updated = customers.getByRole('table', { name: `Updated rows of ${table}` });
    expect(await headersOf(updated)).toEqual(['Update', 'id', 'name', 'email', 'note']);
    expect(await rowsOf(updated)).toEqual([
      ['1 before', '2', 'Grace Hopper (changed by the update)', MASKED, 'NULL'],
      ['1 after', '2', 'Grace B. Hopper (the new value)', MASKED, 'NULL'],
    ]);
    expect(await updated.locator('ins').allTextContents()).toEqual(['Grace B. Hopper']);
    expect(await updated.locator('del').allTextContents()).toEqual(['Grace Hopper']);
    const deleted = customers.getByRole('table', { name: `Deleted rows of ${table}` });
    expect(await rowsOf(deleted)).toEqual([['1', 'Ada Lovelace', MASKED, 'SQL NULL']]);
    // Every e-mail cell is masked, and no planted address is anywhere in the page (not even hidden).
    expect(await customers.locator('.preview-masked').count()).toBe(5);
    const html = await page.content();
    expect(PLANTED.filter((address) => html.includes(address))).toEqual([]);
    expect(html).not.toContain('@example.com');
    await record('segment-previews');

    // The breadcrumb leads back to the target's changes.
    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Changes', exact: true }).click();
    await expectHeading(page, 'Changes');
    await page.getByRole('table', { name: 'Change-log segments' }).getByRole('link', { name: /^Sample rows \(4\) of the changes at / }).waitFor();
  }, 120_000);

  it('says why a segment has no sample rows, in the API\'s words', async () => {
    await page.goto(url('/targets/default/mariadb/segments/mariadb-bin.999999/previews'));
    await expectHeading(page, 'Sample rows');
    const none = page.getByRole('region', { name: 'No sample rows for this segment' });
    await expect.poll(() => none.textContent(), SOON).toContain('Segment mariadb-bin.999999 of target default/mariadb was not found');
    expect(await page.getByRole('alert').count()).toBe(0);
    await record('segment-previews-none');
  }, 60_000);
});
