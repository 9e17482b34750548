import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { silentLogger, testPostgresAdminUrl } from '@sigil/kit/testing';
import { startWorker, type Worker } from '@strata/mover';
import { accessFromUrl, createMysqlFixture, createPostgresFixture, dropMysqlDatabase, dropPostgresDatabase } from '@strata/mover/testing';
import { stackDocuments, startCatalogHarness, type CatalogHarness } from '@strata/backup-catalog/testing';

/**
 * What the integration tests of logical backups share: the test setup's Postgres and MariaDB servers, a fresh age
 * identity, a small source database on each, and the resources of two logical targets (`postgres-main`,
 * `mysql-main`) whose schedule never falls due while a test runs.
 */
export const pgAdmin = testPostgresAdminUrl();
export const mysqlAdmin = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';
export const pgAccess = accessFromUrl(pgAdmin);
export const myAccess = accessFromUrl(mysqlAdmin);

export interface AgeIdentity {
  /** The identity file (what `age -d -i` reads). */
  file: string;
  identity: string;
  recipient: string;
}

export function newAgeIdentity(label: string): AgeIdentity {
  const file = path.join(mkdtempSync(path.join(tmpdir(), `strata-${label}-`)), 'identity.txt');
  execFileSync('age-keygen', ['-o', file], { stdio: 'ignore' });
  return { file, identity: readFileSync(file, 'utf8'), recipient: execFileSync('age-keygen', ['-y', file]).toString().trim() };
}

export async function createSources(pgDb: string, myDb: string): Promise<void> {
  await Promise.all([createPostgresFixture(pgAdmin, pgDb, { rows: 10, largeRowBytes: 1024 }), createMysqlFixture(mysqlAdmin, myDb, { rows: 10, largeRowBytes: 1024 })]);
}

export async function dropSources(pgDb: string, myDb: string): Promise<void> {
  await Promise.all([dropPostgresDatabase(pgAdmin, pgDb), dropMysqlDatabase(mysqlAdmin, myDb)]);
}

/** The store, policy, secrets and the two logical targets backing up `pgDb` and `myDb`. */
export function logicalTargetDocs(bucket: string, age: AgeIdentity, pgDb: string, myDb: string): string {
  return stackDocuments({
    bucket,
    recipients: [age.recipient],
    identity: age.identity,
    postgres: { host: '127.0.0.1', port: pgAccess.port, username: pgAccess.username, password: pgAccess.password },
    mysql: { host: '127.0.0.1', port: myAccess.port, username: myAccess.username, password: myAccess.password },
    databases: { postgres: [pgDb], mysql: [myDb] },
    postgresMode: 'logical',
    // No scheduled slot in the hours a test's clock covers: every run is asked for.
    schedule: '0 3 1 1 *',
  });
}

/** The catalog and a mover in this process, the two logical targets applied and their store's bucket created. */
export interface LogicalStack {
  h: CatalogHarness;
  worker: Worker;
  /** Stops the mover and the catalog, and drops the source databases. */
  stop(): Promise<void>;
}

/** Creates the sources and starts a LogicalStack; `edit` changes the resource documents before they are applied. */
export async function startLogicalStack(options: { label: string; bucket: string; pgDb: string; myDb: string; edit?: (docs: string) => string }): Promise<LogicalStack> {
  const { label, bucket, pgDb, myDb } = options;
  await createSources(pgDb, myDb);
  const h = await startCatalogHarness(label);
  const worker = await startWorker({ bus: h.bus, log: silentLogger(), secretsKey: h.secretsKey, concurrency: 2, consumerPrefix: h.cell });
  const docs = logicalTargetDocs(bucket, newAgeIdentity(label), pgDb, myDb);
  const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', options.edit ? options.edit(docs) : docs, 'application/yaml');
  if (applied.status !== 200) throw new Error(`the targets were not applied: ${JSON.stringify(applied.body)}`);
  await h.runtime.mirror(); // creates the bucket
  return {
    h,
    worker,
    async stop() {
      await worker.stop();
      await h.close();
      await dropSources(pgDb, myDb);
    },
  };
}
