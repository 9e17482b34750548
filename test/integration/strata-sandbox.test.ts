import { randomBytes } from 'node:crypto';
import pg from 'pg';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger, testPostgresAdminUrl } from '@sigil/kit/testing';
import { startWorker, type Worker } from '@strata/mover';
import { generateAgeIdentity } from '@strata/stream';
import { accessFromUrl, createMysqlFixture, createPostgresFixture, dropMysqlDatabase, dropPostgresDatabase, uniqueDatabaseName } from '@strata/mover/testing';
import { stackDocuments, startCatalogHarness, type CatalogHarness } from '@strata/backup-catalog/testing';
import { serve, startSandboxHarness, type SandboxHarness } from '@strata/sandbox/testing';
import { waitFor } from './wait.ts';
import { strataConsoleSubject } from '@sigil/proto/strata-jobs';

/**
 * Sandboxes for real: the catalog, a mover and the sandbox service in this process; the sandbox service starts real
 * servers (postgres, mariadbd) and the mover restores into them from the S3 store of the test setup.
 */
const pgAdmin = testPostgresAdminUrl();
const mysqlAdmin = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';
const pgSource = accessFromUrl(pgAdmin);
const mySource = accessFromUrl(mysqlAdmin);
const bucket = `strata-sbx-${randomBytes(3).toString('hex')}`;
const pgDb = uniqueDatabaseName('sbxpg');
const myDb = uniqueDatabaseName('sbxmy');

let h: CatalogHarness;
let s: SandboxHarness;
let worker: Worker;
let catalogServer: { url: string; close(): Promise<void> };
let docsOptions: Parameters<typeof stackDocuments>[0];

/** What the console hears about sandboxes (`strataConsoleSubject`) from now on: each event, in order. */
async function consoleEvents() {
  const heard: Array<{ kind: string; name: string; phase: string; message: string }> = [];
  const listening = await s.bus.listen(strataConsoleSubject(h.cell), (event) => void heard.push(event as (typeof heard)[number]));
  return { of: (name: string) => heard.filter((e) => e.kind === 'sandbox' && e.name === name), stop: () => listening.unsubscribe() };
}

async function backupNow(target: string) {
  const res = await h.call('operator', 'post', `/api/v1/targets/default/${target}/backup-now`, { reason: 'sandbox test' });
  expect(res.status).toBe(202);
  const row = await waitFor(`backup ${res.body.name}`, async () => {
    const found = await h.runtime.db.backup.findFirst({ where: { name: res.body.name } });
    return found && (found.phase === 'Succeeded' || found.phase === 'Failed') ? found : undefined;
  });
  expect(row.phase, row.message).toBe('Succeeded');
  return row;
}

/** Drives the reconciler until the sandbox reaches one of `phases`. */
const sandboxIn = (name: string, phases: string[]) => s.untilPhase(name, phases);

/** The customers of a source database, counted on the source server. */
async function customersIn(engine: 'postgres' | 'mysql', database: string): Promise<number> {
  if (engine === 'postgres') {
    const client = new pg.Client({ connectionString: pgAdmin.replace(/\/[^/]*$/, `/${database}`) });
    await client.connect();
    const n = Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM customers')).rows[0]?.n);
    await client.end();
    return n;
  }
  const connection = await mysql.createConnection(`${mysqlAdmin.replace(/\/$/, '')}/${database}`);
  const [rows] = await connection.query('SELECT count(*) AS n FROM customers');
  await connection.end();
  return Number((rows as Array<{ n: number }>)[0]?.n);
}

async function createSandbox(body: Record<string, unknown>): Promise<string> {
  const res = await s.call('restorer', 'post', '/api/v1/sandboxes', { mode: 'sandbox', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect(res.body).toMatchObject({ kind: 'Sandbox', name: expect.stringMatching(/-sbx-[0-9a-f]{6}$/) });
  return res.body.name as string;
}

beforeAll(async () => {
  const { identity, recipient } = await generateAgeIdentity();
  await Promise.all([createPostgresFixture(pgAdmin, pgDb, { rows: 40, largeRowBytes: 64 * 1024 }), createMysqlFixture(mysqlAdmin, myDb, { rows: 40, largeRowBytes: 64 * 1024 })]);
  h = await startCatalogHarness('sandbox');
  catalogServer = await serve(h.app);
  worker = await startWorker({ bus: h.bus, log: silentLogger(), secretsKey: h.secretsKey, concurrency: 2, consumerPrefix: h.cell });
  s = await startSandboxHarness({ name: 'sandbox_it', auth: h.auth, catalogUrl: catalogServer.url, cell: h.cell, maxTtl: '6h', secretsKey: h.secretsKey });
  docsOptions = {
    bucket,
    recipients: [recipient],
    identity,
    postgres: { host: '127.0.0.1', port: pgSource.port, username: pgSource.username, password: pgSource.password },
    mysql: { host: '127.0.0.1', port: mySource.port, username: mySource.username, password: mySource.password },
    databases: { postgres: [pgDb], mysql: [myDb] },
    postgresMode: 'logical',
    mask: ['^email$'],
    targetSandbox: { postRestoreSQL: ['CREATE TABLE strata_post_restore (ran_at text)'] },
    policySandbox: { defaultTTL: '2h', maxTTL: '6h' },
  };
  const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', stackDocuments(docsOptions), 'application/yaml');
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  await h.runtime.mirror();
}, 300_000);

afterAll(async () => {
  await s?.close();
  await worker?.stop();
  await catalogServer?.close();
  await h?.close();
  await Promise.all([dropPostgresDatabase(pgAdmin, pgDb), dropMysqlDatabase(mysqlAdmin, myDb)]);
});

describe.each([
  { engine: 'postgres' as const, target: 'postgres-main', database: pgDb },
  { engine: 'mysql' as const, target: 'mysql-main', database: myDb },
])('$engine sandbox', ({ engine, target, database }) => {
  let name: string;
  let backupId: string;

  it('restores the latest backup into a server of its own and becomes Ready', async () => {
    backupId = (await backupNow(target)).id;
    const events = await consoleEvents();
    name = await createSandbox({ target: `default/${target}` });
    const pending = await s.call('viewer', 'get', `/api/v1/sandboxes/${name}`);
    expect(pending.body.sandbox).toMatchObject({ name, namespace: 'default', engine, target: `default/${target}`, backupID: backupId, owner: 'restorer@example.test' });
    const sandbox = await sandboxIn(name, ['Ready', 'Failed']);
    expect(sandbox.phase, sandbox.message).toBe('Ready');
    expect(sandbox).toMatchObject({ database, databases: [database], host: '127.0.0.1', port: expect.any(Number), sizeLimit: '1Gi', restore: expect.stringContaining(name) });
    expect(sandbox.message).toContain('ran 1 post-restore statement');
    // Open console pages hear it appear, start restoring and become Ready, without reading it again meanwhile.
    await expect.poll(() => events.of(name).map((e) => e.phase).join(' '), { timeout: 5000 }).toMatch(/^Pending.*Restoring.*Ready$/);
    events.stop();
    expect(Date.parse(sandbox.expires) - Date.parse(sandbox.created)).toBe(2 * 3600_000);
    const restore = await h.call('viewer', 'get', `/api/v1/restores/default/${sandbox.restore}`);
    expect(restore.body.restore).toMatchObject({ mode: 'sandbox', sandbox: name, phase: 'Succeeded' });
  }, 300_000);

  it('gives credentials that reach the restored data, and audits the read', async () => {
    const res = await s.call('restorer', 'get', `/api/v1/sandboxes/${name}/credentials`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ engine, database, host: '127.0.0.1', username: expect.any(String), password: expect.any(String) });
    let count: number;
    if (engine === 'postgres') {
      const client = new pg.Client({ host: res.body.host, port: res.body.port, user: res.body.username, password: res.body.password, database });
      await client.connect();
      count = Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM customers')).rows[0]?.n);
      await client.end();
    } else {
      const connection = await mysql.createConnection({ host: res.body.host, port: res.body.port, user: res.body.username, password: res.body.password, database });
      count = Number(((await connection.query('SELECT count(*) AS n FROM customers'))[0] as Array<{ n: number }>)[0]?.n);
      await connection.end();
    }
    expect(count).toBe(await customersIn(engine, database));
    const audit = await waitFor('audit of the credentials', async () => {
      const list = await h.call('operator', 'get', '/api/v1/audit?action=getSandboxCredentials');
      return list.body.events.find((e: { object: string }) => e.object === name);
    });
    expect(audit).toMatchObject({ user: 'restorer@example.test', outcome: 'ok', target: `default/${target}` });
  });

  it('answers queries with the target\'s masks, as JSON and as a text table', async () => {
    const res = await s.call('restorer', 'post', `/api/v1/sandboxes/${name}/query`, { sql: 'SELECT id, email AS e, name FROM customers ORDER BY id', limit: 5 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ columns: ['id', 'e', 'name'], truncated: true, masked: ['e'] });
    expect(res.body.rows).toHaveLength(5);
    expect(res.body.rows.every((row: string[]) => row[1] === '***')).toBe(true);
    const refused = await s.call('restorer', 'post', `/api/v1/sandboxes/${name}/query`, { sql: 'SELECT upper(email) FROM customers' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).not.toMatch(/@/);
    const text = await s.call('restorer', 'post', `/api/v1/sandboxes/${name}/query`, { sql: 'SELECT id, name FROM customers ORDER BY id', limit: 2 }, 'text/plain');
    expect(text.status).toBe(200);
    expect(text.headers['content-type']).toMatch(/^text\/plain/);
    expect(text.text).toMatch(/^\s*id\s*\|\s*name/);
    const write = await s.call('restorer', 'post', `/api/v1/sandboxes/${name}/query`, { sql: "INSERT INTO strata_post_restore VALUES ('x')" });
    expect(write.status).toBe(400);
    expect(write.body.error).toMatch(/read.only/i);
    const written = await s.call('restorer', 'post', `/api/v1/sandboxes/${name}/query`, { sql: "INSERT INTO strata_post_restore VALUES ('x')", write: true });
    expect(written.status, JSON.stringify(written.body)).toBe(200);
    expect(written.body.affected).toBe(1);
  });

  it('lists tables and browses one, masked', async () => {
    const tables = await s.call('restorer', 'get', `/api/v1/sandboxes/${name}/tables`);
    expect(tables.status).toBe(200);
    const customers = tables.body.tables.find((t: { name: string }) => t.name === 'customers');
    expect(customers.columns).toContain('email');
    const browse = await s.call('restorer', 'get', `/api/v1/sandboxes/${name}/tables/${customers.fullName}`);
    expect(browse.status).toBe(200);
    expect(browse.body.rows).toHaveLength(Math.min(50, await customersIn(engine, database)));
    expect(browse.body.masked).toEqual(['email']);
  });

  it('extends up to the policy\'s maxTTL and records each extension', async () => {
    const before = (await s.call('viewer', 'get', `/api/v1/sandboxes/${name}`)).body.sandbox;
    const events = await consoleEvents();
    const res = await s.call('restorer', 'post', `/api/v1/sandboxes/${name}/extend`, { by: '1h', reason: 'more testing' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await expect.poll(() => events.of(name).map((e) => e.message), { timeout: 5000 }).toEqual([res.body.message]);
    events.stop();
    const after = (await s.call('viewer', 'get', `/api/v1/sandboxes/${name}`)).body.sandbox;
    expect(Date.parse(after.expires) - Date.parse(before.expires)).toBe(3600_000);
    const capped = await s.call('restorer', 'post', `/api/v1/sandboxes/${name}/extend`, { by: '30d' });
    expect(capped.status).toBe(200);
    expect(capped.body.message).toMatch(/capped/);
    const last = (await s.call('viewer', 'get', `/api/v1/sandboxes/${name}`)).body.sandbox;
    expect(Date.parse(last.expires) - Date.now()).toBeLessThanOrEqual(6 * 3600_000);
    expect(last.extensions).toEqual([expect.objectContaining({ by: '1h', granted: '1h', reason: 'more testing', user: 'restorer@example.test' }), expect.objectContaining({ by: '30d' })]);
    const refused = await s.call('restorer', 'post', `/api/v1/sandboxes/${name}/extend`, { by: '1h' });
    expect(refused.status).toBe(422);
  });

  it('is reset: recreated empty and restored again, with the same credentials and expiry', async () => {
    const before = (await s.call('viewer', 'get', `/api/v1/sandboxes/${name}`)).body.sandbox;
    const credentials = (await s.call('restorer', 'get', `/api/v1/sandboxes/${name}/credentials`)).body;
    const written = await s.call('restorer', 'post', `/api/v1/sandboxes/${name}/query`, { sql: 'SELECT count(*) AS n FROM strata_post_restore' });
    expect(written.body.rows).toEqual([['1']]);
    const res = await s.call('restorer', 'post', `/api/v1/sandboxes/${name}/reset`, { reason: 'start over' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ kind: 'Sandbox', name, message: expect.stringContaining(`backup ${backupId}`) });
    const again = await s.call('restorer', 'post', `/api/v1/sandboxes/${name}/reset`, {});
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/Pending; only a Ready sandbox can be reset/);
    const pending = (await s.call('viewer', 'get', `/api/v1/sandboxes/${name}`)).body.sandbox;
    expect(pending).toMatchObject({ phase: 'Pending', resetGeneration: 1, observedResetGeneration: 0 });
    const sandbox = await sandboxIn(name, ['Ready', 'Failed']);
    expect(sandbox.phase, sandbox.message).toBe('Ready');
    expect(sandbox).toMatchObject({ resetGeneration: 1, observedResetGeneration: 1, backupID: backupId, expires: before.expires, extensions: before.extensions, database });
    expect(sandbox.restore).not.toBe(before.restore);
    const restore = await h.call('viewer', 'get', `/api/v1/restores/default/${sandbox.restore}`);
    expect(restore.body.restore).toMatchObject({ mode: 'sandbox', sandbox: name, phase: 'Succeeded' });
    // What was written is gone; the post-restore statements ran again on the fresh copy.
    const after = await s.call('restorer', 'post', `/api/v1/sandboxes/${name}/query`, { sql: 'SELECT count(*) AS n FROM strata_post_restore' });
    expect(after.body.rows).toEqual([['0']]);
    const customers = await s.call('restorer', 'post', `/api/v1/sandboxes/${name}/query`, { sql: 'SELECT count(*) AS n FROM customers' });
    expect(customers.body.rows).toEqual([[String(await customersIn(engine, database))]]);
    const same = (await s.call('restorer', 'get', `/api/v1/sandboxes/${name}/credentials`)).body;
    expect({ username: same.username, password: same.password }).toEqual({ username: credentials.username, password: credentials.password });
    // Both the reset and the refused second one are in the console's audit log.
    const audit = await waitFor('audit of the reset', async () => {
      const list = await h.call('operator', 'get', '/api/v1/audit?action=resetSandbox');
      const mine = list.body.events.filter((e: { object: string }) => e.object === name);
      return mine.length === 2 ? mine : undefined;
    });
    expect(audit.map((e: { outcome: string }) => e.outcome).sort()).toEqual(['conflict', 'ok']);
    expect(audit.every((e: { user: string }) => e.user === 'restorer@example.test')).toBe(true);
  }, 300_000);

  it('is refused to a viewer where it needs restorer', async () => {
    for (const [method, path, body] of [
      ['post', '/api/v1/sandboxes', { target: `default/${target}`, mode: 'sandbox' }],
      ['get', `/api/v1/sandboxes/${name}/credentials`, undefined],
      ['post', `/api/v1/sandboxes/${name}/query`, { sql: 'SELECT 1' }],
      ['post', `/api/v1/sandboxes/${name}/extend`, { by: '1h' }],
      ['post', `/api/v1/sandboxes/${name}/reset`, {}],
      ['delete', `/api/v1/sandboxes/${name}`, undefined],
      ['get', `/api/v1/sandboxes/${name}/tables`, undefined],
    ] as const) {
      const res = await s.call('viewer', method, path, body);
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    expect((await s.call('viewer', 'get', '/api/v1/sandboxes')).status).toBe(200);
  });

  it('is deleted: its server stops, its data goes, it answers 404, and the console hears it gone', async () => {
    const row = await s.db.sandbox.findFirstOrThrow({ where: { name } });
    const dir = (row.runtime as { dir: string }).dir;
    const heard: Array<{ kind: string; name: string; phase: string }> = [];
    const listening = await s.bus.listen(strataConsoleSubject(h.cell), (event) => void heard.push(event as (typeof heard)[number]));
    const res = await s.call('restorer', 'delete', `/api/v1/sandboxes/${name}`);
    expect(res.status).toBe(200);
    await s.untilPhase(name, ['Gone']);
    await expect.poll(() => heard.some((e) => e.kind === 'sandbox' && e.name === name && e.phase === 'Deleted'), { timeout: 5000 }).toBe(true);
    listening.unsubscribe();
    const { existsSync } = await import('node:fs');
    expect(existsSync(dir)).toBe(false);
  });
});

describe('lifetimes', () => {
  it('expires a sandbox when its time comes, even across a restart of the service', async () => {
    const name = await createSandbox({ target: 'default/postgres-main', ttl: '30m' });
    const ready = await sandboxIn(name, ['Ready', 'Failed']);
    expect(ready.phase, ready.message).toBe('Ready');
    // The service stops; a new one on the same database and folder carries on.
    await s.stop();
    s = await startSandboxHarness({ name: 'sandbox_it', auth: h.auth, catalogUrl: catalogServer.url, cell: h.cell, databaseUrl: s.databaseUrl, baseDir: s.baseDir, secretsKey: s.secretsKey });
    s.setNow(new Date(Date.parse(ready.expires) + 1000));
    const expired = await sandboxIn(name, ['Expired']);
    expect(expired.message).toMatch(/expired at/);
  }, 300_000);

  it('creates the sandbox a restore in mode sandbox names (POST /restores)', async () => {
    const res = await h.call('restorer', 'post', '/api/v1/restores', { target: 'default/postgres-main', mode: 'sandbox', ttl: '1h' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.kind).toBe('Restore');
    const restore = (await h.call('viewer', 'get', `/api/v1/restores/default/${res.body.name}`)).body.restore;
    expect(restore).toMatchObject({ mode: 'sandbox', sandbox: expect.stringMatching(/^postgres-main-sbx-/) });
    const sandbox = await sandboxIn(restore.sandbox, ['Ready', 'Failed']);
    expect(sandbox.phase, sandbox.message).toBe('Ready');
    expect(Date.parse(sandbox.expires) - Date.parse(sandbox.created)).toBe(3600_000);
  }, 300_000);

  it('stops a sandbox that outgrows its size limit, with a message that says so', async () => {
    const small = stackDocuments({ ...docsOptions, targetSandbox: { sizeLimit: '8Mi' } });
    expect((await h.call('restorer-admin', 'post', '/api/v1/resources', small, 'application/yaml')).status).toBe(200);
    const name = await createSandbox({ target: 'default/postgres-main' });
    const failed = await sandboxIn(name, ['Failed', 'Ready']);
    expect(failed.phase).toBe('Failed');
    expect(failed.sizeLimit).toBe('8Mi');
    expect(failed.message).toMatch(/over its size limit of 8Mi/);
  }, 300_000);
});

describe('verification restores', () => {
  let minutesAhead = 0;
  async function verifyOnce(target: string) {
    // The catalog's clock moves past another minute: the verify schedule is due again (for every target).
    minutesAhead += 2;
    h.setNow(new Date(Date.now() + minutesAhead * 60_000));
    try {
      expect(await h.runtime.verifier.tick()).toBeGreaterThanOrEqual(1);
    } finally {
      h.setNow(undefined as never);
    }
    return await verificationOf(target);
  }

  async function verificationOf(target: string) {
    const restore = await waitFor('the verification restore', async () => {
      await s.reconciler.pass();
      const row = await h.runtime.db.restore.findFirst({ where: { targetName: target, reason: 'scheduled verification' }, orderBy: { createdAt: 'desc' } });
      return row && (row.phase === 'Succeeded' || row.phase === 'Failed') ? row : undefined;
    }, 240_000);
    return restore;
  }

  it('restores the latest backup into a throwaway sandbox, runs the checks and marks the backup verified', async () => {
    const options = { ...docsOptions, verify: { schedule: '* * * * *', randomPointInTime: false }, targetChecks: [{ name: 'customers-exist', sql: 'SELECT count(*) > 0 FROM customers' }] };
    expect((await h.call('restorer-admin', 'post', '/api/v1/resources', stackDocuments(options), 'application/yaml')).status).toBe(200);
    const restore = await verifyOnce('postgres-main');
    expect(restore.phase, restore.message).toBe('Succeeded');
    const view = (await h.call('viewer', 'get', `/api/v1/restores/default/${restore.name}`)).body.restore;
    expect(view.mode).toBe('sandbox');
    expect(view.checks.map((c: { name: string }) => c.name)).toEqual(['inventory-matches', 'schema-matches', 'row-estimates-within-10pct', 'target-checks:customers-exist']);
    expect(view.checks.every((c: { passed: boolean }) => c.passed), JSON.stringify(view.checks)).toBe(true);
    const backup = (await h.call('viewer', 'get', `/api/v1/backups/${restore.backupId}`)).body;
    expect(backup.backup ?? backup).toMatchObject({ verified: true, verifyFailed: false });
    const tags = (await h.call('viewer', 'get', `/api/v1/backups/${restore.backupId}/tags`));
    if (tags.status === 200) expect(tags.body).toMatchObject({ verified: true, verifiedAt: expect.any(String), verifyRTOSeconds: expect.any(Number) });
    const target = (await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main')).body;
    expect(JSON.stringify(target)).toContain('"lastVerification"');
    // Its sandbox is gone once the checks are in.
    const sandboxName = view.sandbox as string;
    await s.untilPhase(sandboxName, ['Gone']);
    // The same pass verified the MariaDB target.
    const mysqlRestore = await verificationOf('mysql-main');
    expect(mysqlRestore.phase, mysqlRestore.message).toBe('Succeeded');
    expect((mysqlRestore.checks as Array<{ name: string; passed: boolean }>).map((c) => [c.name, c.passed])).toEqual([
      ['inventory-matches', true], ['schema-matches', true], ['row-estimates-within-10pct', true], ['target-checks:customers-exist', true],
    ]);
    expect(await h.runtime.db.backup.findUniqueOrThrow({ where: { id: mysqlRestore.backupId } })).toMatchObject({ verified: true, verifyFailed: false });
  }, 300_000);

  it('marks the backup verifyFailed when a check fails', async () => {
    const options = { ...docsOptions, verify: { schedule: '* * * * *', randomPointInTime: false, checks: ['target-checks'] }, targetChecks: [{ name: 'impossible', sql: 'SELECT count(*) > 1000000 FROM customers' }] };
    expect((await h.call('restorer-admin', 'post', '/api/v1/resources', stackDocuments(options), 'application/yaml')).status).toBe(200);
    const restore = await verifyOnce('postgres-main');
    const view = (await h.call('viewer', 'get', `/api/v1/restores/default/${restore.name}`)).body.restore;
    expect(view.checks).toEqual([expect.objectContaining({ name: 'target-checks:impossible', passed: false, message: expect.stringMatching(/not true/) })]);
    const row = await h.runtime.db.backup.findUniqueOrThrow({ where: { id: restore.backupId } });
    expect(row).toMatchObject({ verified: false, verifyFailed: true });
  }, 300_000);

  it('runs checks on an ordinary restore into a new database when asked', async () => {
    const name = uniqueDatabaseName('sbxchk');
    try {
      const res = await h.call('restorer', 'post', '/api/v1/restores', {
        target: 'default/postgres-main', mode: 'new', host: '127.0.0.1', port: pgSource.port, database: name, credentialsSecret: 'postgres-credentials', checks: ['inventory-matches', 'schema-matches'],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      const restore = await waitFor('the restore', async () => {
        const row = await h.runtime.db.restore.findFirst({ where: { name: res.body.name } });
        return row && (row.phase === 'Succeeded' || row.phase === 'Failed') ? row : undefined;
      });
      expect(restore.phase, restore.message).toBe('Succeeded');
      expect(restore.checks).toEqual([expect.objectContaining({ name: 'inventory-matches', passed: true }), expect.objectContaining({ name: 'schema-matches', passed: true })]);
      const unknown = await h.call('restorer', 'post', '/api/v1/restores', { target: 'default/postgres-main', mode: 'new', host: '127.0.0.1', port: pgSource.port, database: `${name}x`, credentialsSecret: 'postgres-credentials', checks: ['no-such-check'] });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toMatch(/no-such-check/);
    } finally {
      await dropPostgresDatabase(pgAdmin, name);
    }
  }, 300_000);
});

