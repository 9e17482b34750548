import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenApiBackend } from '@sigil/kit/api';
import { loadStrataOpenApi } from '@sigil/proto';
import { silentLogger, testPostgresAdminUrl } from '@sigil/kit/testing';
import { startWorker, type Worker } from '@strata/mover';
import { driverFor } from '@strata/mover/engines';
import { createS3Client, listKeys } from '@strata/stream';
import {
  accessFromUrl,
  createMysqlFixture,
  createPostgresFixture,
  dropMysqlDatabase,
  dropPostgresDatabase,
  uniqueDatabaseName,
} from '@strata/mover/testing';
import { s3Env, stackDocuments, startCatalogHarness, type CatalogHarness } from '@strata/backup-catalog/testing';
import { waitFor } from './wait.ts';

/**
 * Backups and restores for real: the catalog and a mover in this process, Postgres and MariaDB servers,
 * the S3 store and NATS of the test setup. Every restored database is compared table by table.
 */
const pgAdmin = testPostgresAdminUrl();
const mysqlAdmin = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';
const pg = accessFromUrl(pgAdmin);
const my = accessFromUrl(mysqlAdmin);
const bucket = `strata-it-${randomBytes(3).toString('hex')}`;
const pgDbs = [uniqueDatabaseName('pga'), uniqueDatabaseName('pgb')];
const myDbs = [uniqueDatabaseName('mya'), uniqueDatabaseName('myb')];
const created: Array<{ engine: 'postgres' | 'mysql'; name: string }> = [];

let h: CatalogHarness;
let worker: Worker;
let identityFile: string;
let identity: string;
let secondIdentityFile: string;


async function backupNow(target: string): Promise<{ id: string; name: string; phase: string; message: string }> {
  const res = await h.call('operator', 'post', `/api/v1/targets/default/${target}/backup-now`, { reason: 'test' });
  expect(res.status).toBe(202);
  return waitFor(`backup ${res.body.name}`, async () => {
    const row = await h.runtime.db.backup.findFirst({ where: { name: res.body.name } });
    return row && (row.phase === 'Succeeded' || row.phase === 'Failed') ? row : undefined;
  });
}

async function restoreNew(target: string, database: string, extra: Record<string, unknown> = {}) {
  const engine = target.startsWith('postgres') ? 'postgres' : 'mysql';
  const res = await h.call('restorer', 'post', '/api/v1/restores', {
    target: `default/${target}`, mode: 'new', host: '127.0.0.1', port: engine === 'postgres' ? pg.port : my.port, database, credentialsSecret: `${engine}-credentials`, ...extra,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return waitFor(`restore ${res.body.name}`, async () => {
    const row = await h.runtime.db.restore.findFirst({ where: { name: res.body.name } });
    return row && (row.phase === 'Succeeded' || row.phase === 'Failed') ? row : undefined;
  });
}

beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'strata-age-'));
  identityFile = path.join(dir, 'identity.txt');
  secondIdentityFile = path.join(dir, 'other.txt');
  execFileSync('age-keygen', ['-o', identityFile], { stdio: 'ignore' });
  execFileSync('age-keygen', ['-o', secondIdentityFile], { stdio: 'ignore' });
  identity = execFileSync('cat', [identityFile]).toString();
  const recipient = execFileSync('age-keygen', ['-y', identityFile]).toString().trim();
  await Promise.all([
    ...pgDbs.map((db) => createPostgresFixture(pgAdmin, db, { rows: 50, largeRowBytes: 1024 * 1024 })),
    ...myDbs.map((db) => createMysqlFixture(mysqlAdmin, db, { rows: 50, largeRowBytes: 1024 * 1024 })),
  ]);
  h = await startCatalogHarness('backup_restore');
  worker = await startWorker({ bus: h.bus, log: silentLogger(), secretsKey: h.secretsKey, concurrency: 2, consumerPrefix: h.cell });
  const docs = stackDocuments({
    bucket,
    recipients: [recipient],
    identity,
    postgres: { host: '127.0.0.1', port: pg.port, username: pg.username, password: pg.password },
    mysql: { host: '127.0.0.1', port: my.port, username: my.username, password: my.password },
    databases: { postgres: pgDbs, mysql: myDbs },
    // Logical dumps are what this file is about; physical backups and point-in-time restore: strata-pitr.test.ts.
    postgresMode: 'logical',
  });
  const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  await h.runtime.mirror(); // creates the bucket
}, 300_000);

afterAll(async () => {
  await worker?.stop();
  await h?.close();
  await Promise.all([
    ...pgDbs.map((db) => dropPostgresDatabase(pgAdmin, db)),
    ...myDbs.map((db) => dropMysqlDatabase(mysqlAdmin, db)),
    ...created.map((c) => (c.engine === 'postgres' ? dropPostgresDatabase(pgAdmin, c.name) : dropMysqlDatabase(mysqlAdmin, c.name))),
  ]);
});

describe.each([
  { engine: 'postgres' as const, target: 'postgres-main', dbs: pgDbs, access: pg },
  { engine: 'mysql' as const, target: 'mysql-main', dbs: myDbs, access: my },
])('$engine', ({ engine, target, dbs, access }) => {
  let backup: { id: string; phase: string; message: string };
  const driver = driverFor(engine);

  it('backs up every database on demand', async () => {
    backup = await backupNow(target);
    expect(backup.phase, backup.message).toBe('Succeeded');
    const detail = await h.call('viewer', 'get', `/api/v1/backups/${backup.id}`);
    expect(detail.status).toBe(200);
    const { manifest } = detail.body;
    expect(manifest).toMatchObject({ version: 1, id: backup.id, engine, mode: 'logical', databases: dbs, strataVersion: expect.any(String), target: { namespace: 'default', name: target } });
    expect(manifest.objects.filter((o: { role: string }) => o.role === 'data')).toHaveLength(2);
    expect(manifest.objects.every((o: { sha256: string; size: number }) => /^[0-9a-f]{64}$/.test(o.sha256) && o.size > 0)).toBe(true);
    expect(manifest.server.version).toBeTruthy();
    // The command line of each database's dump (and of the zstd program it wrote through, where there is one).
    for (const db of dbs) expect(manifest.tools.commands.some((c: string) => /dump/.test(c) && c.includes(db)), `${db} in ${manifest.tools.commands.join('; ')}`).toBe(true);
    expect(manifest.inventory.migrationVersion).toBe('20240202000000_add_invoices');
    expect(detail.body.backup).toMatchObject({ id: backup.id, engine, databases: dbs, migrationVersion: '20240202000000_add_invoices' });
    expect(detail.body.backup.storedBytes).toBeGreaterThan(0);
    if (engine === 'postgres') expect(manifest.position.startLSN).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
  });

  it('lists the backup newest first and shows its inventory', async () => {
    const list = await h.call('viewer', 'get', `/api/v1/targets/default/${target}/backups`);
    expect(list.body.backups[0].id).toBe(backup.id);
    const inventory = await h.call('viewer', 'get', `/api/v1/backups/${backup.id}/inventory`);
    expect(inventory.status, JSON.stringify(inventory.body)).toBe(200);
    expect(inventory.body.databases.map((d: { name: string }) => d.name).sort()).toEqual([...dbs].sort());
    expect(inventory.body.databases[0].tables.length).toBeGreaterThan(3);
    const target_ = await h.call('viewer', 'get', `/api/v1/targets/default/${target}`);
    expect(target_.body.target).toMatchObject({ health: 'ok', backups: 1, lastFull: { id: backup.id } });
  });

  it('writes objects that decrypt with the age CLI and the identity, and not without it', async () => {
    const client = createS3Client({ ...s3Env(), accessKeyId: s3Env().accessKey, secretAccessKey: s3Env().secretKey, pathStyle: true });
    const keys: string[] = [];
    for await (const key of listKeys(client, bucket, `strata/default/${target}/${backup.id}/data/`)) keys.push(key);
    expect(keys).toHaveLength(2);
    const url = await (await import('@strata/stream')).presignGet(client, bucket, keys[0] as string, 600);
    const encrypted = Buffer.from(await (await fetch(url)).arrayBuffer());
    const decrypted = spawnSync('age', ['-d', '-i', identityFile], { input: encrypted, maxBuffer: 1 << 30 });
    expect(decrypted.status, decrypted.stderr.toString()).toBe(0);
    const plain = spawnSync('zstd', ['-d', '-c'], { input: decrypted.stdout, maxBuffer: 1 << 30 });
    expect(plain.status).toBe(0);
    if (engine === 'postgres') expect(plain.stdout.subarray(0, 5).toString()).toBe('PGDMP');
    else expect(plain.stdout.toString('utf8', 0, 4096)).toMatch(/MariaDB dump|MySQL dump|CREATE TABLE/);
    const wrong = spawnSync('age', ['-d', '-i', secondIdentityFile], { input: encrypted });
    expect(wrong.status).not.toBe(0);
    expect(wrong.stderr.toString()).toMatch(/no identity matched/i);
  });

  it('restores into a new database that equals its source, with a suffix per database', async () => {
    const name = uniqueDatabaseName(`r${engine.slice(0, 2)}`);
    const restore = await restoreNew(target, name);
    expect(restore.phase, restore.message).toBe('Succeeded');
    for (const source of dbs) {
      const restored = `${name}_${source}`;
      created.push({ engine, name: restored });
      expect(await driver.tableChecksums(access, restored)).toEqual(await driver.tableChecksums(access, source));
    }
    const activity = await h.call('viewer', 'get', '/api/v1/activity');
    expect(activity.body.restores.some((r: { name: string; phase: string }) => r.phase === 'Succeeded')).toBe(true);
  });

  it('offers the encrypted artifact as a time-limited download', async () => {
    const res = await h.call('restorer', 'post', '/api/v1/restores', { target: `default/${target}`, mode: 'download', backupID: backup.id, database: dbs[1] });
    expect(res.status).toBe(202);
    const detail = await h.call('viewer', 'get', `/api/v1/restores/default/${res.body.name}`);
    const restore = detail.body.restore;
    expect(restore).toMatchObject({ phase: 'Succeeded', mode: 'download', downloadURL: expect.stringMatching(/X-Amz-Expires=3600/) });
    expect(new Date(restore.downloadExpires).getTime()).toBeGreaterThan(Date.now());
    const bytes = Buffer.from(await (await fetch(restore.downloadURL)).arrayBuffer());
    const manifest = (await h.call('viewer', 'get', `/api/v1/backups/${backup.id}`)).body.manifest;
    const object = manifest.objects.find((o: { database: string }) => o.database === dbs[1]);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(object.sha256);
    const several = await h.call('restorer', 'post', '/api/v1/restores', { target: `default/${target}`, mode: 'download', backupID: backup.id });
    expect(several.status).toBe(400);
  });
});

describe('failures', () => {
  it('a tampered object fails its restore and leaves no database behind', async () => {
    const backup = (await h.runtime.db.backup.findFirst({ where: { targetName: 'postgres-main', phase: 'Succeeded' }, orderBy: { completedAt: 'desc' } }))!;
    const object = (backup.manifest as { objects: Array<{ key: string; role: string }> }).objects.find((o) => o.role === 'data')!;
    const client = createS3Client({ ...s3Env(), accessKeyId: s3Env().accessKey, secretAccessKey: s3Env().secretKey, pathStyle: true });
    const original = Buffer.concat(await (await client.getObject(bucket, object.key)).toArray());
    const tampered = Buffer.from(original);
    const middle = Math.floor(tampered.length / 2);
    tampered[middle] = (tampered[middle] ?? 0) ^ 0x01;
    await client.putObject(bucket, object.key, tampered, tampered.length);
    try {
      const name = uniqueDatabaseName('tamper');
      const restore = await restoreNew('postgres-main', name, { backupID: backup.id });
      expect(restore.phase).toBe('Failed');
      expect(restore.message).toMatch(/checksum|authentic|decrypt|tag/i);
      const exists = await driver('postgres').listDatabases(pg, ['*']);
      expect(exists.filter((d) => d.startsWith(name))).toEqual([]);
    } finally {
      await client.putObject(bucket, object.key, original, original.length);
    }
  });

  it('a tool failure ends the run Failed with the tool message and leaves no backup objects', async () => {
    const res = await h.call('restorer-admin', 'post', '/api/v1/resources', `apiVersion: backups.strata.dev/v1alpha1
kind: BackupTarget
metadata: { name: broken }
spec:
  engine: postgres
  endpoint: { host: 127.0.0.1, port: 1 }
  credentials: { secretRef: { name: postgres-credentials } }
  policy: nightly`, 'application/yaml');
    expect(res.status).toBe(200);
    const backup = await backupNow('broken');
    expect(backup.phase).toBe('Failed');
    expect(backup.message).toMatch(/127\.0\.0\.1|port 1|connect|refused/i);
    const client = createS3Client({ ...s3Env(), accessKeyId: s3Env().accessKey, secretAccessKey: s3Env().secretKey, pathStyle: true });
    const keys: string[] = [];
    for await (const key of listKeys(client, bucket, `strata/default/broken/`)) keys.push(key);
    expect(keys).toEqual([]);
    expect((await h.call('viewer', 'get', '/api/v1/targets/default/broken')).body.target.health).toBe('failing');
  });

  it('refuses a restore of a target without backups as not restorable', async () => {
    const res = await h.call('restorer', 'post', '/api/v1/restores', { target: 'default/broken', mode: 'download' });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/no completed backup/);
  });
});

describe('schedule', () => {
  it('runs the policy schedule and starts a missed run once', async () => {
    // The clock stands still from here: a report's tick on the real clock could otherwise meet a slot of its own.
    const start = new Date();
    h.setNow(start);
    await h.call('restorer-admin', 'post', '/api/v1/resources', stackDocumentsPolicy('*/10 * * * *'), 'application/yaml');
    await h.runtime.tick();
    // A slot may have passed since the target was created: that run is not what this test counts.
    const settled = await waitFor('runs to end', async () => ((await h.runtime.db.backup.count({ where: { phase: { in: ['Queued', 'Running'] } } })) === 0 ? true : undefined));
    expect(settled).toBe(true);
    const scheduledBefore = await h.runtime.db.backup.count({ where: { targetName: 'postgres-main', reason: 'scheduled' } });
    const before = await h.runtime.db.backup.count({ where: { targetName: 'postgres-main' } });
    // Twenty-five minutes on, two slots or more have passed: one scheduled run, not one per missed slot.
    h.setNow(new Date(start.getTime() + 25 * 60_000));
    await h.runtime.tick();
    const scheduled = await waitFor('scheduled backup', async () => {
      const rows = await h.runtime.db.backup.findMany({ where: { targetName: 'postgres-main', reason: 'scheduled' }, orderBy: { queuedAt: 'desc' } });
      const row = rows.length > scheduledBefore ? rows[0] : undefined;
      return row && (row.phase === 'Succeeded' || row.phase === 'Failed') ? row : undefined;
    });
    expect(scheduled.phase, scheduled.message).toBe('Succeeded');
    await h.runtime.tick();
    const scheduledCount = await h.runtime.db.backup.count({ where: { targetName: 'postgres-main', reason: 'scheduled' } });
    expect(scheduledCount).toBe(scheduledBefore + 1);
    expect(await h.runtime.db.backup.count({ where: { targetName: 'postgres-main' } })).toBe(before + 1);
    h.setNow(new Date());
  });
});

describe('mirror', () => {
  it('brings every backup back after the catalog database is lost', async () => {
    // A run still going would write its manifest while we compare: wait until every run has ended.
    await waitFor('runs to end', async () => ((await h.runtime.db.backup.count({ where: { phase: { in: ['Queued', 'Running'] } } })) === 0 ? true : undefined));
    const expected = (await h.runtime.db.backup.findMany({ where: { phase: 'Succeeded' }, select: { id: true } })).map((b) => b.id).sort();
    const docs = (await h.call('restorer-admin', 'get', '/api/v1/resources')).body.resources;
    const fresh = await startCatalogHarness('mirror_rebuild', { secretsKey: h.secretsKey });
    try {
      const secrets = await h.runtime.db.secret.findMany();
      for (const s of secrets) await fresh.runtime.db.secret.create({ data: s });
      const reapplied = await fresh.call('restorer-admin', 'post', '/api/v1/resources', docs.map((d: Record<string, unknown>) => ({ apiVersion: d.apiVersion, kind: d.kind, metadata: { name: (d.metadata as { name: string }).name, namespace: (d.metadata as { namespace: string }).namespace }, spec: d.spec })));
      expect(reapplied.status, JSON.stringify(reapplied.body)).toBe(200);
      // Applying the store already mirrors it; a later pass finds nothing new.
      expect(await fresh.runtime.mirror()).toBe(0);
      const mirrored = (await fresh.runtime.db.backup.findMany({ select: { id: true } })).map((b) => b.id).sort();
      expect(mirrored).toEqual(expected);
      const list = await fresh.call('viewer', 'get', '/api/v1/targets/default/postgres-main/backups');
      expect(list.body.backups.length).toBeGreaterThan(0);
    } finally {
      await fresh.close();
    }
  });
});

describe('answers match the OpenAPI document', () => {
  it('for every read the console makes', async () => {
    const api = createOpenApiBackend(loadStrataOpenApi());
    await api.init();
    const backup = (await h.runtime.db.backup.findFirst({ where: { phase: 'Succeeded', targetName: 'postgres-main' } }))!;
    const restore = (await h.runtime.db.restore.findFirst())!;
    const reads: Array<[string, string]> = [
      ['getWhoami', '/api/v1/whoami'],
      ['getSettings', '/api/v1/settings'],
      ['listTargets', '/api/v1/targets'],
      ['getTarget', '/api/v1/targets/default/postgres-main'],
      ['listTargetBackups', '/api/v1/targets/default/postgres-main/backups'],
      ['getBackup', `/api/v1/backups/${backup.id}`],
      ['getBackupInventory', `/api/v1/backups/${backup.id}/inventory`],
      ['listRestores', '/api/v1/restores'],
      ['getRestore', `/api/v1/restores/${restore.namespace}/${restore.name}`],
      ['getActivity', '/api/v1/activity'],
      ['listAudit', '/api/v1/audit'],
      ['listResources', '/api/v1/resources'],
      ['listSecrets', '/api/v1/secrets'],
    ];
    for (const [operationId, url] of reads) {
      const res = await h.call('restorer-admin', 'get', url);
      expect(res.status, `${operationId}: ${JSON.stringify(res.body)}`).toBe(200);
      const result = api.validateResponse(res.body, operationId, 200);
      expect(result.errors ?? [], `${operationId}: ${JSON.stringify(result.errors)}`).toEqual([]);
    }
  });
});

function driver(engine: 'postgres' | 'mysql') {
  return driverFor(engine);
}

function stackDocumentsPolicy(schedule: string): string {
  return `apiVersion: backups.strata.dev/v1alpha1
kind: BackupPolicy
metadata: { name: nightly }
spec:
  store: local
  full: { schedule: "${schedule}", timeZone: UTC, startingDeadline: 1h }
  compression: { level: fastest, threads: 1 }`;
}
