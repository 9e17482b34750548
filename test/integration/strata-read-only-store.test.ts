import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger, testPostgresAdminUrl } from '@sigil/kit/testing';
import { startWorker, type Worker } from '@strata/mover';
import { accessFromUrl, createPostgresFixture, dropPostgresDatabase, uniqueDatabaseName } from '@strata/mover/testing';
import { createS3Client, listKeys } from '@strata/stream';
import { s3Env, stackDocuments, startCatalogHarness, type CatalogHarness } from '@strata/backup-catalog/testing';
import { waitFor } from './wait.ts';

/**
 * A read-only store (issue 25 point 7), the use case it exists for: a second deployment reads the first one's bucket.
 * It mirrors the backups and restores from them, and never writes there: no backup, no change log, no garbage
 * collection, no bucket created.
 */
const pgAdmin = testPostgresAdminUrl();
const pg = accessFromUrl(pgAdmin);
const bucket = `strata-ro-${randomBytes(3).toString('hex')}`;
const source = uniqueDatabaseName('ro_src');
const databases = [source];
let writer: CatalogHarness;
let reader: CatalogHarness;
let writerWorker: Worker;
let readerWorker: Worker;
let docs: string;

const s3 = () => createS3Client({ ...s3Env(), accessKeyId: s3Env().accessKey, secretAccessKey: s3Env().secretKey, pathStyle: true });

async function bucketKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of listKeys(s3(), bucket, '')) keys.push(key);
  return keys.sort();
}

/** The same resources with the store read-only: what the second deployment applies. */
const readOnlyDocs = () => docs.replace('  prefix: strata\n', '  prefix: strata\n  readOnly: true\n');

beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'strata-age-'));
  execFileSync('age-keygen', ['-o', path.join(dir, 'identity.txt')], { stdio: 'ignore' });
  const identity = readFileSync(path.join(dir, 'identity.txt'), 'utf8');
  const recipient = execFileSync('age-keygen', ['-y', path.join(dir, 'identity.txt')]).toString().trim();
  rmSync(dir, { recursive: true, force: true });
  await createPostgresFixture(pgAdmin, source, { rows: 20 });
  writer = await startCatalogHarness('ro_writer');
  writerWorker = await startWorker({ bus: writer.bus, log: silentLogger(), secretsKey: writer.secretsKey, concurrency: 1, consumerPrefix: writer.cell });
  docs = stackDocuments({
    bucket,
    recipients: [recipient],
    identity,
    postgres: { host: '127.0.0.1', port: pg.port, username: pg.username, ...(pg.password ? { password: pg.password } : {}) },
    databases: { postgres: [source] },
    postgresMode: 'logical',
  });
  expect((await writer.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml')).status).toBe(200);
  await writer.runtime.mirror(); // creates the bucket
  reader = await startCatalogHarness('ro_reader');
  readerWorker = await startWorker({ bus: reader.bus, log: silentLogger(), secretsKey: reader.secretsKey, concurrency: 1, consumerPrefix: reader.cell });
}, 120_000);

afterAll(async () => {
  await readerWorker?.stop();
  await writerWorker?.stop();
  await reader?.close();
  await writer?.close();
  for (const database of databases) await dropPostgresDatabase(pgAdmin, database).catch(() => undefined);
}, 60_000);

describe('a read-only store: a second deployment reads the first one’s bucket', () => {
  let backupId: string;

  it('mirrors the backups the first deployment wrote', async () => {
    const res = await writer.call('operator', 'post', '/api/v1/targets/default/postgres-main/backup-now', { reason: 'for the reader' });
    expect(res.status).toBe(202);
    const backup = await waitFor('the backup', async () => {
      await writer.runtime.tick();
      const row = await writer.runtime.db.backup.findFirst({ where: { name: res.body.name } });
      return row && (row.phase === 'Succeeded' || row.phase === 'Failed') ? row : undefined;
    });
    expect(backup.phase, backup.message).toBe('Succeeded');
    backupId = backup.id;
    expect((await reader.call('restorer-admin', 'post', '/api/v1/resources', readOnlyDocs(), 'application/yaml')).status).toBe(200);
    await reader.runtime.mirror();
    const listed = (await reader.call('viewer', 'get', '/api/v1/targets/default/postgres-main/backups')).body.backups as Array<{ id: string; phase: string; restorable: boolean }>;
    expect(listed).toEqual([expect.objectContaining({ id: backupId, phase: 'Succeeded', restorable: true })]);
    const store = (await reader.call('viewer', 'get', '/api/v1/settings')).body.stores[0];
    expect(store).toMatchObject({ name: 'local', readOnly: true });
  }, 180_000);

  it('restores from it into a new database', async () => {
    const database = uniqueDatabaseName('ro_restored');
    databases.push(database);
    const res = await reader.call('restorer', 'post', '/api/v1/restores', { target: 'default/postgres-main', mode: 'new', backupID: backupId, host: '127.0.0.1', port: pg.port, database, credentialsSecret: 'postgres-credentials' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const restore = await waitFor('the restore', async () => {
      await reader.runtime.tick();
      const row = await reader.runtime.db.restore.findFirst({ where: { name: res.body.name } });
      return row && (row.phase === 'Succeeded' || row.phase === 'Failed') ? row : undefined;
    });
    expect(restore.phase, restore.message).toBe('Succeeded');
  }, 180_000);

  it('never writes there: backup-now and garbage collection are refused, and the bucket is unchanged', async () => {
    const before = await bucketKeys();
    const backup = await reader.call('operator', 'post', '/api/v1/targets/default/postgres-main/backup-now', { reason: 'must not write' });
    expect([409, 422]).toContain(backup.status);
    expect(backup.body.error).toMatch(/read-only/);
    const gc = await reader.call('restorer-admin', 'post', '/api/v1/stores/default/local/gc');
    expect(gc.status).toBe(422);
    expect(gc.body.error).toMatch(/read-only/);
    // The reader's own passes (retention, collection, streams, the mirror) write nothing either.
    await reader.runtime.tick();
    await reader.runtime.lifecycle.idle();
    await reader.runtime.mirror();
    expect(await bucketKeys()).toEqual(before);
  }, 60_000);
});
