import { randomBytes } from 'node:crypto';
import pg from 'pg';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger, testPostgresAdminUrl } from '@sigil/kit/testing';
import { startWorker, type Worker } from '@strata/mover';
import { driverFor } from '@strata/mover/engines';
import { generateAgeIdentity } from '@strata/stream';
import { accessFromUrl, createMysqlFixture, createPostgresFixture, dropMysqlDatabase, dropPostgresDatabase, uniqueDatabaseName } from '@strata/mover/testing';
import { stackDocuments, startCatalogHarness, type CatalogHarness } from '@strata/backup-catalog/testing';
import { waitFor } from './wait.ts';

/**
 * In-place and table-level restores for real: the catalog and a mover in this process, the databases of the test's
 * Postgres and MariaDB servers changed after a backup and brought back, whole or table by table.
 */
const pgAdmin = testPostgresAdminUrl();
const mysqlAdmin = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';
const pgAccess = accessFromUrl(pgAdmin);
const myAccess = accessFromUrl(mysqlAdmin);
const bucket = `strata-inplace-${randomBytes(3).toString('hex')}`;
const dbs = { postgres: uniqueDatabaseName('ippg'), mysql: uniqueDatabaseName('ipmy') };
const extra: Array<{ engine: 'postgres' | 'mysql'; name: string }> = [];

let h: CatalogHarness;
let worker: Worker;

async function sql(engine: 'postgres' | 'mysql', database: string, statement: string): Promise<unknown[]> {
  if (engine === 'postgres') {
    const client = new pg.Client({ connectionString: pgAdmin.replace(/\/[^/]*$/, `/${database}`) });
    await client.connect();
    try {
      return (await client.query(statement)).rows;
    } finally {
      await client.end();
    }
  }
  const connection = await mysql.createConnection(`${mysqlAdmin.replace(/\/$/, '')}/${database}`);
  try {
    return (await connection.query(statement))[0] as unknown[];
  } finally {
    await connection.end();
  }
}

/** Drives the scheduler (a safety backup is dispatched by it) until the restore ends. */
async function restoreEnds(name: string) {
  return await waitFor(`restore ${name}`, async () => {
    await h.runtime.tick();
    const row = await h.runtime.db.restore.findFirst({ where: { name } });
    return row && (row.phase === 'Succeeded' || row.phase === 'Failed') ? row : undefined;
  }, 240_000);
}

async function backupNow(target: string): Promise<string> {
  const res = await h.call('operator', 'post', `/api/v1/targets/default/${target}/backup-now`, { reason: 'before the changes' });
  expect(res.status).toBe(202);
  const row = await waitFor(`backup ${res.body.name}`, async () => {
    await h.runtime.tick();
    const found = await h.runtime.db.backup.findFirst({ where: { name: res.body.name } });
    return found && (found.phase === 'Succeeded' || found.phase === 'Failed') ? found : undefined;
  }, 240_000);
  expect(row.phase, row.message).toBe('Succeeded');
  return row.id;
}

beforeAll(async () => {
  const { identity, recipient } = await generateAgeIdentity();
  await Promise.all([createPostgresFixture(pgAdmin, dbs.postgres, { rows: 30, largeRowBytes: 16 * 1024 }), createMysqlFixture(mysqlAdmin, dbs.mysql, { rows: 30, largeRowBytes: 16 * 1024 })]);
  h = await startCatalogHarness('in_place');
  worker = await startWorker({ bus: h.bus, log: silentLogger(), secretsKey: h.secretsKey, concurrency: 2, consumerPrefix: h.cell });
  const docs = stackDocuments({
    bucket, recipients: [recipient], identity, postgresMode: 'logical',
    postgres: { host: '127.0.0.1', port: pgAccess.port, username: pgAccess.username, password: pgAccess.password },
    mysql: { host: '127.0.0.1', port: myAccess.port, username: myAccess.username, password: myAccess.password },
    databases: { postgres: [dbs.postgres], mysql: [dbs.mysql] },
  });
  const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  await h.runtime.mirror();
}, 300_000);

afterAll(async () => {
  await worker?.stop();
  await h?.close();
  await Promise.all([dropPostgresDatabase(pgAdmin, dbs.postgres), dropMysqlDatabase(mysqlAdmin, dbs.mysql)]);
  for (const e of extra) await (e.engine === 'postgres' ? dropPostgresDatabase(pgAdmin, e.name) : dropMysqlDatabase(mysqlAdmin, e.name));
});

describe.each([
  { engine: 'postgres' as const, target: 'postgres-main', log: 'public.audit_log', customers: 'public.customers' },
  { engine: 'mysql' as const, target: 'mysql-main', log: 'audit_log', customers: 'customers' },
])('$engine', ({ engine, target, log, customers }) => {
  const database = engine === 'postgres' ? dbs.postgres : dbs.mysql;
  const access = engine === 'postgres' ? pgAccess : myAccess;
  const driver = driverFor(engine);
  let before: Awaited<ReturnType<typeof driver.tableChecksums>>;
  /** The backup taken before the changes (later ones are the safety backups of in-place restores). */
  let original: string;

  it('refuses an in-place restore without the right confirm or role', async () => {
    const wrong = await h.call('restorer-admin', 'post', '/api/v1/restores', { target: `default/${target}`, mode: 'in-place', confirm: 'something-else' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatch(/confirm/);
    const role = await h.call('restorer', 'post', '/api/v1/restores', { target: `default/${target}`, mode: 'in-place', confirm: target });
    expect(role.status).toBe(403);
  });

  it('restores the databases in place after a safety backup, and runs the checks', async () => {
    original = await backupNow(target);
    before = await driver.tableChecksums(access, database);
    await sql(engine, database, "UPDATE customers SET name = 'changed' WHERE id % 2 = 0");
    await sql(engine, database, 'CREATE TABLE junk (id int)');
    const res = await h.call('restorer-admin', 'post', '/api/v1/restores', { target: `default/${target}`, mode: 'in-place', confirm: target, reason: 'undo the deletes' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const pending = (await h.call('viewer', 'get', `/api/v1/restores/default/${res.body.name}`)).body.restore;
    expect(pending).toMatchObject({ mode: 'in-place', safetyBackup: expect.any(String) });
    const restore = await restoreEnds(res.body.name);
    expect(restore.phase, restore.message).toBe('Succeeded');
    expect(await driver.tableChecksums(access, database)).toEqual(before);
    const safety = await h.runtime.db.backup.findUniqueOrThrow({ where: { id: pending.safetyBackup } });
    expect(safety).toMatchObject({ phase: 'Succeeded', reason: expect.stringContaining('safety backup') });
    expect((restore.checks as Array<{ name: string; passed: boolean }>).map((c) => [c.name, c.passed])).toEqual([
      ['inventory-matches', true], ['schema-matches', true], ['row-estimates-within-10pct', true], ['target-checks', true],
    ]);
  }, 400_000);

  it('replaces only the tables asked for, in place, with their indexes', async () => {
    await sql(engine, database, 'DELETE FROM audit_log');
    await sql(engine, database, "UPDATE customers SET name = 'kept' WHERE id % 3 = 0");
    const res = await h.call('restorer-admin', 'post', '/api/v1/restores', { target: `default/${target}`, mode: 'in-place', confirm: target, backupID: original, tables: [log], skipSafetyBackup: true, runChecks: false });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const restore = await restoreEnds(res.body.name);
    expect(restore.phase, restore.message).toBe('Succeeded');
    const after = await driver.tableChecksums(access, database);
    expect(before[log]?.rows).toBeGreaterThan(0);
    expect(after[log]).toEqual(before[log]);
    expect(after[customers]).not.toEqual(before[customers]);
    const indexes = engine === 'postgres'
      ? await sql(engine, database, "SELECT indexname FROM pg_indexes WHERE tablename = 'audit_log'")
      : await sql(engine, database, 'SHOW INDEX FROM audit_log');
    expect(indexes.length).toBeGreaterThanOrEqual(1);
  }, 400_000);

  it('restores only some tables into a new database', async () => {
    const name = uniqueDatabaseName(`iptab${engine.slice(0, 2)}`);
    extra.push({ engine, name });
    const res = await h.call('restorer', 'post', '/api/v1/restores', {
      target: `default/${target}`, mode: 'new', host: '127.0.0.1', port: access.port, database: name, credentialsSecret: `${engine}-credentials`, backupID: original, tables: [log],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const restore = await restoreEnds(res.body.name);
    expect(restore.phase, restore.message).toBe('Succeeded');
    const tables = Object.keys(await driver.tableChecksums(access, name));
    expect(tables).toEqual([log]);
  }, 400_000);

  it('restores a table into a new database without its foreign key to a table left behind, and says so', async () => {
    const name = uniqueDatabaseName(`ipfk${engine.slice(0, 2)}`);
    extra.push({ engine, name });
    const documents = engine === 'postgres' ? 'public.documents' : 'documents';
    const res = await h.call('restorer', 'post', '/api/v1/restores', {
      target: `default/${target}`, mode: 'new', host: '127.0.0.1', port: access.port, database: name, credentialsSecret: `${engine}-credentials`, backupID: original, tables: [documents],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const restore = await restoreEnds(res.body.name);
    expect(restore.phase, restore.message).toBe('Succeeded');
    const restored = await driver.tableChecksums(access, name);
    expect(Object.keys(restored)).toEqual([documents]);
    expect(restored[documents]).toEqual(before[documents]);
    // MariaDB keeps the key (a dump turns foreign key checks off); Postgres cannot create it, and the message names it.
    if (engine === 'postgres') expect(restore.message).toMatch(/left out a foreign key to tables not restored: documents_customer_id_fkey of public\.documents \(references public\.customers\)/);
  }, 400_000);

  it('says how to return to the safety backup when an in-place restore fails', async () => {
    const secret = await h.call('restorer-admin', 'put', `/api/v1/secrets/default/${engine}-broken`, { data: { username: 'nobody_here', password: 'wrong' } });
    expect(secret.status).toBe(200);
    const res = await h.call('restorer-admin', 'post', '/api/v1/restores', { target: `default/${target}`, mode: 'in-place', confirm: target, credentialsSecret: `default/${engine}-broken` });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const restore = await restoreEnds(res.body.name);
    expect(restore.phase).toBe('Failed');
    const safety = (restore.destination as { safetyBackup: string }).safetyBackup;
    expect(restore.message).toContain(`strata restore default/${target} --mode in-place --backup ${safety} --confirm ${target} --skip-safety-backup`);
  }, 400_000);
});
