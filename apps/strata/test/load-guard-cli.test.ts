// `strata backup-now --skip-load-guard`: the CLI asks the console to run without the policy's load guard.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { json, runStrata, startFake, writeLogin, type Fake } from './fake-console.ts';

let fake: Fake;
let dir: string;

beforeEach(async () => {
  fake = await startFake();
  dir = await mkdtemp(path.join(os.tmpdir(), 'strata-cli-lg-'));
  await writeLogin(path.join(dir, 'config.json'), fake.url, 'tok');
  fake.routes.set('POST /api/v1/targets/prod/orders/backup-now', json(202, { message: 'Backup orders-1 of prod/orders requested.', kind: 'Backup', namespace: 'prod', name: 'orders-1' }));
});

afterEach(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

const run = (args: string[]) => runStrata(args, { home: dir, configFile: path.join(dir, 'config.json') });

it('sends skipLoadGuard=true with --skip-load-guard, and nothing without it', async () => {
  let r = await run(['backup-now', 'prod/orders', '--skip-load-guard']);
  expect(r.code, r.stderr).toBe(0);
  expect(fake.requests.at(-1)?.query.get('skipLoadGuard')).toBe('true');
  r = await run(['backup-now', 'prod/orders']);
  expect(r.code, r.stderr).toBe(0);
  expect(fake.requests.at(-1)?.query.has('skipLoadGuard')).toBe(false);
});
