import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '@strata/cli';
import { driverFor } from '@strata/mover/engines';
import { accessFromUrl, createMysqlFixture, createPostgresFixture, dropMysqlDatabase, dropPostgresDatabase, uniqueDatabaseName } from '@strata/mover/testing';
import { call, startTestStack, type TestStack } from './stack.ts';
import { waitFor } from '../integration/wait.ts';

/**
 * The story of a new user, through the gateway and the `strata` CLI: log in with the dev issuer, apply a
 * store, a policy and targets for a local Postgres and MariaDB, back up on demand while watching progress,
 * list the backup, restore it into a new database equal to its source, and find it all in activity and audit.
 */
const pgAdmin = process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const mysqlAdmin = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';
const pg = accessFromUrl(pgAdmin);
const my = accessFromUrl(mysqlAdmin);
const sources = { postgres: uniqueDatabaseName('e2epg'), mysql: uniqueDatabaseName('e2emy') };
const restored: Array<{ engine: 'postgres' | 'mysql'; name: string }> = [];
/** The targets `strata quickstart` writes. */
const TARGET = { postgres: 'postgres', mysql: 'mariadb' } as const;

const execFileAsync = promisify(execFile);

let stack: TestStack;
let configDir: string;

async function strata(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  const code = await runCli(args, { stdout, stderr, env: { STRATA_CONFIG: path.join(configDir, 'config.json'), HOME: configDir } });
  return { code, out, err };
}

beforeAll(async () => {
  configDir = mkdtempSync(path.join(tmpdir(), 'strata-cli-'));
  await Promise.all([
    createPostgresFixture(pgAdmin, sources.postgres, { rows: 40, largeRowBytes: 512 * 1024 }),
    createMysqlFixture(mysqlAdmin, sources.mysql, { rows: 40, largeRowBytes: 512 * 1024 }),
  ]);
  stack = await startTestStack();
}, 240_000);

afterAll(async () => {
  await stack?.stop();
  await dropPostgresDatabase(pgAdmin, sources.postgres);
  await dropMysqlDatabase(mysqlAdmin, sources.mysql);
  for (const r of restored) await (r.engine === 'postgres' ? dropPostgresDatabase(pgAdmin, r.name) : dropMysqlDatabase(mysqlAdmin, r.name));
});

describe('a new user backs up and restores with the strata CLI', () => {
  it('logs in through the dev issuer', async () => {
    const login = await strata('login', '--server', stack.gatewayUrl, '--email', 'ops@example.test');
    expect(login.code, login.err).toBe(0);
    const whoami = await strata('whoami', '-o', 'json');
    expect(whoami.code, whoami.err).toBe(0);
    expect(JSON.parse(whoami.out).principal).toMatchObject({ email: 'ops@example.test', role: 'restorer-admin' });
    expect(JSON.parse(whoami.out).externalURL).toBe(stack.gatewayUrl);
  });

  it('gets a store, a policy and targets for the stack\'s Postgres and MariaDB from `strata quickstart --apply`', async () => {
    const file = path.join(configDir, 'stack.yaml');
    const quickstart = await strata(
      'quickstart', '--stack', stack.stateDir, '--file', file, '--apply',
      '--bucket', `${stack.namespace.replace(/_/g, '-')}backups`.replace(/-+$/, ''),
      '--postgres-databases', sources.postgres, '--mysql-databases', sources.mysql,
    );
    expect(quickstart.code, quickstart.err).toBe(0);
    expect(quickstart.out).toMatch(/backuptarget\/default\/postgres created/i);
    expect(quickstart.out).toMatch(/backuptarget\/default\/mariadb created/i);
    const targets = await strata('targets', '-o', 'json');
    expect(JSON.parse(targets.out).targets.map((t: { name: string }) => t.name).sort()).toEqual(['mariadb', 'postgres']);
    // The stack here shares its database servers with every other test: logical dumps of the two databases, no
    // change capture of everything the suite writes (point-in-time restore: test/integration/strata-pitr*.test.ts).
    const overrides = path.join(configDir, 'logical.yaml');
    writeFileSync(overrides, [
      'apiVersion: backups.strata.dev/v1alpha1\nkind: BackupPolicy\nmetadata: { name: nightly, namespace: default }\nspec: { store: local, full: { schedule: "0 3 * * *" }, retain: { daily: 7, weekly: 4 } }',
      `apiVersion: backups.strata.dev/v1alpha1\nkind: BackupTarget\nmetadata: { name: postgres, namespace: default }\nspec: { engine: postgres, endpoint: { host: 127.0.0.1, port: ${pg.port} }, databases: [${sources.postgres}], credentials: { secretRef: { name: postgres-credentials } }, policy: nightly, scope: { mode: logical } }`,
    ].join('\n---\n'));
    const applied = await strata('apply', '-f', overrides);
    expect(applied.code, applied.err).toBe(0);
  });

  for (const engine of ['postgres', 'mysql'] as const) {
    it(`backs up ${engine} on demand, watching progress, and restores it into an equal new database`, async () => {
      const target = `default/${TARGET[engine]}`;
      const backup = await strata('backup-now', target, '--reason', 'first backup', '--watch', '--timeout', '3m');
      expect(backup.code, backup.err + backup.out).toBe(0);
      expect(backup.out).toMatch(/Succeeded/);
      const list = await strata('backups', target, '-o', 'json');
      const backups = JSON.parse(list.out).backups;
      expect(backups).toHaveLength(1);
      expect(backups[0]).toMatchObject({ engine, reason: 'first backup', databases: [sources[engine]] });

      const name = uniqueDatabaseName(`e2er${engine.slice(0, 2)}`);
      restored.push({ engine, name });
      const access = engine === 'postgres' ? pg : my;
      const restore = await strata('restore', target, '--mode', 'new', '--host', '127.0.0.1', '--port', String(access.port), '--database', name, '--credentials-secret', `${TARGET[engine]}-credentials`, '--watch', '--timeout', '3m');
      expect(restore.code, restore.err + restore.out).toBe(0);
      const driver = driverFor(engine);
      expect(await driver.tableChecksums(access, name)).toEqual(await driver.tableChecksums(access, sources[engine]));
    }, 400_000);
  }

  it('opens a sandbox of the backup, queries it with masks, connects psql through `strata connect`, extends and deletes it', async () => {
    const masked = `apiVersion: backups.strata.dev/v1alpha1\nkind: BackupTarget\nmetadata: { name: postgres, namespace: default }\nspec: { engine: postgres, endpoint: { host: 127.0.0.1, port: ${pg.port} }, databases: [${sources.postgres}], credentials: { secretRef: { name: postgres-credentials } }, policy: nightly, scope: { mode: logical }, mask: ['^email$'] }`;
    const maskFile = path.join(configDir, 'masked.yaml');
    writeFileSync(maskFile, masked);
    expect((await strata('apply', '-f', maskFile)).code).toBe(0);
    const created = await strata('sandbox', 'create', 'default/postgres', '--ttl', '1h', '--expose', '--watch', '--timeout', '4m', '-o', 'json');
    expect(created.code, created.err + created.out).toBe(0);
    const name = JSON.parse(created.out.trim().split('\n')[0] as string).name as string;
    try {
      const query = await strata('sandbox', 'query', name, 'SELECT id, email FROM customers ORDER BY id', '--limit', '3', '-o', 'json');
      expect(query.code, query.err).toBe(0);
      expect(JSON.parse(query.out)).toMatchObject({ columns: ['id', 'email'], masked: ['email'], truncated: true });
      const refused = await strata('sandbox', 'query', name, "SELECT id FROM customers WHERE email LIKE 'a%'");
      expect(refused.code).toBe(1);
      const credentials = JSON.parse((await strata('sandbox', 'credentials', name, '-o', 'json')).out);
      const controller = new AbortController();
      const stdout = new PassThrough();
      let tunnelOut = '';
      stdout.on('data', (c) => (tunnelOut += c));
      const tunnel = runCli(['connect', name, '-o', 'json'], { stdout, stderr: new PassThrough(), env: { STRATA_CONFIG: path.join(configDir, 'config.json'), HOME: configDir }, signal: controller.signal });
      try {
        const port = await waitFor('the tunnel to listen', async () => (tunnelOut.includes('\n') ? (JSON.parse(tunnelOut) as { port: number }).port : undefined));
        const { stdout: counted } = await execFileAsync('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', credentials.username, '-d', credentials.database, '-tAc', 'SELECT count(*) FROM customers'], { env: { ...process.env, PGPASSWORD: credentials.password } });
        const { stdout: source } = await execFileAsync('psql', [pgAdmin.replace(/\/[^/]*$/, `/${sources.postgres}`), '-tAc', 'SELECT count(*) FROM customers']);
        expect(counted.trim()).toBe(source.trim());
      } finally {
        controller.abort();
        await tunnel;
      }
      const extended = await strata('sandbox', 'extend', name, '--by', '30m', '--reason', 'e2e');
      expect(extended.code, extended.err).toBe(0);
    } finally {
      expect((await strata('sandbox', 'delete', name)).code).toBe(0);
    }
    await waitFor('the sandbox to be gone', async () => ((await strata('sandbox', 'get', name)).code === 1 ? true : undefined));
  }, 400_000);

  it('shows every resource Ready, and each target with its last backup, in `strata get resources`', async () => {
    const list = await strata('get', 'resources');
    expect(list.code, list.err).toBe(0);
    const rows = list.out.trimEnd().split('\n').slice(1);
    expect(rows.length).toBeGreaterThanOrEqual(4);
    for (const row of rows) expect(row).toMatch(/^Backup(Store|Policy|Target)\s+\S+\s+Ready\s+-$/);
    for (const name of Object.values(TARGET)) {
      const doc = JSON.parse((await strata('get', 'resource', 'BackupTarget', `default/${name}`, '-o', 'json')).out);
      const conditions = Object.fromEntries(doc.status.conditions.map((c: { type: string; status: string }) => [c.type, c.status]));
      expect(conditions).toMatchObject({ Ready: 'True', LastBackupSucceeded: 'True' });
      expect(doc.status.observedGeneration).toBe(doc.metadata.generation);
    }
  });

  it('shows it all in activity and audit', async () => {
    const activity = JSON.parse((await strata('activity', '-o', 'json')).out);
    expect(activity.backups.filter((b: { phase: string }) => b.phase === 'Succeeded')).toHaveLength(2);
    expect(activity.restores.filter((r: { phase: string; mode: string }) => r.phase === 'Succeeded' && r.mode === 'new')).toHaveLength(2);
    // Sandbox operations reach the audit log through the sandbox service's outbox: a moment after they happened.
    const sandboxActions = ['createSandbox', 'getSandboxCredentials', 'openSandboxTunnel', 'extendSandbox', 'deleteSandbox'];
    const audit = await waitFor('the sandbox audit records', async () => {
      const events = JSON.parse((await strata('audit', '-o', 'json')).out) as { events: Array<{ action: string; outcome: string; user: string }> };
      return sandboxActions.every((a) => events.events.some((e) => e.action === a)) ? events : undefined;
    });
    const actions = audit.events.map((e: { action: string }) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['applyResources', 'backupNow', 'createRestore']));
    // The one refusal: the sandbox query that filtered on a masked column.
    const refused = audit.events.filter((e: { outcome: string }) => e.outcome !== 'ok');
    expect(refused).toEqual([expect.objectContaining({ action: 'querySandbox', outcome: 'invalid' })]);
    expect(audit.events.every((e: { user: string }) => e.user === 'ops@example.test')).toBe(true);
  });

  it('enforces roles and credentials at the gateway', async () => {
    expect((await call(stack.gatewayUrl, 'GET', '/api/v1/whoami')).status).toBe(401);
    const bad = await call(stack.gatewayUrl, 'GET', '/api/v1/whoami', { headers: { 'cf-access-token': 'not-a-jwt' } });
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual({ error: expect.stringMatching(/invalid/) });
    const viewer = await call(stack.gatewayUrl, 'POST', '/api/dev/token', { body: { email: 'viewer@example.test', role: 'viewer' } });
    const cookie = await call(stack.gatewayUrl, 'POST', '/api/v1/targets/default/postgres-main/backup-now', { body: {}, headers: { cookie: `CF_Authorization=${viewer.body.token}` } });
    expect(cookie.status).toBe(403);
    expect(cookie.body.error).toMatch(/operator/);
    const assertion = await call(stack.gatewayUrl, 'GET', '/api/v1/targets', { headers: { 'cf-access-jwt-assertion': viewer.body.token } });
    expect(assertion.status).toBe(200);
  });
});
