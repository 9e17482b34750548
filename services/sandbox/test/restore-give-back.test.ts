// A sandbox that will not get its restore gives it back: the catalog is told through its internal route (here a loopback
// server answering the contract as the catalog does: only a Pending restore fails, anything else is 409), every give-back
// is logged with the sandbox and restore names, and a catalog that cannot be reached or fails is told on a later pass.
// The same catalog plans the sandboxes asked for through the app (POST /api/v1/sandboxes).
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createStrataTestAuth, freshTestDatabase, silentLogger, strataPrincipal, type StrataTestAuth } from '@sigil/kit/testing';
import type { Logger } from '@sigil/kit/log';
import { INTERNAL_CATALOG_PREFIX, type PrepareSandboxRestore, type SandboxRestorePlan } from '@sigil/proto/internal-catalog';
import { createApp } from '../src/app.ts';
import { createCatalogClient, type CatalogClient } from '../src/catalog-client.ts';
import { createDb, type Db } from '../src/db.ts';
import { createReconciler } from '../src/reconciler.ts';
import { createLocalRuntime } from '../src/runtime/local.ts';
import { createSandboxService } from '../src/sandboxes.ts';
import { serve } from './testing.ts';

const migrationsDir = path.resolve(import.meta.dirname, '../../../prisma/sandbox/migrations');
const secretsKey = Buffer.alloc(32, 9);
const restorer = strataPrincipal('restorer');

let db: Db;
let auth: StrataTestAuth;
let baseDir: string;
let catalogServer: { url: string; close(): Promise<void> };
let closedUrl: string;
let now: Date;
const clock = () => now;

/** The catalog's side: each prepared restore's phase and the reason it failed. */
const restores = new Map<string, { phase: string; message?: string }>();
/** Whether the catalog answers starts and fails with a 500 (it plans all the same). */
let catalogFails = false;
/** What the next plan says: PostgreSQL 99 has no server binaries here, so its sandbox cannot start. */
let planned: { major: number; maxTTL?: string };
/** Runs while the catalog plans (a sandbox changing meanwhile). */
let duringPrepare: (() => Promise<void>) | undefined;

function planFor(input: PrepareSandboxRestore): SandboxRestorePlan {
  const name = `${input.sandbox.name}-restore-${restores.size + 1}`;
  restores.set(name, { phase: 'Pending' });
  return {
    restore: { namespace: input.sandbox.namespace, name, id: `rst_${restores.size}` },
    backupID: 'bk_1', engine: 'postgres', major: planned.major, serverVersion: `${planned.major}.1`, databases: ['app'], time: '2026-11-20T10:00:00.000Z', backupBytes: 1024,
    target: { namespace: 'default', name: 'pg', mask: [], sandbox: {}, labels: {} }, policy: planned.maxTTL ? { maxTTL: planned.maxTTL } : {}, source: { backupID: 'bk_1' }, message: 'planned',
  };
}

function catalogApp(): express.Express {
  const app = express();
  app.use(express.json());
  app.post(INTERNAL_CATALOG_PREFIX, async (req, res) => {
    await duringPrepare?.();
    res.status(201).json(planFor(req.body as PrepareSandboxRestore));
  });
  app.post(`${INTERNAL_CATALOG_PREFIX}/:ns/:name/:action`, (req, res) => {
    if (catalogFails) return void res.status(500).json({ error: 'The catalog could not answer.' });
    const restore = restores.get(req.params.name);
    if (!restore) return void res.status(404).json({ error: `Sandbox restore ${req.params.ns}/${req.params.name} was not found.` });
    if (restore.phase !== 'Pending') return void res.status(409).json({ error: `Restore ${req.params.name} is ${restore.phase}.` });
    if (req.params.action === 'start') return void (restore.phase = 'Running', res.json({ restoreId: 'rst' }));
    Object.assign(restore, { phase: 'Failed', message: (req.body as { message: string }).message });
    res.json({});
  });
  return app;
}

const catalogAt = (url: string): CatalogClient => createCatalogClient({ baseUrl: url, sign: auth.sign, timeoutMs: 5000 });
const reachable = () => catalogAt(catalogServer.url);
const unreachable = () => catalogAt(closedUrl);
const reconcilerWith = (catalog: CatalogClient, log: Logger) => createReconciler({ db, runtime: createLocalRuntime({ baseDir }), catalog, secretsKey, clock, log });
const serviceWith = (log: Logger) =>
  createSandboxService({ db, catalog: reachable(), secretsKey, clock, cell: '', defaultTtl: '1h', maxTtl: '6h', kick: () => undefined, log });

/** A new Pending sandbox and the name of the restore the catalog prepared for it. */
async function pendingSandbox(): Promise<{ name: string; restore: string }> {
  const { name } = await serviceWith(silentLogger()).create(restorer, { target: 'default/pg', mode: 'sandbox' });
  const row = await db.sandbox.findFirstOrThrow({ where: { name } });
  return { name, restore: row.restoreName };
}

const sandboxRow = (name: string) => db.sandbox.findFirstOrThrow({ where: { name } });

beforeAll(async () => {
  db = createDb(await freshTestDatabase('strata_sandbox_test_give_back', migrationsDir));
  auth = await createStrataTestAuth();
  baseDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbx-give-back-'));
  catalogServer = await serve(catalogApp());
  const closed = http.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => closed.once('listening', resolve));
  closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise((resolve) => closed.close(resolve));
});
afterAll(async () => {
  await catalogServer?.close();
  await db?.$disconnect();
  if (baseDir) fs.rmSync(baseDir, { recursive: true, force: true });
});
beforeEach(() => {
  now = new Date();
  catalogFails = false;
  planned = { major: 99 };
  duringPrepare = undefined;
});

describe('the reconciler', () => {
  it('fails a sandbox whose server cannot start, fails its restore in the catalog and logs both names', async () => {
    const { name, restore } = await pendingSandbox();
    const log = silentLogger();
    const errors = vi.spyOn(log, 'error');
    await reconcilerWith(reachable(), log).pass();
    const row = await sandboxRow(name);
    expect(row).toMatchObject({ phase: 'Failed', message: expect.stringContaining('PostgreSQL 99 server binaries') });
    expect(row.endedAt).not.toBeNull();
    expect(restores.get(restore)).toEqual({ phase: 'Failed', message: row.message });
    expect(errors).toHaveBeenCalledWith(expect.objectContaining({ sandbox: name, restore }), 'the sandbox could not start; its restore is failed');
  });

  it('tells a catalog that could not be reached, or failed, on a later pass; the sandbox ends only then', async () => {
    const { name, restore } = await pendingSandbox();
    const log = silentLogger();
    const warnings = vi.spyOn(log, 'warn');
    await reconcilerWith(unreachable(), log).pass();
    expect(await sandboxRow(name)).toMatchObject({ phase: 'Failed', endedAt: null });
    expect(restores.get(restore)).toEqual({ phase: 'Pending' });
    expect(warnings).toHaveBeenCalledWith(expect.objectContaining({ sandbox: name, restore }), 'the catalog could not be told the sandbox restore failed; the next pass tries again');

    catalogFails = true;
    await reconcilerWith(reachable(), log).pass();
    expect(await sandboxRow(name)).toMatchObject({ phase: 'Failed', endedAt: null });
    expect(restores.get(restore)).toEqual({ phase: 'Pending' });

    catalogFails = false;
    await reconcilerWith(reachable(), log).pass();
    const row = await sandboxRow(name);
    expect(row.endedAt).not.toBeNull();
    expect(restores.get(restore)).toEqual({ phase: 'Failed', message: expect.stringMatching(/^the sandbox could not start: .*PostgreSQL 99/) });
  });

  it('fails the restore of a sandbox that expired before it started, on the next pass when the catalog was down', async () => {
    const { name, restore } = await pendingSandbox();
    now = new Date(now.getTime() + 2 * 3600_000);
    await reconcilerWith(unreachable(), silentLogger()).pass();
    expect(await sandboxRow(name)).toMatchObject({ phase: 'Expired', endedAt: null });
    expect(restores.get(restore)).toEqual({ phase: 'Pending' });
    await reconcilerWith(reachable(), silentLogger()).pass();
    expect((await sandboxRow(name)).endedAt).not.toBeNull();
    expect(restores.get(restore)).toEqual({ phase: 'Failed', message: 'the sandbox expired before it started' });
  });

  it('fails the restore of a sandbox deleted before it started, and leaves a restore that started as it is', async () => {
    const deleted = await pendingSandbox();
    const started = await pendingSandbox();
    restores.set(started.restore, { phase: 'Running' });
    for (const { name } of [deleted, started]) await serviceWith(silentLogger()).remove(name);
    await reconcilerWith(reachable(), silentLogger()).pass();
    for (const { name } of [deleted, started]) expect(await sandboxRow(name)).toMatchObject({ phase: 'Deleted', endedAt: expect.any(Date) });
    expect(restores.get(deleted.restore)).toEqual({ phase: 'Failed', message: `sandbox ${deleted.name} was deleted before its restore started` });
    expect(restores.get(started.restore)).toEqual({ phase: 'Running' });
  });
});

describe('the sandbox use cases', () => {
  it('give back the restore of a sandbox that could not be recorded, and log both names when the catalog fails', async () => {
    planned = { major: 15, maxTTL: 'whenever' };
    const log = silentLogger();
    const [warnings, errors] = [vi.spyOn(log, 'warn'), vi.spyOn(log, 'error')];
    await expect(serviceWith(log).create(restorer, { target: 'default/pg', mode: 'sandbox' })).rejects.toMatchObject({ code: 'validation-failed' });
    const [given] = [...restores].at(-1) as [string, { phase: string }];
    expect(restores.get(given)).toEqual({ phase: 'Failed', message: expect.stringContaining('the sandbox could not be created: policy sandbox.maxTTL') });
    expect(warnings).toHaveBeenCalledWith(expect.objectContaining({ restore: given, sandbox: expect.stringMatching(/^pg-sbx-/) }), 'the sandbox restore was failed in the catalog');

    catalogFails = true;
    await expect(serviceWith(log).create(restorer, { target: 'default/pg', mode: 'sandbox' })).rejects.toMatchObject({ code: 'validation-failed' });
    const [lost] = [...restores].at(-1) as [string, { phase: string }];
    expect(restores.get(lost)).toEqual({ phase: 'Pending' });
    expect(errors).toHaveBeenCalledWith(
      expect.objectContaining({ restore: lost, sandbox: expect.stringMatching(/^pg-sbx-/) }),
      'the catalog could not be told the sandbox restore failed; it stays Pending there',
    );
  });

  it('log both names when a reset cannot give back its restore (the sandbox changed while the catalog planned)', async () => {
    planned = { major: 15 };
    const { name } = await pendingSandbox();
    await db.sandbox.update({ where: { namespace_name: { namespace: 'default', name } }, data: { phase: 'Ready' } });
    duringPrepare = async () => {
      await db.sandbox.update({ where: { namespace_name: { namespace: 'default', name } }, data: { phase: 'Deleting' } });
      catalogFails = true;
    };
    const log = silentLogger();
    const errors = vi.spyOn(log, 'error');
    await expect(serviceWith(log).reset(name, restorer)).rejects.toMatchObject({ code: 'conflict' });
    const [lost] = [...restores].at(-1) as [string, { phase: string }];
    expect(restores.get(lost)).toEqual({ phase: 'Pending' });
    expect(errors).toHaveBeenCalledWith(expect.objectContaining({ sandbox: name, restore: lost }), 'the catalog could not be told the sandbox restore failed; it stays Pending there');
  });
});

describe('POST /api/v1/sandboxes', () => {
  const appWith = async () =>
    (await createApp({ db, catalog: reachable(), secretsKey, clock, cell: '', defaultTtl: '1h', maxTtl: '6h', kick: () => undefined, log: silentLogger(), verifyPrincipal: auth.verify, queryTimeoutMs: 5000 })).app;

  it('creates a sandbox from a request without mode (the contract leaves it optional) or with mode sandbox', async () => {
    const app = await appWith();
    for (const body of [{ target: 'default/pg' }, { target: 'default/pg', mode: 'sandbox' }]) {
      const res = await request(app).post('/api/v1/sandboxes').set(await auth.headers(restorer)).send(body);
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ kind: 'Sandbox', namespace: 'default', name: expect.stringMatching(/^pg-sbx-/) });
      const row = await sandboxRow(res.body.name as string);
      expect(row).toMatchObject({ phase: 'Pending', targetNamespace: 'default', targetName: 'pg', backupId: 'bk_1' });
      expect(restores.get(row.restoreName)).toEqual({ phase: 'Pending' });
    }
  });

  it('refuses another mode, or no target, with a 400 and prepares no restore for it', async () => {
    const app = await appWith();
    const before = restores.size;
    const post = async (body: object) => request(app).post('/api/v1/sandboxes').set(await auth.headers(restorer)).send(body);
    // The contract's `mode: {const: sandbox}` refuses another mode before the handler runs.
    expect(await post({ target: 'default/pg', mode: 'new' })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^body\.mode: /) } });
    // The contract leaves target optional; the sandbox service asks for it.
    expect(await post({ mode: 'sandbox', ttl: '2h' })).toMatchObject({ status: 400, body: { error: 'target: is required, as namespace/name' } });
    expect(restores.size).toBe(before);
  });
});
