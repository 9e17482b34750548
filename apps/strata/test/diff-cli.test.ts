// `strata diff <backup> <other>`: the summary and schema lines of the console's DiffResult, JSON as answered, errors.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { json, runStrata, startFake, writeLogin, type Fake } from './fake-console.ts';

let fake: Fake;
let dir: string;

const RESULT = {
  from: { id: 'b1', time: '2026-03-01T03:00:00Z' },
  to: { id: 'b2', time: '2026-03-02T03:00:00Z' },
  segments: [{ name: '000000010000000000000003' }, { name: '000000010000000000000004' }],
  diff: {
    schemaChanged: true,
    databasesAdded: [],
    databasesDropped: [],
    tablesAdded: ['app.public.invoices'],
    tablesDropped: [],
    tablesRenamed: [{ from: 'app.public.scratch', to: 'app.public.scratch_archive', matchedBy: 'identity' }],
    columns: [{ table: 'app.public.customers', added: ['tier'], removed: [], typeChanged: ['score: integer → bigint'], nullabilityChanged: [], defaultChanged: [], indexAdded: [], indexDropped: [] }],
    rows: [{ table: 'app.public.customers', rowsBefore: 100, rowsAfter: 150, sizeBefore: 8192, sizeAfter: 16384, rowsPct: 50, estimated: false }],
    sizeBefore: 1048576,
    sizeAfter: 2097152,
    migrationBefore: '20260101_init',
    migrationAfter: '20260301_add_tier',
    migrationsApplied: ['20260301_add_tier'],
    lines: ['--- backup b1', '+++ backup b2', '@@ -1,2 +1,3 @@', ' database app', '   table public.customers', "+    tier text NOT NULL DEFAULT 'free'::text"],
  },
};

beforeEach(async () => {
  fake = await startFake();
  dir = await mkdtemp(path.join(os.tmpdir(), 'strata-cli-diff-'));
  await writeLogin(path.join(dir, 'config.json'), fake.url, 'tok');
});

afterEach(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

const run = (args: string[]) => runStrata(args, { home: dir, configFile: path.join(dir, 'config.json') });

it('prints a summary of the changes and the schema diff, and the DiffResult with --output json', async () => {
  fake.routes.set('GET /api/v1/backups/b2/diff/b1', json(200, RESULT));
  let r = await run(['diff', 'b2', 'b1']);
  expect(r.code, r.stderr).toBe(0);
  expect(fake.requests.at(-1)?.path).toBe('/api/v1/backups/b2/diff/b1');
  expect(r.stdout).toMatch(/^from:\s+b1 \(2026-03-01 03:00:00Z\)$/m);
  expect(r.stdout).toMatch(/^migration:\s+20260101_init → 20260301_add_tier$/m);
  expect(r.stdout).toMatch(/^migrations applied:\s+20260301_add_tier$/m);
  expect(r.stdout).toMatch(/^size:\s+1 MiB → 2 MiB \(\+1 MiB\)$/m);
  expect(r.stdout).toMatch(/^segments between:\s+2 segments$/m);
  expect(r.stdout).toContain('+ table app.public.invoices\n~ table app.public.scratch → app.public.scratch_archive (matched by identity)\n');
  expect(r.stdout).toContain('  app.public.customers\n    added: tier\n    type: score: integer → bigint\n');
  expect(r.stdout).toMatch(/app\.public\.customers\s+100\s+150\s+\+50 \(50%\)\s+8 KiB\s+16 KiB\s+exact/);
  expect(r.stdout).toContain(`${RESULT.diff.lines.join('\n')}\n`);

  r = await run(['diff', 'b2', 'b1', '--output', 'json']);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual(RESULT);
});

it('says so when the schema did not change, and passes on the console error', async () => {
  fake.routes.set('GET /api/v1/backups/b1/diff/b3', json(200, { ...RESULT, diff: { ...RESULT.diff, schemaChanged: false, lines: [], columns: [], rows: [], tablesAdded: [], tablesRenamed: [] } }));
  let r = await run(['diff', 'b1', 'b3']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/^schema:\s+unchanged$/m);
  expect(r.stdout).toContain('\nNo schema changes.\n');
  fake.routes.set('GET /api/v1/backups/b1/diff/x9', json(400, { error: 'Backups b1 (default/orders) and x9 (default/users) are of different targets; a diff compares two backups of one target.' }));
  r = await run(['diff', 'b1', 'x9']);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain('are of different targets');
});
