import { randomUUID } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { dropPostgresDatabase, uniqueDatabaseName } from '@strata/mover/testing';
import { Accessibility, expectHeading, launchChromium, tabTo } from './dashboard-pages.ts';
import { apiAsViewer, consoleContext, recordPage, screenshotsOf, signInByRequest, slotOf, slotsNamed, Source, strataCli, type TargetView } from './console-pages.ts';
import { startTestStack, type TestStack } from './stack.ts';
import { waitFor } from '../integration/wait.ts';

/**
 * The "done means" on Postgres, in Chromium and the CLI, on one stack: a Postgres database of the test's own is
 * backed up, a Prisma migration adds a column, backfills it and inserts a customer with a planted e-mail address (one
 * transaction), it is backed up again; a viewer ticks the two backups on the target's page with the keyboard and sees
 * the added column, the migrations before and after, the rows per table and the schema diff (either order of the two);
 * the changes along the timeline are the API's, per segment, and name the migration's segment; a restorer opens that
 * segment's "Sample rows" with the keyboard and reads the inserted customer with the e-mail masked and the rest in
 * clear; `strata changes` and `strata previews` say the same. The planted address reaches neither the page nor the CLI.
 * axe-core and screenshots (docs/console/ with UPDATE_SCREENSHOTS=1) on each new view.
 */
const pgAdmin = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const database = uniqueDatabaseName('e2eins');
const MIGRATIONS = ['20261101000000_init', '20261128000000_add_tier'] as const;
const SOON = { timeout: 20_000 };
/** The address the target's mask (`^email$`) must hide: it reaches neither the browser nor the CLI. */
const PLANTED = `katherine.planted-${randomUUID().slice(0, 8)}@example.com`;
const MASKED = "masked (hidden by the target's mask)";
const customers = `${database}.public.customers`;

let stack: TestStack;
let browser: Browser;
let source: Source;
let page: Page;
const strata = strataCli();
const a11y = new Accessibility();
const pageErrors: string[] = [];
let slot: string | undefined;
/** The quickstart's resources (with the store's private key): removed at the end. */
let file: string | undefined;
/** The backups before and after the migration. */
let before: string;
let after: string;
/** The change-log segment that holds the migration, as the API lists it. */
let migration: { name: string; explanation: string; previewRows: number };

const url = (pathName: string) => `${stack.gatewayUrl}/console${pathName}`;

/** SQL on the source database. */
async function onSource(...statements: string[]): Promise<void> {
  const at = new URL(pgAdmin);
  at.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: at.toString() });
  await client.connect();
  try {
    for (const sql of statements) await client.query(sql);
  } finally {
    await client.end();
  }
}

const migrationRow = (n: number, name: string) =>
  `INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES ('0c8f8a4e-0000-4000-8000-00000000000${n}', repeat('d', 64), now(), '${name}', now(), 1)`;

/** A full backup now, watched to its end; its id. */
async function backupNow(reason: string): Promise<string> {
  const known = new Set((await apiAsViewer<{ backups: Array<{ id: string }> }>(stack.gatewayUrl, '/targets/default/postgres/backups')).backups.map((b) => b.id));
  const run = await strata('backup-now', 'default/postgres', '--reason', reason, '--watch', '--timeout', '3m');
  expect(run.code, run.err + run.out).toBe(0);
  const { backups } = await apiAsViewer<{ backups: Array<{ id: string; phase?: string }> }>(stack.gatewayUrl, '/targets/default/postgres/backups');
  const made = backups.find((b) => !known.has(b.id));
  expect(made, JSON.stringify(backups)).toBeDefined();
  return made!.id;
}

/** Audits and photographs the page under `name` (both widths): from its top, or down to `at`. */
const record = (name: string, at?: Locator) => recordPage(page, a11y, name, at);

beforeAll(async () => {
  [stack, browser, source] = await Promise.all([startTestStack(), launchChromium(), Source.create(pgAdmin, database)]);
  await onSource(
    'CREATE TABLE _prisma_migrations (id varchar(36) PRIMARY KEY, checksum varchar(64) NOT NULL, finished_at timestamptz, migration_name varchar(255) NOT NULL, logs text, rolled_back_at timestamptz, started_at timestamptz NOT NULL DEFAULT now(), applied_steps_count integer NOT NULL DEFAULT 0)',
    migrationRow(1, MIGRATIONS[0]),
    'ANALYZE',
  );
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
  await source?.end();
  if (slot) await waitFor(`replication slot ${slot} dropped`, async () => ((await slotsNamed(pgAdmin, slot!, true)).length === 0 ? true : undefined), 30_000);
  await dropPostgresDatabase(pgAdmin, database);
}, 120_000);

describe('the console\'s diff, changes and sample rows in Chromium, and the CLI', () => {
  it('backs up the source, migrates it (a column added and backfilled, a customer inserted, the Prisma migration recorded), and backs it up again', async () => {
    const login = await strata('login', '--server', stack.gatewayUrl, '--email', 'ada.admin@example.test');
    expect(login.code, login.err).toBe(0);
    // The quickstart's resources without its MariaDB target: this test needs one Postgres target only.
    file = path.join(tmpdir(), `${stack.namespace}insight.yaml`);
    const bucket = `${stack.namespace.replace(/_/g, '-')}insight`.replace(/-+$/, '');
    const written = await strata('quickstart', '--stack', stack.stateDir, '--file', file, '--bucket', bucket, '--postgres-databases', database);
    expect(written.code, written.err).toBe(0);
    const documents = (await readFile(file, 'utf8')).split(/^---\n/m);
    const kept = documents.filter((doc) => !/^ {2}name: mariadb(-credentials)?$/m.test(doc));
    expect(documents.length - kept.length).toBe(2);
    await writeFile(file, kept.join('---\n'), { mode: 0o600 });
    const applied = await strata('apply', '-f', file);
    expect(applied.code, applied.err + applied.out).toBe(0);
    const resource = await strata('get', 'resource', 'BackupTarget', 'default/postgres', '-o', 'json');
    slot = slotOf(JSON.parse(resource.out).metadata.uid);
    await waitFor('change capture of default/postgres', async () => ((await apiAsViewer<{ target: TargetView }>(stack.gatewayUrl, '/targets/default/postgres')).target.pitr ? true : undefined), 60_000);

    before = await backupNow('before the migration');
    // Kept against retention: the policy keeps one backup a day, and the next one is of the same day.
    const pinned = await strata('pin', before, '--reason', 'compared in the console e2e');
    expect(pinned.code, pinned.err).toBe(0);
    const began = new Date(Date.now() - 60_000).toISOString();
    // One transaction, so one segment holds it all (the target cuts partial segments every 10 s): the column, its
    // backfill, a customer inserted with a planted address, the migration's row.
    await onSource(
      'BEGIN',
      "ALTER TABLE customers ADD COLUMN tier text NOT NULL DEFAULT 'free'",
      "UPDATE customers SET tier = 'pro' WHERE id = 2",
      `INSERT INTO customers (id, name, email, tier) VALUES (3, 'Katherine Johnson', '${PLANTED}', 'pro')`,
      migrationRow(2, MIGRATIONS[1]),
      'COMMIT',
      'ANALYZE',
    );
    after = await backupNow('after the migration');
    // The backup ends the WAL segment; its complete upload carries the previews of the whole segment.
    type Listed = { name: string; partial?: boolean; explanation?: string; previewsKey?: string; previewRows?: number; tables?: Record<string, { inserts?: number; updates?: number }> };
    const found = await waitFor('the migration\'s segment, complete, with its previews', async () => {
      const { segments } = await apiAsViewer<{ segments: Listed[] }>(stack.gatewayUrl, `/targets/default/postgres/changes?since=${encodeURIComponent(began)}`);
      return segments.find((s) => !s.partial && s.previewsKey && s.tables?.[customers]?.inserts === 1 && s.tables[customers].updates === 1);
    }, 120_000);
    // A row each: the customer inserted, the one backfilled, the migration's row.
    expect(found.previewRows).toBe(3);
    expect(found.explanation).toContain(`1 insert into ${database}.customers`);
    migration = { name: found.name, explanation: found.explanation!, previewRows: found.previewRows! };
  }, 480_000);

  it('compares the two backups from the target\'s page with the keyboard: the added column, the migrations, the schema diff', async () => {
    page = await (await consoleContext(browser)).newPage();
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(url('/sign-in'));
    await signInByRequest(page, stack.gatewayUrl, 'victor.viewer@example.test', 'viewer');
    await page.goto(url('/targets/default/postgres'));
    await expectHeading(page, 'default/postgres');
    const backups = page.getByRole('region', { name: 'Backups (scrolls sideways)' });
    for (const id of [after, before]) {
      const box = backups.getByRole('row').filter({ hasText: id }).getByRole('checkbox', { name: /^Compare the backup of / });
      await box.waitFor();
      await tabTo(page, box, { limit: 120 });
      await page.keyboard.press('Space');
      await expect.poll(() => box.isChecked()).toBe(true);
    }
    await page.getByText('Two backups ticked.').waitFor();
    await record('target-compare', backups);
    const compare = page.getByRole('button', { name: 'Compare backups', exact: true });
    await tabTo(page, compare, { limit: 120, backwards: true });
    await page.keyboard.press('Enter');
    await expectHeading(page, 'Compare backups');
    await page.getByRole('heading', { name: 'Column changes', level: 2 }).waitFor();

    const facts = async () => (await page.locator('.facts').textContent())!.replace(/\s+/g, ' ');
    expect(await facts()).toContain(`From (older)`);
    expect(await facts()).toContain(before);
    expect(await facts()).toContain(`Schemachanged`);
    expect(await facts()).toContain(`Migration${MIGRATIONS[0]} → ${MIGRATIONS[1]}`);
    expect(await page.getByRole('region', { name: 'Migrations applied' }).getByRole('listitem').allTextContents()).toEqual([MIGRATIONS[1]]);
    const columns = page.getByRole('table', { name: 'Column changes' });
    const added = columns.getByRole('row').filter({ hasText: 'Columns added' });
    expect(await added.getByRole('rowheader').textContent()).toBe(`${database}.public.customers`);
    expect(await added.getByRole('cell').allTextContents()).toEqual(['Columns added', 'tier']);
    const migrationsRow = page.getByRole('table', { name: 'Rows per table' }).getByRole('row').filter({ has: page.getByRole('rowheader', { name: `${database}.public._prisma_migrations`, exact: true }) });
    // Rows before and after: estimates (the quickstart counts no rows exactly), marked with ≈, right after ANALYZE.
    expect((await migrationsRow.getByRole('cell').allTextContents()).slice(0, 2)).toEqual([expect.stringMatching(/^(≈ )?1$/), expect.stringMatching(/^(≈ )?2$/)]);
    const schema = page.getByRole('region', { name: 'Schema diff (scrolls sideways)' });
    expect(await schema.locator('ins').allTextContents()).toContainEqual(expect.stringMatching(/^\+\s+tier text NOT NULL DEFAULT 'free'/));
    await record('backup-diff');
    await record('backup-diff-schema', schema);
    // The change log between the two: the segment of the migration names the update to customers.
    const between = page.getByRole('region', { name: 'Change log between them' });
    await expect.poll(() => between.textContent(), SOON).toContain(`1 update to ${database}.customers`);
    await screenshotsOf(page, 'backup-diff-segments', between);

    // The other order gives the same diff: the API puts the older backup first.
    await page.goto(url(`/targets/default/postgres/diff/${before}/${after}`));
    await expectHeading(page, 'Compare backups');
    await page.getByRole('heading', { name: 'Column changes', level: 2 }).waitFor();
    expect((await page.locator('.facts dd').first().textContent())!).toContain(before);
  }, 120_000);

  it('shows the changes along the timeline, per segment', async () => {
    await page.goto(url('/targets/default/postgres'));
    await expectHeading(page, 'default/postgres');
    const section = page.locator('section[aria-labelledby="changes-heading"]');
    await page.getByRole('heading', { name: 'Changes', exact: true, level: 2 }).waitFor();
    // The migration's segment: its sentence names the update to customers (Postgres tables without `public.`).
    const table = section.getByRole('table', { name: 'Changes by segment' });
    await expect.poll(() => table.textContent(), SOON).toContain(`1 update to ${database}.customers`);
    const row = table.getByRole('row').filter({ hasText: `1 update to ${database}.customers` }).first();
    await tabTo(page, row.getByRole('button', { name: /^Details of the changes at / }), { limit: 120 });
    await page.keyboard.press('Enter');
    const counts = section.getByRole('table', { name: /^Tables changed at / }).first();
    const cells = async (table: string) => counts.getByRole('row').filter({ has: page.getByRole('rowheader', { name: table, exact: true }) }).getByRole('cell').allTextContents();
    await expect.poll(() => cells(customers), SOON).toEqual(['1', '1', '0', '0']);
    expect(await cells(`${database}.public._prisma_migrations`)).toEqual(['1', '0', '0', '0']);
    // That row is the migration's segment: its sentence is the API's, its details name it; a viewer reads how many
    // sample rows it has, not the rows.
    expect(await row.locator('.insight-explanation').textContent()).toBe(migration.explanation);
    expect(await section.getByText(`Segment ${migration.name}`, { exact: true }).count()).toBe(1);
    expect(await row.getByText(`${migration.previewRows} sample rows (the restorer role sees them)`, { exact: true }).count()).toBe(1);
    expect(await row.getByRole('link', { name: /^Sample rows/ }).count()).toBe(0);
    await record('target-changes', section);

    await section.getByRole('link', { name: 'Open these changes on their own page' }).click();
    await expectHeading(page, 'Changes');
    await page.getByRole('heading', { name: 'Change-log segments', level: 2 }).waitFor();
    await page.getByRole('table', { name: 'Change-log segments' }).waitFor();
    await record('changes');
  }, 90_000);

  it('opens the migration\'s "Sample rows" as a restorer with the keyboard: the inserted customer\'s e-mail masked, the rest in clear', async () => {
    const viewer = page;
    page = await (await consoleContext(browser)).newPage();
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await viewer.context().close();
    await page.goto(url('/sign-in'));
    await signInByRequest(page, stack.gatewayUrl, 'rita.restorer@example.test', 'restorer');
    await page.goto(url('/targets/default/postgres'));
    await expectHeading(page, 'default/postgres');
    const section = page.locator('section[aria-labelledby="changes-heading"]');
    const row = section.getByRole('table', { name: 'Changes by segment' }).getByRole('row').filter({ has: page.getByText(migration.explanation, { exact: true }) });
    const link = row.getByRole('link', { name: new RegExp(`^Sample rows \\(${migration.previewRows}\\) of the changes at `) });
    await expect.poll(() => link.count(), SOON).toBe(1);
    await record('postgres-previews-changes', section);
    await tabTo(page, link, { limit: 150 });
    await page.keyboard.press('Enter');

    await expectHeading(page, 'Sample rows');
    expect(await page.getByText(`default/postgres, change-log segment ${migration.name}`).count()).toBe(1);
    await page.getByRole('heading', { name: customers, level: 2 }).waitFor();
    const inserted = page.getByRole('region', { name: customers, exact: true }).getByRole('table', { name: `Inserted rows of ${customers}` });
    expect(await inserted.locator('thead th').allTextContents()).toEqual(['id', 'name', 'email', 'tier']);
    expect((await inserted.locator('tbody tr').first().locator('td').allTextContents()).map((t) => t.trim())).toEqual(['3', 'Katherine Johnson', MASKED, 'pro']);
    expect(await inserted.locator('tbody tr').count()).toBe(1);
    expect(await inserted.locator('.preview-masked').count()).toBe(1);
    // The migration's own row is a sample too, under its table.
    await page.getByRole('table', { name: `Inserted rows of ${database}.public._prisma_migrations` }).getByText(MIGRATIONS[1], { exact: true }).waitFor();
    // No address of the table is anywhere in the page, not even hidden (the backfilled row's e-mail is masked too).
    const html = await page.content();
    expect(html).not.toContain(PLANTED);
    expect(html).not.toContain('@example.com');
    // The backfill's old row, which Postgres did not log (REPLICA IDENTITY DEFAULT): "not logged", never NULL nor changed.
    const updated = page.getByRole('table', { name: `Updated rows of ${customers}` });
    const beforeRow = updated.locator('tbody tr').first();
    expect(await beforeRow.locator('.preview-unknown').count()).toBe(4);
    expect(await beforeRow.locator('.preview-null, del').count()).toBe(0);
    await page.getByText('REPLICA IDENTITY FULL').first().waitFor();
    // Photographed down to the customers' updated rows: the backfill, whose old row Postgres did not log.
    await record('postgres-previews-rows', page.getByRole('table', { name: `Updated rows of ${customers}` }));
  }, 90_000);

  it('says the same in the CLI: the migration\'s segment in `strata changes`, its masked sample rows in `strata previews`', async () => {
    const changes = await strata('changes', 'postgres', '--since', '1h');
    expect(changes.code, changes.err).toBe(0);
    const line = changes.out.split('\n').find((l) => l.includes(migration.name));
    expect(line, changes.out).toBeDefined();
    expect(line!.endsWith(migration.explanation), changes.out).toBe(true);

    const previews = await strata('previews', 'postgres', migration.name);
    expect(previews.code, previews.err).toBe(0);
    expect(previews.out).toContain(`Previews of segment ${migration.name} (masked columns show ***):`);
    const rowsOf = (table: string) => previews.out.split(`\n${table}\n`)[1]?.split('\n\n')[0]?.split('\n').map((l) => l.trim()).filter(Boolean) ?? [];
    // Default REPLICA IDENTITY: Postgres logs no old row for the backfill, and the CLI says so.
    expect(rowsOf(customers), previews.out).toEqual([
      "insert  id='3' name='Katherine Johnson' email=*** tier='pro'",
      "update  id='2' name='Grace Hopper' email=*** tier='pro'  (old row not logged; REPLICA IDENTITY FULL logs it)",
    ]);
    expect(previews.out).not.toContain(PLANTED);
    expect(previews.out).not.toContain('@example.com');
  }, 60_000);
});
