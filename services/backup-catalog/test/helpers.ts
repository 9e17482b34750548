import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Express } from 'express';
import request from 'supertest';
import { connectBus, startOutboxRelay, type Bus } from '@sigil/kit/bus';
import type { Logger } from '@sigil/kit/log';
import { createStrataTestAuth, freshTestDatabase, silentLogger, strataPrincipal, testNatsUrl, type StrataTestAuth } from '@sigil/kit/testing';
import type { StrataRole } from '@sigil/proto';
import { generateAgeIdentity } from '@strata/stream';
import { createApp } from '../src/app.ts';
import { startCatalog, type CatalogRuntime } from '../src/catalog.ts';
import type { CatalogConfig } from '../src/config.ts';

export const migrationsDir = path.resolve(import.meta.dirname, '../../../prisma/backup-catalog/migrations');

export interface CatalogHarness {
  app: Express;
  runtime: CatalogRuntime;
  auth: StrataTestAuth;
  bus: Bus;
  databaseUrl: string;
  secretsKey: Buffer;
  cell: string;
  /** Sets the catalog's clock (the scheduler reads it). */
  setNow(at: Date): void;
  as(role: StrataRole): Promise<Record<string, string>>;
  /** A supertest agent call with a role's headers. */
  call(role: StrataRole, method: 'get' | 'post' | 'put' | 'delete', url: string, body?: unknown, contentType?: string): Promise<request.Response>;
  close(): Promise<void>;
}

/** A catalog on its own database and NATS cell; timers off: tests drive the scheduler with tick(). */
export async function startCatalogHarness(name: string, options: { secretsKey?: Buffer; databaseUrl?: string; cell?: string; config?: Partial<Pick<CatalogConfig, 'RETENTION_INTERVAL_MS' | 'GC_INTERVAL_MS' | 'GC_SKEW_MARGIN_MS'>>; log?: Logger } = {}): Promise<CatalogHarness> {
  const databaseUrl = options.databaseUrl ?? (await freshTestDatabase(`strata_catalog_test_${name}`, migrationsDir));
  const cell = options.cell ?? `t${randomBytes(4).toString('hex')}`;
  const secretsKey = options.secretsKey ?? randomBytes(32);
  const bus = await connectBus(testNatsUrl(), `catalog-test-${name}`);
  let now: Date | undefined;
  const runtime = await startCatalog({
    config: { DATABASE_URL: databaseUrl, SCHEDULER_INTERVAL_MS: 1000, MIRROR_INTERVAL_MS: 60_000, DOWNLOAD_URL_TTL_SECONDS: 3600, CONSUMER_PREFIX: cell, ...options.config },
    bus,
    log: options.log ?? silentLogger(),
    secretsKey,
    clock: () => now ?? new Date(),
    timers: false,
  });
  const relay = await startOutboxRelay({ databaseUrl, bus, log: options.log ?? silentLogger(), pollIntervalMs: 200 });
  const auth = await createStrataTestAuth();
  const { app } = await createApp({ ...runtime.deps, log: options.log ?? silentLogger(), verifyPrincipal: auth.verify, externalUrl: 'http://console.test' });
  const as = (role: StrataRole) => auth.headers(strataPrincipal(role));
  return {
    app,
    runtime,
    auth,
    bus,
    databaseUrl,
    secretsKey,
    cell,
    setNow: (at) => void (now = at),
    as,
    async call(role, method, url, body, contentType) {
      let req = request(app)[method](url).set(await as(role));
      if (contentType) req = req.set('content-type', contentType);
      return body === undefined ? req : req.send(body as object);
    },
    async close() {
      await runtime.stop();
      await relay.stop();
      await bus.close();
    },
  };
}

/** A real age key pair from the mover's implementation. */
export { generateAgeIdentity };

/** Reads until `ready` holds (bounded polling, for what happens after an answer: reports, background writes). */
export async function until<T>(read: () => Promise<T>, ready: (value: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ready(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met in time (last: ${JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? String(v) : v))})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A store no mover ever reaches (port 9 on loopback) and the secret it and the targets name (`creds`): for tests
 * where the test itself plays the mover, or no mover runs.
 */
export function offlineStoreDocuments(recipient: string): string[] {
  return [
    `apiVersion: v1\nkind: Secret\nmetadata: { name: creds }\nstringData: { username: u, password: p, accessKeyId: a, secretAccessKey: s }`,
    `apiVersion: backups.strata.dev/v1alpha1
kind: BackupStore
metadata: { name: local }
spec:
  s3: { endpoint: "http://127.0.0.1:9", region: us-east-1, bucket: b, credentialsSecret: { name: creds } }
  encryption: { ageRecipients: [${recipient}], identitySecret: { name: creds } }`,
  ];
}

/** A Postgres target at `<name>.internal` under `policy`, with the offline store's credentials. */
export function postgresTarget(name: string, policy: string): string {
  return `apiVersion: backups.strata.dev/v1alpha1
kind: BackupTarget
metadata: { name: ${name} }
spec:
  engine: postgres
  endpoint: { host: ${name}.internal, port: 5432 }
  credentials: { secretRef: { name: creds } }
  policy: ${policy}`;
}

/** A nightly policy on the offline store, and a Postgres target under it (at `<name>.internal`) for each name. */
export function nightlyPostgresTargets(names: string[]): string[] {
  return [
    `apiVersion: backups.strata.dev/v1alpha1
kind: BackupPolicy
metadata: { name: nightly }
spec: { store: local, full: { schedule: "0 3 * * *" } }`,
    ...names.map((name) => postgresTarget(name, 'nightly')),
  ];
}

/** A catalog harness with the offline store applied, and then `documents` (policies, targets) in the same request. */
export async function startOfflineCatalog(name: string, documents: string[]): Promise<CatalogHarness> {
  const harness = await startCatalogHarness(name);
  const { recipient } = await generateAgeIdentity();
  const res = await harness.call('restorer-admin', 'post', '/api/v1/resources', [...offlineStoreDocuments(recipient), ...documents].join('\n---\n'), 'application/yaml');
  if (res.status !== 200) {
    await harness.close();
    throw new Error(`applying the test resources answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
  return harness;
}
