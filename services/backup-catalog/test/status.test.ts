// Resource status as a Kubernetes operator writes it: Ready from what a resource names and from reaching its bucket
// or database server (the local Postgres, MariaDB and S3 are the real ones), LastBackupSucceeded, the apply's
// warnings, and the phase and message `GET /resources` shows.
import { randomBytes, randomUUID } from 'node:crypto';
import net from 'node:net';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strataEventSubject } from '@sigil/proto/strata-jobs';
import { validateResource } from '@sigil/proto/resources';
import { startCatalogHarness, generateAgeIdentity, until, type CatalogHarness } from './helpers.ts';
import { s3Env } from './fixtures.ts';

const API = 'backups.strata.dev/v1alpha1';
// Never due while the test runs (29 February only): no scheduled run gets in the way.
const SCHEDULE = '0 3 29 2 *';
const T0 = new Date();
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

let h: CatalogHarness;
let recipient: string;
let identity: string;
let closedPort: number;
const s3 = s3Env();
const bucket = `strata-status-${randomBytes(4).toString('hex')}`;
const pgUrl = new URL(process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const myUrl = new URL(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/');
const pgServer = { host: pgUrl.hostname, port: Number(pgUrl.port || 5432), username: decodeURIComponent(pgUrl.username), password: decodeURIComponent(pgUrl.password) };
const myServer = { host: myUrl.hostname, port: Number(myUrl.port || 3306), username: decodeURIComponent(myUrl.username), password: decodeURIComponent(myUrl.password) };

type Doc = Record<string, unknown>;
interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration: number;
}

const secret = (name: string, data: Record<string, string>): Doc => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: data });

function store(name: string, o: { endpoint?: string; secret?: string; recipients?: string[] } = {}): Doc {
  return {
    apiVersion: API,
    kind: 'BackupStore',
    metadata: { name },
    spec: {
      s3: { endpoint: o.endpoint ?? s3.endpoint, region: s3.region, bucket, pathStyle: true, disableConditionalPut: true, credentialsSecret: { name: o.secret ?? 's3-creds' } },
      encryption: { ageRecipients: o.recipients ?? [recipient], identitySecret: { name: 'age-identity' } },
    },
  };
}

const policy = (name: string, storeName = 'good'): Doc => ({ apiVersion: API, kind: 'BackupPolicy', metadata: { name }, spec: { store: storeName, full: { schedule: SCHEDULE } } });

function target(name: string, o: { engine?: 'postgres' | 'mysql'; port?: number; secret?: string; policy?: string; suspend?: boolean; databases?: string[] } = {}): Doc {
  const server = o.engine === 'mysql' ? myServer : pgServer;
  return {
    apiVersion: API,
    kind: 'BackupTarget',
    metadata: { name },
    spec: {
      engine: o.engine ?? 'postgres',
      endpoint: { host: server.host, port: o.port ?? server.port },
      ...(o.databases ? { databases: o.databases } : {}),
      credentials: { secretRef: { name: o.secret ?? 'pg' } },
      policy: o.policy ?? 'nightly',
      ...(o.suspend ? { suspend: true } : {}),
    },
  };
}

async function apply(docs: Doc[]) {
  const res = await h.call('restorer-admin', 'post', '/api/v1/resources', docs);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { applied: unknown[]; message: string; warnings: Array<Record<string, unknown>> };
}

async function status(kind: string, name: string) {
  const res = await h.call('viewer', 'get', `/api/v1/resources/${kind}/default/${name}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.status as { phase: string; message: string; observedGeneration: number; conditions: Condition[]; lastCheckTime?: string };
}

async function condition(kind: string, name: string, type = 'Ready'): Promise<Condition | undefined> {
  return (await status(kind, name)).conditions?.find((c) => c.type === type);
}

/** A port nothing listens on: one the system just handed out and took back. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The valid recipient with its last character changed: still the pattern, no longer the checksum. */
const corrupted = (r: string) => `${r.slice(0, -1)}${r.endsWith('q') ? 'p' : 'q'}`;

beforeAll(async () => {
  h = await startCatalogHarness('status');
  h.setNow(T0);
  ({ recipient, identity } = await generateAgeIdentity());
  closedPort = await freePort();
  await apply([
    secret('s3-creds', { accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey }),
    secret('age-identity', { identity }),
    secret('pg', { username: pgServer.username, password: pgServer.password }),
    store('good'),
    policy('nightly'),
  ]);
});
afterAll(async () => h?.close());

describe('stores and policies', () => {
  it('a store is Ready once its bucket answers and its encryption settings are valid, NotReady with the reason otherwise', async () => {
    expect(await status('BackupStore', 'good')).toMatchObject({ phase: 'Ready', message: '', observedGeneration: 1, lastCheckTime: T0.toISOString() });
    expect(await condition('BackupStore', 'good')).toMatchObject({ status: 'True', reason: 'Ready', observedGeneration: 1, lastTransitionTime: T0.toISOString() });

    const result = await apply([
      secret('s3-wrong', { accessKeyId: 'NOT-THE-KEY', secretAccessKey: 'not-the-secret' }),
      store('closed', { endpoint: `http://127.0.0.1:${closedPort}` }),
      store('wrong-keys', { secret: 's3-wrong' }),
      store('no-secret', { secret: 'nope' }),
      store('bad-recipient', { recipients: [recipient, corrupted(recipient)] }),
    ]);
    expect(result.warnings).toEqual([
      { document: 4, kind: 'BackupStore', namespace: 'default', name: 'no-secret', path: 'spec.s3.credentialsSecret.name', message: 'secret default/nope does not exist' },
      { document: 5, kind: 'BackupStore', namespace: 'default', name: 'bad-recipient', path: 'spec.encryption.ageRecipients[1]', message: expect.stringMatching(/not a valid age X25519 recipient/) },
    ]);
    expect(result.message).toMatch(/2 warning\(s\): BackupStore default\/no-secret: spec\.s3\.credentialsSecret\.name: secret default\/nope does not exist/);

    expect(await status('BackupStore', 'closed')).toMatchObject({ phase: 'NotReady', message: expect.stringContaining(`127.0.0.1:${closedPort}`) });
    expect(await condition('BackupStore', 'closed')).toMatchObject({ status: 'False', reason: 'BucketUnreachable' });
    expect(await condition('BackupStore', 'wrong-keys')).toMatchObject({ status: 'False', reason: 'AuthFailed' });
    expect(await condition('BackupStore', 'no-secret')).toMatchObject({ status: 'False', reason: 'SecretNotFound', message: 'secret default/nope does not exist' });
    expect(await condition('BackupStore', 'bad-recipient')).toMatchObject({ status: 'False', reason: 'InvalidRecipient' });
  });

  it('a policy is Ready when its store exists, NotReady with StoreNotFound and a warning otherwise', async () => {
    expect(await status('BackupPolicy', 'nightly')).toMatchObject({ phase: 'Ready', observedGeneration: 1 });
    const result = await apply([policy('orphan', 'missing-store')]);
    expect(result.warnings).toEqual([{ document: 1, kind: 'BackupPolicy', namespace: 'default', name: 'orphan', path: 'spec.store', message: expect.stringMatching(/store missing-store does not exist/) }]);
    expect(await status('BackupPolicy', 'orphan')).toMatchObject({ phase: 'NotReady', message: expect.stringMatching(/missing-store/) });
    expect(await condition('BackupPolicy', 'orphan')).toMatchObject({ status: 'False', reason: 'StoreNotFound' });
  });
});

describe('targets', () => {
  it('is Ready against the real Postgres and MariaDB, and says why not otherwise', async () => {
    const result = await apply([
      secret('maria', { username: myServer.username, password: myServer.password }),
      secret('maria-wrong', { username: myServer.username, password: 'not-the-password' }),
      secret('pg-nobody', { username: 'strata_no_such_role', password: 'x' }),
      target('pg-ok'),
      target('maria-ok', { engine: 'mysql', secret: 'maria' }),
      target('maria-wrong', { engine: 'mysql', secret: 'maria-wrong' }),
      target('pg-nobody', { secret: 'pg-nobody' }),
      target('pg-closed', { port: closedPort }),
      target('pg-no-db', { databases: ['strata_no_such_database'] }),
      target('no-policy', { policy: 'nope' }),
      target('no-secret', { secret: 'nope' }),
      target('paused', { suspend: true }),
    ]);
    expect(result.warnings).toEqual([
      { document: 10, kind: 'BackupTarget', namespace: 'default', name: 'no-policy', path: 'spec.policy', message: expect.stringMatching(/^policy nope does not exist/) },
      { document: 11, kind: 'BackupTarget', namespace: 'default', name: 'no-secret', path: 'spec.credentials.secretRef.name', message: 'secret default/nope does not exist' },
    ]);

    expect(await status('BackupTarget', 'pg-ok')).toMatchObject({ phase: 'Ready', message: '', observedGeneration: 1 });
    expect(await condition('BackupTarget', 'pg-ok')).toMatchObject({ status: 'True', reason: 'Ready', lastTransitionTime: T0.toISOString() });
    expect(await condition('BackupTarget', 'maria-ok')).toMatchObject({ status: 'True', reason: 'Ready' });
    expect(await condition('BackupTarget', 'maria-wrong')).toMatchObject({ status: 'False', reason: 'AuthFailed', message: expect.stringMatching(/Access denied/) });
    expect(await condition('BackupTarget', 'pg-nobody')).toMatchObject({ status: 'False', reason: 'AuthFailed', message: expect.stringMatching(/strata_no_such_role/) });
    expect(await condition('BackupTarget', 'pg-closed')).toMatchObject({ status: 'False', reason: 'Unreachable', message: expect.stringMatching(/ECONNREFUSED/) });
    expect(await condition('BackupTarget', 'pg-no-db')).toMatchObject({ status: 'False', reason: 'DatabaseNotFound' });
    expect(await condition('BackupTarget', 'no-policy')).toMatchObject({ status: 'False', reason: 'PolicyNotFound' });
    expect(await condition('BackupTarget', 'no-secret')).toMatchObject({ status: 'False', reason: 'SecretNotFound' });
    expect(await status('BackupTarget', 'paused')).toMatchObject({ phase: 'Suspended', message: expect.stringMatching(/suspended/) });
    expect(await condition('BackupTarget', 'paused')).toMatchObject({ status: 'False', reason: 'Suspended' });
    expect(await status('BackupTarget', 'pg-closed')).toMatchObject({ phase: 'NotReady', message: expect.stringMatching(/ECONNREFUSED/) });
  });

  it('counts every document of the apply: a target written before its policy gets no warning', async () => {
    const result = await apply([target('early', { policy: 'later' }), policy('later')]);
    expect(result.warnings).toEqual([]);
    expect(await condition('BackupTarget', 'early')).toMatchObject({ status: 'True', reason: 'Ready' });
  });

  it('checks the targets naming what changed: a deleted policy, a fixed secret', async () => {
    expect((await h.call('restorer-admin', 'delete', '/api/v1/resources/BackupPolicy/default/later')).status).toBe(200);
    expect(await condition('BackupTarget', 'early')).toMatchObject({ status: 'False', reason: 'PolicyNotFound' });
    h.setNow(at(2));
    expect((await h.call('restorer-admin', 'put', '/api/v1/secrets/default/maria-wrong', { data: { username: myServer.username, password: myServer.password } })).status).toBe(200);
    expect(await condition('BackupTarget', 'maria-wrong')).toMatchObject({ status: 'True', reason: 'Ready', lastTransitionTime: at(2).toISOString() });
  });

  it('moves lastTransitionTime only when a condition changes its status', async () => {
    const before = { ok: await condition('BackupTarget', 'pg-ok'), closed: await condition('BackupTarget', 'pg-closed') };
    h.setNow(at(10));
    await h.runtime.status.refreshDue();
    const ok = await condition('BackupTarget', 'pg-ok');
    const closed = await condition('BackupTarget', 'pg-closed');
    expect(ok).toMatchObject({ status: 'True', lastTransitionTime: before.ok?.lastTransitionTime });
    expect(closed).toMatchObject({ status: 'False', lastTransitionTime: before.closed?.lastTransitionTime });
    expect((await status('BackupStore', 'good')).lastCheckTime).toBe(at(10).toISOString());
  });

  it("checks again on the scheduler's tick every five minutes, not before", async () => {
    const user = `strata_status_${randomBytes(3).toString('hex')}`;
    const admin = await mysql.createConnection({ host: myServer.host, port: myServer.port, user: myServer.username, password: myServer.password });
    try {
      await admin.query(`CREATE USER '${user}'@'%' IDENTIFIED BY 'first-password'`);
      h.setNow(at(20));
      await apply([secret('maria-user', { username: user, password: 'first-password' }), target('maria-user', { engine: 'mysql', secret: 'maria-user' })]);
      expect(await condition('BackupTarget', 'maria-user')).toMatchObject({ status: 'True', lastTransitionTime: at(20).toISOString() });
      await admin.query(`ALTER USER '${user}'@'%' IDENTIFIED BY 'second-password'`);

      h.setNow(at(24));
      await h.runtime.tick();
      await h.runtime.status.refreshDue();
      expect(await condition('BackupTarget', 'maria-user')).toMatchObject({ status: 'True' });

      h.setNow(at(26));
      await h.runtime.tick();
      await h.runtime.status.refreshDue();
      expect(await condition('BackupTarget', 'maria-user')).toMatchObject({ status: 'False', reason: 'AuthFailed', lastTransitionTime: at(26).toISOString() });
    } finally {
      await admin.query(`DROP USER IF EXISTS '${user}'@'%'`);
      await admin.end();
    }
  });

  it('sets LastBackupSucceeded from the last finished run: False with the error after a failed report', async () => {
    h.setNow(at(30));
    const requested = await h.call('operator', 'post', '/api/v1/targets/default/pg-ok/backup-now', { reason: 'status test' });
    expect(requested.status, JSON.stringify(requested.body)).toBe(202);
    const row = await until(() => h.runtime.db.backup.findFirst({ where: { targetName: 'pg-ok' } }), (r) => r?.phase === 'Running');
    const id = randomUUID();
    const finishedAt = at(31).toISOString();
    const message = 'pg_dump: error: connection to server failed: FATAL: the database system is shutting down';
    await h.bus.publish(strataEventSubject('backup.failed', h.cell), { id, type: 'backup.failed', occurredAt: finishedAt, data: { backupId: row!.id, message, finishedAt } }, { msgId: id });

    const last = await until(() => condition('BackupTarget', 'pg-ok', 'LastBackupSucceeded'), (c) => c !== undefined);
    expect(last).toMatchObject({ status: 'False', reason: 'BackupFailed', message, observedGeneration: 1 });
    expect(await status('BackupTarget', 'pg-ok')).toMatchObject({ phase: 'Ready', message: `last backup failed: ${message}` });

    const backup = await h.call('viewer', 'get', `/api/v1/resources/Backup/default/${row!.name}`);
    expect(backup.status).toBe(200);
    expect(backup.body).toMatchObject({ kind: 'Backup', spec: { target: 'pg-ok', reason: 'status test' }, status: { phase: 'Failed', message, backupID: row!.id } });
    expect(backup.body.status.conditions).toEqual([expect.objectContaining({ type: 'Succeeded', status: 'False', reason: 'Failed', message })]);
  });
});

describe('GET /resources', () => {
  it('shows every resource with the phase and message of its status, each document valid for its kind', async () => {
    const res = await h.call('viewer', 'get', '/api/v1/resources');
    expect(res.status).toBe(200);
    const resources = res.body.resources as Array<{ kind: string; metadata: { name: string }; status: { phase?: string; message?: string } }>;
    expect(resources.length).toBeGreaterThan(10);
    for (const resource of resources) {
      expect(resource.status.phase, `${resource.kind} ${resource.metadata.name}`).toMatch(/^(Ready|NotReady|Suspended)$/);
      const valid = validateResource(resource);
      expect(valid.ok, JSON.stringify(valid.ok ? '' : valid.errors)).toBe(true);
    }
    const find = (kind: string, name: string) => resources.find((r) => r.kind === kind && r.metadata.name === name);
    expect(find('BackupTarget', 'no-policy')?.status).toMatchObject({ phase: 'NotReady', message: expect.stringMatching(/policy nope does not exist/) });
    expect(find('BackupStore', 'good')?.status).toMatchObject({ phase: 'Ready', message: '' });

    const backups = await h.call('viewer', 'get', '/api/v1/resources?kind=Backup');
    expect(backups.status).toBe(200);
    expect(backups.body.resources).toHaveLength(1);
    for (const doc of backups.body.resources) {
      const valid = validateResource(doc);
      expect(valid.ok, JSON.stringify(valid.ok ? '' : valid.errors)).toBe(true);
    }
    expect((await h.call('viewer', 'get', '/api/v1/resources?kind=Restore')).body.resources).toEqual([]);
  });
});

describe('Restore documents', () => {
  it('carry the spec they were asked with and the phase of their run', async () => {
    const backup = await h.runtime.db.backup.create({
      data: {
        id: `20260101t000000z-${randomBytes(4).toString('hex')}`,
        namespace: 'default',
        name: 'pg-ok-restorable',
        targetName: 'pg-ok',
        store: 'good',
        policy: 'nightly',
        engine: 'postgres',
        phase: 'Succeeded',
        queuedAt: at(-60),
        startedAt: at(-60),
        completedAt: at(-59),
        manifestKey: 'strata/default/pg-ok/x/manifest.json',
        manifest: { consistentAt: at(-60).toISOString(), databases: ['app'], objects: [{ key: 'strata/default/pg-ok/x/data/app.pgdump.zst.age', sha256: '00', role: 'data', database: 'app', compression: 'zstd' }] },
      },
    });
    const download = await h.call('restorer', 'post', '/api/v1/restores', { target: 'default/pg-ok', backupID: backup.id, mode: 'download' });
    expect(download.status, JSON.stringify(download.body)).toBe(202);
    const into = await h.call('restorer', 'post', '/api/v1/restores', { target: 'default/pg-ok', backupID: backup.id, mode: 'new', host: pgServer.host, port: pgServer.port, database: 'restored_app', credentialsSecret: 'default/pg' });
    expect(into.status, JSON.stringify(into.body)).toBe(202);

    const listed = await h.call('viewer', 'get', '/api/v1/resources?kind=Restore');
    expect(listed.body.resources.map((r: { metadata: { name: string } }) => r.metadata.name)).toEqual([into.body.name, download.body.name]);
    for (const doc of listed.body.resources) {
      const valid = validateResource(doc);
      expect(valid.ok, JSON.stringify(valid.ok ? '' : valid.errors)).toBe(true);
    }
    const restore = await h.call('viewer', 'get', `/api/v1/resources/Restore/default/${into.body.name}`);
    expect(restore.body).toMatchObject({
      kind: 'Restore',
      spec: { target: 'pg-ok', source: { backupID: backup.id }, destination: { mode: 'new', new: { endpoint: { host: pgServer.host, port: pgServer.port }, database: 'restored_app', credentialsSecretRef: { name: 'pg' } } } },
      status: { phase: 'Running', message: 'handed to a mover', conditions: [{ type: 'Succeeded', status: 'Unknown', reason: 'Running' }] },
    });
    const ready = await h.call('viewer', 'get', `/api/v1/resources/Restore/default/${download.body.name}`);
    expect(ready.body.status).toMatchObject({ phase: 'Succeeded', downloadURL: expect.stringMatching(/^http/), conditions: [{ type: 'Succeeded', status: 'True' }] });
    expect((await h.call('viewer', 'get', '/api/v1/resources/Restore/default/nope')).status).toBe(404);
  });
});
