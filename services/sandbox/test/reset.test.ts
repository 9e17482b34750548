import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freshTestDatabase, silentLogger, strataPrincipal } from '@sigil/kit/testing';
import type { PrepareSandboxRestore, SandboxRestorePlan } from '@sigil/proto/internal-catalog';
import type { CatalogClient } from '../src/catalog-client.ts';
import { createDb, type Db } from '../src/db.ts';
import { createReconciler } from '../src/reconciler.ts';
import type { RuntimeState, SandboxRuntime, ServerSpec } from '../src/runtime/types.ts';
import { createSandboxService } from '../src/sandboxes.ts';

/** Resets with a catalog and a runtime that record what they are asked, on the service's real database. */
const migrationsDir = path.resolve(import.meta.dirname, '../../../prisma/sandbox/migrations');
const secretsKey = Buffer.alloc(32, 7);
const restorer = strataPrincipal('restorer');

let db: Db;
let calls: string[];
let prepared: PrepareSandboxRestore[];
let source: SandboxRestorePlan['source'];
let duringPrepare: (() => Promise<void>) | undefined;

function planFor(input: PrepareSandboxRestore): SandboxRestorePlan {
  const n = prepared.length;
  return {
    restore: { namespace: 'default', name: `${input.sandbox.name}-restore-${n}`, id: `rst_${n}` },
    backupID: 'bk_1', engine: 'postgres', major: 15, serverVersion: '15.4', databases: ['app'], time: '2026-11-20T10:00:00.000Z', backupBytes: 1024,
    target: { namespace: 'default', name: 'pg', mask: [], sandbox: {}, labels: {} }, policy: {}, source, message: 'planned',
  };
}

const catalog: CatalogClient = {
  async prepare(_principal, input) {
    prepared.push(input);
    await duringPrepare?.();
    return planFor(input);
  },
  async start(_namespace, name) {
    calls.push(`catalog.start ${name}`);
    return { restoreId: 'x' };
  },
  async fail(_namespace, name, message) {
    calls.push(`catalog.fail ${name}: ${message}`);
  },
};

let servers = 0;
const runtime: SandboxRuntime = {
  kind: 'local',
  async start(spec: ServerSpec, previous?: RuntimeState) {
    calls.push(`runtime.start ${previous ? previous.dir : 'new'}`);
    return previous ?? { engine: spec.engine, dir: `/sandboxes/${spec.id}/${++servers}`, host: '127.0.0.1', port: 40_000 + servers };
  },
  alive: async () => true,
  stop: async () => undefined,
  async wipe(state) {
    calls.push(`runtime.wipe ${state.dir}`);
  },
  usedBytes: async () => 0,
};

const clock = () => new Date();
const service = () => createSandboxService({ db, catalog, secretsKey, clock, cell: '', defaultTtl: '1h', maxTtl: '6h', kick: () => undefined, log: silentLogger() });
const reconciler = () => createReconciler({ db, runtime, catalog, secretsKey, clock, log: silentLogger() });

/** A sandbox as a restore report leaves it: Ready on its first server (its restore is the first planned, the reset's the second). */
async function readySandbox(): Promise<string> {
  const { name } = await service().create(restorer, { target: 'default/pg', mode: 'sandbox' });
  await reconciler().pass();
  await db.sandbox.update({ where: { namespace_name: { namespace: 'default', name } }, data: { phase: 'Ready' } });
  calls = [];
  return name;
}

beforeAll(async () => {
  db = createDb(await freshTestDatabase('strata_sandbox_test_reset', migrationsDir));
});
afterAll(async () => {
  await db?.$disconnect();
});
beforeEach(() => {
  calls = [];
  prepared = [];
  source = { backupID: 'bk_1' };
  duringPrepare = undefined;
});

describe('resetting a sandbox', () => {
  it('asks the catalog for the same source again, then wipes the old server before starting an empty one', async () => {
    const name = await readySandbox();
    const before = await db.sandbox.findFirstOrThrow({ where: { name } });
    const answer = await service().reset(name, restorer, 'start over');
    expect(answer).toMatchObject({ kind: 'Sandbox', name, message: expect.stringContaining('backup bk_1') });
    expect(prepared.at(-1)).toEqual({ request: { target: 'default/pg', backupID: 'bk_1', reason: 'start over' }, sandbox: { namespace: 'default', name }, requestedBy: 'restorer@example.test' });
    expect(await db.sandbox.findFirstOrThrow({ where: { name } })).toMatchObject({ phase: 'Pending', resetGeneration: 1, observedReset: 0, restoreName: `${name}-restore-2` });

    await reconciler().pass();
    const oldDir = (before.runtime as { dir: string }).dir;
    expect(calls).toEqual([`runtime.wipe ${oldDir}`, 'runtime.start new', `catalog.start ${name}-restore-2`]);
    const after = await db.sandbox.findFirstOrThrow({ where: { name } });
    expect(after).toMatchObject({ phase: 'Restoring', resetGeneration: 1, observedReset: 1, expiresAt: before.expiresAt, sealedPassword: before.sealedPassword });
    expect((after.runtime as { dir: string }).dir).not.toBe(oldDir);
  });

  it('restores a point-in-time sandbox to the same moment, with the same tables', async () => {
    source = { at: '2026-11-20T10:00:00.000Z', tables: ['public.orders'] };
    const name = await readySandbox();
    await service().reset(name, restorer);
    expect(prepared.at(-1)?.request).toEqual({ target: 'default/pg', at: '2026-11-20T10:00:00.000Z', tables: ['public.orders'] });
  });

  it('refuses a sandbox that is not Ready, without planning anything', async () => {
    const { name } = await service().create(restorer, { target: 'default/pg', mode: 'sandbox' });
    prepared = [];
    await expect(service().reset(name, restorer)).rejects.toMatchObject({ code: 'conflict', message: expect.stringMatching(/is Pending; only a Ready sandbox can be reset/) });
    expect(prepared).toEqual([]);
    await expect(service().reset('no-such-sbx', restorer)).rejects.toMatchObject({ code: 'not-found' });
  });

  it('gives back the planned restore when the sandbox changed meanwhile (deleted while the catalog planned)', async () => {
    const name = await readySandbox();
    duringPrepare = async () => void (await db.sandbox.update({ where: { namespace_name: { namespace: 'default', name } }, data: { phase: 'Deleting' } }));
    await expect(service().reset(name, restorer)).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('changed while it was being reset') });
    expect(calls).toEqual([`catalog.fail ${name}-restore-2: sandbox ${name} changed while it was being reset`]);
    expect(await db.sandbox.findFirstOrThrow({ where: { name } })).toMatchObject({ phase: 'Deleting', resetGeneration: 0 });
  });

  it('carries a reset on after a restart between the wipe and its record: the next pass wipes again and starts once', async () => {
    const name = await readySandbox();
    await service().reset(name, restorer);
    const row = await db.sandbox.findFirstOrThrow({ where: { name } });
    const failingOnce: SandboxRuntime = { ...runtime, wipe: async (state) => { calls.push(`runtime.wipe ${state.dir}`); throw new Error('killed mid-wipe'); } };
    await createReconciler({ db, runtime: failingOnce, catalog, secretsKey, clock, log: silentLogger() }).pass();
    expect(await db.sandbox.findFirstOrThrow({ where: { name } })).toMatchObject({ phase: 'Pending', observedReset: 0 });
    await reconciler().pass();
    const dir = (row.runtime as { dir: string }).dir;
    expect(calls).toEqual([`runtime.wipe ${dir}`, `runtime.wipe ${dir}`, 'runtime.start new', `catalog.start ${name}-restore-2`]);
  });
});
