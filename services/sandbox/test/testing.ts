import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Express } from 'express';
import request from 'supertest';
import { connectBus, startOutboxRelay, type Bus, type RunningConsumer } from '@sigil/kit/bus';
import { freshTestDatabase, silentLogger, strataPrincipal, testNatsUrl, type StrataTestAuth } from '@sigil/kit/testing';
import type { StrataRole } from '@sigil/proto/strata';
import { createApp } from '../src/app.ts';
import { closeQueryPools } from '../src/query/index.ts';
import { createCatalogClient, type CatalogClient } from '../src/catalog-client.ts';
import { createDb, type Db } from '../src/db.ts';
import { createReconciler, type Reconciler } from '../src/reconciler.ts';
import type { TellConsole } from '../src/console-events.ts';
import { startRestoreReportConsumer } from '../src/restore-reports.ts';
import { startSandboxJobConsumer } from '../src/jobs.ts';
import { createLocalRuntime } from '../src/runtime/local.ts';
import type { SandboxRuntime } from '../src/runtime/types.ts';
import type { sandboxView } from '../src/views.ts';
import { strataConsoleSubject } from '@sigil/proto/strata-jobs';

export type SandboxView = ReturnType<typeof sandboxView>;

const migrationsDir = path.resolve(import.meta.dirname, '../../../prisma/sandbox/migrations');

export interface SandboxHarness {
  app: Express;
  db: Db;
  bus: Bus;
  runtime: SandboxRuntime;
  reconciler: Reconciler;
  baseDir: string;
  databaseUrl: string;
  secretsKey: Buffer;
  /** Moves the service's clock (expiry); undefined goes back to the wall clock. */
  setNow(at: Date | undefined): void;
  call(role: StrataRole, method: 'get' | 'post' | 'delete', url: string, body?: unknown, accept?: string): Promise<request.Response>;
  /** Drives the reconciler until the sandbox is in one of `phases` (`Gone`: it answers 404); answers its view. */
  untilPhase(name: string, phases: string[], timeoutMs?: number): Promise<SandboxView>;
  /** Stops the service's moving parts but leaves its servers and database: a restart picks them up. */
  stop(): Promise<void>;
  /** Deletes every sandbox's server and data. */
  close(): Promise<void>;
}

/**
 * The sandbox service in this process: its app, reconciler (driven by the test with `reconciler.pass()`) and report
 * consumer, on a database of its own, talking to a catalog over HTTP as the deployment would.
 */
export async function startSandboxHarness(options: {
  name: string;
  auth: StrataTestAuth;
  catalogUrl?: string;
  catalog?: CatalogClient;
  cell: string;
  secretsKey?: Buffer;
  databaseUrl?: string;
  baseDir?: string;
  maxTtl?: string;
}): Promise<SandboxHarness> {
  const databaseUrl = options.databaseUrl ?? (await freshTestDatabase(`strata_sandbox_test_${options.name}`, migrationsDir));
  const baseDir = options.baseDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'sbx-test-'));
  const db = createDb(databaseUrl);
  const bus = await connectBus(testNatsUrl(), `sandbox-test-${options.name}`);
  const log = silentLogger();
  const relay = await startOutboxRelay({ databaseUrl, bus, log, pollIntervalMs: 200 });
  const secretsKey = options.secretsKey ?? randomBytes(32);
  let now: Date | undefined;
  const clock = () => now ?? new Date();
  const catalog = options.catalog ?? createCatalogClient({ baseUrl: options.catalogUrl as string, sign: options.auth.sign });
  const runtime = createLocalRuntime({ baseDir });
  const notify: TellConsole = (event) => bus.notify(strataConsoleSubject(options.cell), event);
  const reconciler = createReconciler({ db, runtime, catalog, secretsKey, clock, log, notify });
  const kick = () => undefined;
  const reports: RunningConsumer = await startRestoreReportConsumer({ db, secretsKey, clock, log, cell: options.cell, kick, notify }, bus);
  const { app, sandboxes } = await createApp({
    db, log, catalog, secretsKey, clock, cell: options.cell, defaultTtl: '1h', maxTtl: options.maxTtl ?? '6h', kick, notify, queryTimeoutMs: 5000, verifyPrincipal: options.auth.verify,
  });
  const jobs = await startSandboxJobConsumer({ bus, log, secretsKey, cell: options.cell, sandboxes });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await jobs.stop();
    await reports.stop();
    await relay.stop();
    await bus.close();
    await db.$disconnect();
  };
  return {
    app, db, bus, runtime, reconciler, baseDir, databaseUrl, secretsKey,
    setNow: (at) => void (now = at),
    async call(role, method, url, body, accept) {
      let req = request(app)[method](url).set(await options.auth.headers(strataPrincipal(role)));
      if (accept) req = req.set('accept', accept);
      return body === undefined ? req : req.send(body as object);
    },
    async untilPhase(name, phases, timeoutMs = 240_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        await reconciler.pass();
        const res = await request(app).get(`/api/v1/sandboxes/${name}`).set(await options.auth.headers(strataPrincipal('viewer')));
        if (res.status === 404 && phases.includes('Gone')) return { name, phase: 'Gone' } as SandboxView;
        const sandbox = res.body.sandbox as SandboxView | undefined;
        if (sandbox && phases.includes(sandbox.phase)) return sandbox;
        if (Date.now() > deadline) throw new Error(`sandbox ${name} did not reach ${phases.join(' or ')} (last: ${JSON.stringify(sandbox ?? res.body)})`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    stop,
    async close() {
      await closeQueryPools();
      const rows = await db.sandbox.findMany().catch(() => []);
      for (const row of rows) {
        const state = row.runtime as { dir?: string };
        if (state.dir) await runtime.wipe(row.runtime as never).catch(() => undefined);
      }
      await stop();
      fs.rmSync(baseDir, { recursive: true, force: true });
    },
  };
}

/** Serves an Express app on a loopback port (the catalog, for the sandbox service's HTTP client). */
export async function serve(app: Express): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
