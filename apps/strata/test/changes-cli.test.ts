// `strata changes <target>`: one line per segment (time, commits, explanation), totals by table, JSON as answered.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { json, runStrata, startFake, writeLogin, type Fake } from './fake-console.ts';

let fake: Fake;
let dir: string;

const SUMMARY = {
  target: 'prod/orders',
  since: '2026-03-01T10:00:00.000Z',
  at: '2026-03-01T12:00:00.000Z',
  tables: { 'shop.customers': { inserts: 0, updates: 1204, deletes: 0, truncates: 0 }, 'shop.orders': { inserts: 12, updates: 0, deletes: 2, truncates: 0 } },
  segments: [
    { name: 'mariadb-bin.000004', partial: false, commits: 3, lastTime: '2026-03-01T10:15:02Z', explanation: 'ALTER TABLE customers ADD COLUMN tier TEXT; 1,204 updates to shop.customers', ddl: ['ALTER TABLE customers ADD COLUMN tier TEXT'], tables: { 'shop.customers': { inserts: 0, updates: 1204, deletes: 0, truncates: 0 } } },
    { name: 'mariadb-bin.000005', partial: true, commits: 1204, lastTime: '2026-03-01T11:59:58Z', explanation: '12 inserts into shop.orders; 2 deletes from shop.orders', ddl: [], tables: { 'shop.orders': { inserts: 12, updates: 0, deletes: 2, truncates: 0 } } },
    { name: 'mariadb-bin.000006', partial: true, commits: 0, uploadedAt: '2026-03-01T11:59:59Z', summaryError: 'the change summary could not be made: connection refused', ddl: [], tables: {} },
  ],
};

beforeEach(async () => {
  fake = await startFake();
  dir = await mkdtemp(path.join(os.tmpdir(), 'strata-cli-changes-'));
  await writeLogin(path.join(dir, 'config.json'), fake.url, 'tok');
});

afterEach(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

const run = (args: string[]) => runStrata(args, { home: dir, configFile: path.join(dir, 'config.json') });

it('prints each segment with its time, commits and explanation, then the totals by table; JSON as answered', async () => {
  fake.routes.set('GET /api/v1/targets/prod/orders/changes', json(200, SUMMARY));
  let r = await run(['changes', 'prod/orders', '--since', '2h']);
  expect(r.code, r.stderr).toBe(0);
  expect(fake.requests.at(-1)?.query.get('since')).toBe('2h');
  expect(r.stdout).toContain('Changes of prod/orders from 2026-03-01 10:00:00Z to 2026-03-01 12:00:00Z:\n');
  expect(r.stdout).toMatch(/^2026-03-01 10:15:02Z\s+3\s+mariadb-bin\.000004\s+ALTER TABLE customers ADD COLUMN tier TEXT; 1,204 updates to shop\.customers$/m);
  expect(r.stdout).toMatch(/^2026-03-01 11:59:58Z\s+1,204\s+mariadb-bin\.000005 \(partial\)\s+12 inserts into shop\.orders; 2 deletes from shop\.orders$/m);
  expect(r.stdout).toMatch(/^2026-03-01 11:59:59Z\s+0\s+mariadb-bin\.000006 \(partial\)\s+no summary: the change summary could not be made: connection refused$/m);
  expect(r.stdout).toMatch(/^shop\.customers\s+0\s+1,204\s+0\s+0$/m);
  expect(r.stdout).toMatch(/^shop\.orders\s+12\s+0\s+2\s+0$/m);

  r = await run(['changes', 'prod/orders', '--since', '2026-03-01T10:00:00Z', '--until', '2026-03-01T12:00:00Z', '--output', 'json']);
  expect(r.code, r.stderr).toBe(0);
  expect(fake.requests.at(-1)?.query.get('until')).toBe('2026-03-01T12:00:00Z');
  expect(JSON.parse(r.stdout)).toEqual(SUMMARY);
});

it('refuses a --since that is neither a duration nor a time before asking, and passes on the console error', async () => {
  let r = await run(['changes', 'prod/orders', '--since', 'yesterday']);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain('expected a duration before now such as 2h or 7d');
  expect(fake.requests).toHaveLength(0);
  fake.routes.set('GET /api/v1/targets/prod/missing/changes', json(404, { error: 'Target prod/missing does not exist.' }));
  r = await run(['changes', 'prod/missing']);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain('Target prod/missing does not exist.');
});
