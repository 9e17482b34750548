// `strata previews <target> <segment>`: per table, inserts, updates (before → after) and deletes; JSON as answered.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { json, runStrata, startFake, writeLogin, type Fake } from './fake-console.ts';

let fake: Fake;
let dir: string;

const PREVIEWS = {
  segment: 'mariadb-bin.000004',
  previews: {
    tables: {
      'shop.customers': {
        inserts: [{ id: '1', email: '***', name: 'Ann', note: null }],
        updates: [{ before: { id: '2', email: '***', name: 'Bo', note: null }, after: { id: '2', email: '***', name: 'Bob', note: 'xxxxxxxx…' } }],
        deletes: [{ id: '3', email: '***', name: 'Cy', note: null }],
      },
    },
  },
};

beforeEach(async () => {
  fake = await startFake();
  dir = await mkdtemp(path.join(os.tmpdir(), 'strata-cli-previews-'));
  await writeLogin(path.join(dir, 'config.json'), fake.url, 'tok');
});

afterEach(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

const run = (args: string[]) => runStrata(args, { home: dir, configFile: path.join(dir, 'config.json') });

it('prints each table\'s inserts, updates before → after and deletes, masked columns as ***; JSON as answered', async () => {
  fake.routes.set('GET /api/v1/targets/prod/orders/segments/mariadb-bin.000004/previews', json(200, PREVIEWS));
  let r = await run(['previews', 'prod/orders', 'mariadb-bin.000004']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain('Previews of segment mariadb-bin.000004 (masked columns show ***):\n\nshop.customers\n');
  expect(r.stdout).toContain("  insert  id='1' email=*** name='Ann' note=NULL\n");
  expect(r.stdout).toContain("  update  name: 'Bo' → 'Bob'  note: NULL → 'xxxxxxxx…'  (id='2' email=***)\n");
  expect(r.stdout).toContain("  delete  id='3' email=*** name='Cy' note=NULL\n");

  r = await run(['previews', 'prod/orders', 'mariadb-bin.000004', '--output', 'json']);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual(PREVIEWS);
});

it('renders Postgres updates whose old row is not logged whole (REPLICA IDENTITY DEFAULT): nothing, or only the key', async () => {
  const pg = {
    segment: '000000010000000000000003',
    previews: { tables: { 'shop.public.orders': { inserts: [], updates: [{ before: {}, after: { id: '1', total: '10' } }, { before: { id: '2' }, after: { id: '3', total: '12' } }], deletes: [{ id: '4' }] } } },
  };
  fake.routes.set('GET /api/v1/targets/prod/pg/segments/000000010000000000000003/previews', json(200, pg));
  const r = await run(['previews', 'prod/pg', '000000010000000000000003']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain("  update  id='1' total='10'  (old row not logged; REPLICA IDENTITY FULL logs it)\n");
  expect(r.stdout).toContain("  update  id: '2' → '3'  total: ? → '12'\n");
  expect(r.stdout).toContain("  delete  id='4'\n");
});

it('passes on why a segment has no previews', async () => {
  const why = 'Segment 000000010000000000000003 of target prod/pg has no previews: Postgres previews are made by logical decoding: set previews.logical: true (it keeps a pgoutput slot per database next to the physical one, which retains extra WAL).';
  fake.routes.set('GET /api/v1/targets/prod/pg/segments/000000010000000000000003/previews', json(404, { error: why }));
  const r = await run(['previews', 'prod/pg', '000000010000000000000003']);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain('set previews.logical: true');
});
