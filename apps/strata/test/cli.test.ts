// Unit tests of the strata CLI: runCli in-process against a fake console API on 127.0.0.1 (and the CLI as a process where its exit matters).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildRestoreRequest, parsePair, parseRef } from '../src/cli.ts';
import { humanBytes, humanDuration, parseDuration } from '../src/format.ts';
import { json, runStrata, sse, startFake, writeLogin, type Fake, type Frame, type Recorded, type RunResult } from './fake-console.ts';

let fake: Fake;
let dir: string;
let configFile: string;

function run(args: string[], opts: { env?: NodeJS.ProcessEnv; stdin?: string } = {}): Promise<RunResult> {
  return runStrata(args, { home: dir, configFile }, opts);
}

/** Writes a config as `strata login` would: server and token of the fake. */
function loggedIn(token = 'tok-123'): Promise<void> {
  return writeLogin(configFile, fake.url, token);
}

const last = (): Recorded => {
  const r = fake.requests.at(-1);
  if (!r) throw new Error('no request recorded');
  return r;
};

beforeEach(async () => {
  fake = await startFake();
  dir = await mkdtemp(path.join(os.tmpdir(), 'strata-cli-'));
  configFile = path.join(dir, 'cfg', 'config.json');
});

afterEach(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

describe('login and configuration', () => {
  it('gets a token from the dev issuer and stores server and token with mode 0600', async () => {
    fake.routes.set('POST /api/dev/token', json(200, { token: 'dev-jwt', expiresAt: '2030-01-01T00:00:00Z' }));
    const r = await run(['login', '--server', fake.url + '/', '--email', 'ops@example.com', '--role', 'operator']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Logged in to ${fake.url} as ops@example.com (operator)`);
    const req = last();
    expect(req.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req.body)).toEqual({ email: 'ops@example.com', role: 'operator' });
    expect(req.headers['cf-access-token']).toBeUndefined();
    const config = JSON.parse(await readFile(configFile, 'utf8'));
    expect(config).toMatchObject({ server: fake.url, token: 'dev-jwt' });
    expect((await stat(configFile)).mode & 0o777).toBe(0o600);
  });

  it('uses XDG_CONFIG_HOME when STRATA_CONFIG is not set', async () => {
    fake.routes.set('POST /api/dev/token', json(200, { token: 'dev-jwt', expiresAt: '2030-01-01T00:00:00Z' }));
    const xdg = path.join(dir, 'xdg');
    const r = await run(['login', '--server', fake.url, '--email', 'a@example.com'], { env: { STRATA_CONFIG: undefined, XDG_CONFIG_HOME: xdg } });
    expect(r.code).toBe(0);
    const file = path.join(xdg, 'strata', 'config.json');
    expect(JSON.parse(await readFile(file, 'utf8')).token).toBe('dev-jwt');
    // Without --role the dev issuer's default applies.
    expect(JSON.parse(last().body)).toEqual({ email: 'a@example.com' });
    expect(r.stdout).toContain(`Logged in to ${fake.url} as a@example.com; token expires 2030-01-01T00:00:00Z.`);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('stores a token from the access proxy (also from stdin) and logout forgets it', async () => {
    let r = await run(['login', '--server', fake.url, '--token', 'proxy-jwt']);
    expect(r.code).toBe(0);
    expect(JSON.parse(await readFile(configFile, 'utf8'))).toEqual({ server: fake.url, token: 'proxy-jwt' });
    r = await run(['login', '--server', fake.url, '--token', '-'], { stdin: 'piped-jwt\n' });
    expect(r.code).toBe(0);
    expect(JSON.parse(await readFile(configFile, 'utf8')).token).toBe('piped-jwt');
    expect(fake.requests).toHaveLength(0);
    r = await run(['logout']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Logged out');
    expect(JSON.parse(await readFile(configFile, 'utf8'))).toEqual({ server: fake.url });
    expect((await stat(configFile)).mode & 0o777).toBe(0o600);
  });

  it('sends the token in cf-access-token; STRATA_TOKEN overrides the stored one', async () => {
    await loggedIn('stored-token');
    fake.routes.set('GET /api/v1/whoami', json(200, {
      principal: { id: 'u1', email: 'ops@example.com', role: 'operator', groups: ['dba'] },
      version: '1.2.3',
      externalURL: 'https://strata.example.com',
    }));
    let r = await run(['whoami']);
    expect(r.code).toBe(0);
    expect(last().headers['cf-access-token']).toBe('stored-token');
    expect(last().headers.authorization).toBeUndefined();
    expect(r.stdout).toMatch(/email:\s+ops@example.com/);
    expect(r.stdout).toMatch(/role:\s+operator/);
    r = await run(['whoami'], { env: { STRATA_TOKEN: 'env-token' } });
    expect(r.code).toBe(0);
    expect(last().headers['cf-access-token']).toBe('env-token');
  });

  it('does not send the stored token to another server', async () => {
    await mkdir(path.dirname(configFile), { recursive: true });
    await writeFile(configFile, JSON.stringify({ server: 'https://elsewhere.example.com', token: 'other' }));
    fake.routes.set('GET /api/v1/whoami', json(401, { error: 'missing access token' }));
    const r = await run(['whoami'], { env: { STRATA_SERVER: fake.url } });
    expect(r.code).toBe(1);
    expect(last().headers['cf-access-token']).toBeUndefined();
    expect(r.stderr).toContain('error: missing access token');
    expect(r.stderr).toContain(`hint: not logged in; run \`strata login --server ${fake.url}\``);
  });

  it('a 401 with a token hints to log in again', async () => {
    await loggedIn();
    fake.routes.set('GET /api/v1/settings', json(401, { error: 'token expired' }));
    const r = await run(['settings']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: token expired\n');
    expect(r.stderr).toContain('strata login');
  });

  it('a network failure exits 1', async () => {
    await fake.close();
    const r = await run(['--server', fake.url, 'targets']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: cannot reach http:\/\/127\.0\.0\.1:\d+/);
    fake = await startFake();
  });
});

describe('apply and resources', () => {
  const yamlDoc = [
    'apiVersion: strata.dev/v1alpha1',
    'kind: BackupTarget',
    'metadata: {name: orders, namespace: default}',
    'spec:',
    '  engine: postgres',
    '---',
    'apiVersion: strata.dev/v1alpha1',
    'kind: BackupPolicy',
    'metadata: {name: nightly, namespace: default}',
    'spec: {store: main, full: {schedule: "0 3 * * *"}}',
    '',
  ].join('\n');

  it('sends YAML as is with application/yaml and prints each result', async () => {
    await loggedIn();
    const file = path.join(dir, 'target.yaml');
    await writeFile(file, yamlDoc);
    fake.routes.set('POST /api/v1/resources', json(200, {
      applied: [
        { kind: 'BackupTarget', namespace: 'default', name: 'orders', action: 'created' },
        { kind: 'BackupPolicy', namespace: 'default', name: 'nightly', action: 'unchanged' },
      ],
      message: '1 created, 1 unchanged',
    }));
    const r = await run(['apply', '-f', file]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('backuptarget/default/orders created\nbackuppolicy/default/nightly unchanged\n');
    expect(last().headers['content-type']).toBe('application/yaml');
    expect(last().headers['cf-access-token']).toBe('tok-123');
    expect(last().body).toBe(yamlDoc);
  });

  it('sends JSON files as application/json, reads stdin with -f -, and takes several -f', async () => {
    await loggedIn();
    const file = path.join(dir, 'store.json');
    const body = JSON.stringify({ apiVersion: 'strata.dev/v1alpha1', kind: 'BackupStore', metadata: { name: 'main' } });
    await writeFile(file, body);
    let n = 0;
    fake.routes.set('POST /api/v1/resources', (_req, res) => {
      n++;
      json(200, { applied: [{ kind: n === 1 ? 'BackupStore' : 'BackupTarget', namespace: 'default', name: `r${n}`, action: 'updated' }], message: '' })(_req, res);
    });
    const r = await run(['apply', '-f', file, '-f', '-'], { stdin: yamlDoc });
    expect(r.code).toBe(0);
    const posts = fake.requests.filter((q) => q.method === 'POST');
    expect(posts.map((q) => q.headers['content-type'])).toEqual(['application/json', 'application/yaml']);
    expect(posts[0]?.body).toBe(body);
    expect(posts[1]?.body).toBe(yamlDoc);
    expect(r.stdout).toBe('backupstore/default/r1 updated\nbackuptarget/default/r2 updated\n');
  });

  it('a 400 prints the server error naming the field and exits 1', async () => {
    await loggedIn();
    const file = path.join(dir, 'bad.yaml');
    await writeFile(file, yamlDoc);
    fake.routes.set('POST /api/v1/resources', json(400, { error: 'BackupTarget default/orders: spec.endpoint: required property missing' }));
    const r = await run(['apply', '-f', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('error: BackupTarget default/orders: spec.endpoint: required property missing\n');
  });

  it('reports a YAML syntax error locally without calling the server', async () => {
    await loggedIn();
    const file = path.join(dir, 'broken.yaml');
    await writeFile(file, 'kind: BackupTarget\nmetadata: {name: x\n');
    const r = await run(['apply', '-f', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: .*broken\.yaml: invalid YAML/);
    expect(fake.requests).toHaveLength(0);
  });

  it('-o json prints the ApplyResult unchanged', async () => {
    await loggedIn();
    const file = path.join(dir, 't.yaml');
    await writeFile(file, yamlDoc);
    const result = { applied: [{ kind: 'BackupTarget', namespace: 'default', name: 'orders', action: 'created' }], message: '1 created' };
    fake.routes.set('POST /api/v1/resources', json(200, result));
    const r = await run(['-o', 'json', 'apply', '-f', file]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(result);
  });

  it('lists, gets and deletes resources', async () => {
    await loggedIn();
    fake.routes.set('GET /api/v1/resources', json(200, {
      resources: [{ apiVersion: 'strata.dev/v1alpha1', kind: 'BackupTarget', metadata: { namespace: 'default', name: 'orders' }, status: { phase: 'Ready' } }],
    }));
    let r = await run(['get', 'resources', '--kind', 'backuptargets']);
    expect(r.code).toBe(0);
    expect(last().query.get('kind')).toBe('BackupTarget');
    expect(r.stdout).toMatch(/^KIND\s+NAME\s+PHASE\s+MESSAGE\nBackupTarget\s+default\/orders\s+Ready\s+-\n$/);

    fake.routes.set('GET /api/v1/resources/BackupTarget/prod/orders', json(200, { kind: 'BackupTarget', metadata: { name: 'orders', namespace: 'prod' }, spec: { engine: 'postgres' } }));
    r = await run(['get', 'resource', 'backuptarget', 'prod/orders']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('kind: BackupTarget\n');
    expect(r.stdout).toContain('  engine: postgres\n');

    fake.routes.set('DELETE /api/v1/resources/BackupTarget/default/orders', json(200, { message: 'BackupTarget default/orders deleted' }));
    r = await run(['delete', 'resource', 'BackupTarget', 'orders']);
    expect(r.code).toBe(0);
    expect(last().method).toBe('DELETE');
    expect(r.stdout).toBe('BackupTarget default/orders deleted\n');
  });
});

describe('targets and backups', () => {
  const target = {
    namespace: 'default',
    name: 'orders',
    engine: 'postgres',
    env: 'prod',
    health: 'ok',
    lastSuccess: '2025-03-01T03:00:12Z',
    nextRun: '2025-03-02T03:00:00Z',
    backups: 14,
    storedBytes: 5 * 1024 ** 3,
    pitr: true,
    lagSeconds: 3,
    suspended: true,
  };

  it('lists targets with filters as a table, and as JSON with -o json', async () => {
    await loggedIn();
    const list = { targets: [target], catalogVersion: 7 };
    fake.routes.set('GET /api/v1/targets', json(200, list));
    let r = await run(['targets', '--env', 'prod', '--health', 'ok', '--q', 'ord']);
    expect(r.code).toBe(0);
    expect(Object.fromEntries(last().query)).toEqual({ env: 'prod', health: 'ok', q: 'ord' });
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TARGET\s+ENGINE\s+ENV\s+HEALTH\s+LAST SUCCESS\s+NEXT RUN\s+BACKUPS\s+STORED\s+PITR\s+FLAGS$/);
    expect(lines[1]).toMatch(/^default\/orders\s+postgres\s+prod\s+ok\s+2025-03-01 03:00:12Z\s+2025-03-02 03:00:00Z\s+14\s+5 GiB\s+lag 3s\s+suspended$/);
    r = await run(['targets', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(list);
  });

  it('shows a target; a bare name means namespace default', async () => {
    await loggedIn();
    fake.routes.set('GET /api/v1/targets/default/orders', json(200, { target, spec: {}, status: {} }));
    const r = await run(['target', 'orders']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/target:\s+default\/orders/);
    expect(r.stdout).toMatch(/suspended:\s+yes/);
  });

  it('suspend and resume send the reason', async () => {
    await loggedIn();
    fake.routes.set('POST /api/v1/targets/prod/orders/suspend', json(200, { message: 'target prod/orders suspended' }));
    fake.routes.set('POST /api/v1/targets/prod/orders/resume', json(200, { message: 'target prod/orders resumed' }));
    let r = await run(['suspend', 'prod/orders', '--reason', 'maintenance']);
    expect(r.code).toBe(0);
    expect(JSON.parse(last().body)).toEqual({ reason: 'maintenance' });
    expect(r.stdout).toBe('target prod/orders suspended\n');
    r = await run(['resume', 'prod/orders']);
    expect(r.code).toBe(0);
    expect(JSON.parse(last().body)).toEqual({});
  });

  it('lists backups newest first with a limit', async () => {
    await loggedIn();
    fake.routes.set('GET /api/v1/targets/default/orders/backups', json(200, {
      target: 'default/orders',
      backups: [
        { id: '20250301T030000Z-ab12', phase: 'Succeeded', restorable: true, time: '2025-03-01T03:00:00Z', databases: ['app', 'billing'], storedBytes: 1536, durationSeconds: 95, pinned: true, verified: true, retainedBy: ['newest', 'daily'], expiresAt: '2025-03-08T00:00:00Z' },
        { id: '20250228T030000Z-cd34', phase: 'Succeeded', restorable: true, time: '2025-02-28T03:00:00Z', databases: ['app'], storedBytes: 1024, durationSeconds: 4.25, retainedBy: ['pinned'], expiresAt: null, pinExpires: '2027-01-01T00:00:00Z' },
        { id: '20250227T030000Z-ef56', phase: 'Expired', restorable: false, time: '2025-02-27T03:00:00Z', databases: ['app'], storedBytes: 1024, durationSeconds: 4, retainedBy: [], expiredAt: '2025-03-01T03:10:00Z', expiredReason: 'kept by no rule of retain {daily: 2}' },
      ],
    }));
    const r = await run(['backups', 'orders', '--limit', '3']);
    expect(r.code).toBe(0);
    expect(last().query.get('limit')).toBe('3');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+PHASE\s+TIME\s+DATABASES\s+STORED\s+DURATION\s+RETAINED BY\s+UNTIL\s+FLAGS$/);
    expect(lines[1]).toMatch(/^20250301T030000Z-ab12\s+Succeeded\s+2025-03-01 03:00:00Z\s+app,billing\s+1\.5 KiB\s+1m35s\s+newest,daily\s+2025-03-08 00:00:00Z\s+pinned,verified$/);
    expect(lines[2]).toMatch(/^20250228T030000Z-cd34\s+Succeeded\s+2025-02-28 03:00:00Z\s+app\s+1 KiB\s+4\.3s\s+pinned\s+pin 2027-01-01 00:00:00Z\s+-$/);
    expect(lines[3]).toMatch(/^20250227T030000Z-ef56\s+Expired\s+2025-02-27 03:00:00Z\s+app\s+-\s+4s\s+-\s+expired 2025-03-01 03:10:00Z\s+-$/);
    expect(r.stdout).toContain('Expired by retention');
    expect(r.stdout).toContain('20250227T030000Z-ef56: kept by no rule of retain {daily: 2}');
  });

  it('gc asks the store for a pass, --dry-run only for the list', async () => {
    await loggedIn();
    fake.routes.set('POST /api/v1/stores/default/local/gc', json(200, { store: 'local', dryRun: true, startedAt: '2025-03-01T03:00:00Z', objects: 2, bytes: 2048, keys: ['strata/default/orders/b1/manifest.json', 'strata/default/orders/b1/data/app.pgdump.zst.age'], truncated: false, kept: 10 }));
    const r = await run(['gc', 'local', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(last().query.get('dryRun')).toBe('true');
    expect(r.stdout).toContain('store local: would delete 2 object(s), 2 KiB; 10 kept');
    expect(r.stdout).toContain('  strata/default/orders/b1/manifest.json');
    await run(['gc', 'default/local']);
    expect(last().query.get('dryRun')).toBeNull();
  });

  it('pin takes a date for --expires, and refuses what is neither a duration, a date nor a time', async () => {
    await loggedIn();
    fake.routes.set('POST /api/v1/backups/b1/pin', json(200, { message: 'backup b1 pinned' }));
    expect((await run(['pin', 'b1', '--expires', '2027-01-01'])).code).toBe(0);
    expect(JSON.parse(last().body)).toEqual({ expires: '2027-01-01' });
    const bad = await run(['pin', 'b1', '--expires', 'next year']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/a date such as 2027-01-01/);
  });

  it('pins with expiry and reason, unpins, shows a backup and its inventory', async () => {
    await loggedIn();
    fake.routes.set('POST /api/v1/backups/b1/pin', json(200, { message: 'backup b1 pinned' }));
    fake.routes.set('POST /api/v1/backups/b1/unpin', json(200, { message: 'backup b1 unpinned' }));
    fake.routes.set('GET /api/v1/backups/b1', json(200, {
      backup: { id: 'b1', target: 'default/orders', engine: 'postgres', rawBytes: 4096, storedBytes: 1024, databases: ['app'] },
      manifest: { objects: [{}, {}] },
      tags: { pinned: true, pinReason: 'audit', pinnedBy: 'ops@example.com' },
    }));
    fake.routes.set('GET /api/v1/backups/b1/inventory', json(200, {
      collectedAt: '2025-03-01T03:00:00Z',
      engine: 'postgres',
      server: { version: '16.2' },
      schemaHash: 'h1',
      databases: [{ name: 'app', sizeBytes: 2048, schemaHash: 'h2', tables: [{ schema: 'public', name: 'orders', rowsEstimate: 42, totalBytes: 1024, columns: [{ name: 'id' }], fingerprint: 'f' }] }],
    }));
    let r = await run(['pin', 'b1', '--expires', '30d', '--reason', 'audit']);
    expect(r.code).toBe(0);
    expect(JSON.parse(last().body)).toEqual({ expires: '30d', reason: 'audit' });
    r = await run(['unpin', 'b1']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('backup b1 unpinned\n');
    r = await run(['backup', 'b1']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/stored size:\s+1 KiB \(4\.0x\)/);
    expect(r.stdout).toMatch(/pinned:\s+yes by ops@example.com forever \(audit\)/);
    r = await run(['inventory', 'b1']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/app\s+public\.orders\s+-\s+42\s+1 KiB\s+1/);
  });
});

describe('backup-now --watch', () => {
  const action = { message: 'backup default/orders-manual-x7 requested', kind: 'Backup', namespace: 'default', name: 'orders-manual-x7' };
  const ev = (phase: string, extra: Record<string, unknown> = {}): Frame => ({
    event: 'backup',
    data: { kind: 'backup', namespace: 'default', name: 'orders-manual-x7', phase, ...extra },
  });

  function stream(frames: Frame[]): void {
    fake.routes.set('GET /api/v1/events', sse(frames.map((f, i) => ({ ...f, id: String(i + 1) }))));
  }

  it('follows the event stream and exits 0 on Succeeded', async () => {
    await loggedIn();
    fake.routes.set('POST /api/v1/targets/default/orders/backup-now', json(202, action));
    stream([
      { event: 'target', data: { kind: 'target', namespace: 'default', name: 'orders', phase: 'Ready' } },
      ev('Running', { stage: 'dump', bytes: 1024 * 1024 }),
      { event: 'backup', data: { kind: 'backup', namespace: 'default', name: 'other-backup', phase: 'Failed', message: 'not ours' } },
      ev('Running', { stage: 'upload', bytes: 3 * 1024 * 1024 * 1024 }),
      ev('Succeeded', { stage: 'done', bytes: 3 * 1024 * 1024 * 1024 }),
      ev('Running', { stage: 'after the end' }),
    ]);
    const r = await run(['backup-now', 'orders', '--reason', 'before migration', '--watch']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const post = fake.requests.find((q) => q.method === 'POST');
    expect(JSON.parse(post?.body ?? '')).toEqual({ reason: 'before migration' });
    const events = fake.requests.find((q) => q.path === '/api/v1/events');
    expect(events?.headers.accept).toBe('text/event-stream');
    expect(events?.headers['cf-access-token']).toBe('tok-123');
    expect(r.stdout).toBe(
      [
        'backup default/orders-manual-x7 requested',
        'backup default/orders-manual-x7 Running dump 1 MiB',
        'backup default/orders-manual-x7 Running upload 3 GiB',
        'backup default/orders-manual-x7 Succeeded done 3 GiB',
        'backup default/orders-manual-x7 succeeded',
        '',
      ].join('\n'),
    );
  });

  it('closes the event stream once the run ended, though the server keeps it open: the strata process exits', async () => {
    await loggedIn();
    fake.routes.set('POST /api/v1/targets/default/orders/backup-now', json(202, action));
    fake.routes.set('GET /api/v1/events', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
      // The run succeeds once it was requested; the stream stays open, as the console's does.
      const succeed = setInterval(() => {
        if (!fake.requests.some((q) => q.method === 'POST')) return;
        clearInterval(succeed);
        res.write(`id: 1\nevent: backup\ndata: ${JSON.stringify(ev('Succeeded', { stage: 'done' }).data)}\n\n`);
      }, 10);
      res.socket?.once('close', () => clearInterval(succeed));
    });
    const child = spawn(process.execPath, [path.resolve(import.meta.dirname, '../bin/strata.js'), 'backup-now', 'orders', '--watch'], {
      env: { PATH: process.env.PATH ?? '', HOME: dir, STRATA_CONFIG: configFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
    expect(stdout).toContain('backup default/orders-manual-x7 succeeded\n');
  });

  it('exits 1 with the message on Failed', async () => {
    await loggedIn();
    fake.routes.set('POST /api/v1/targets/default/orders/backup-now', json(202, action));
    stream([ev('Running', { stage: 'dump', bytes: 10 }), ev('Failed', { stage: 'dump', message: 'pg_dump: permission denied for table secrets' })]);
    const r = await run(['backup-now', 'default/orders', '--watch']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('backup default/orders-manual-x7 Failed dump: pg_dump: permission denied for table secrets\n');
    expect(r.stderr).toBe('error: backup default/orders-manual-x7 failed: pg_dump: permission denied for table secrets\n');
  });

  it('stops after --timeout', async () => {
    await loggedIn();
    fake.routes.set('POST /api/v1/targets/default/orders/backup-now', json(202, action));
    stream([ev('Running', { stage: 'dump' })]);
    const started = Date.now();
    const r = await run(['backup-now', 'orders', '--watch', '--timeout', '300ms']);
    expect(r.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r.stderr).toContain('error: timed out after 0.3s waiting for backup default/orders-manual-x7 (last phase Running)');
  });

  it('after a reconnect re-reads the run from the activity list', async () => {
    await loggedIn();
    fake.routes.set('POST /api/v1/targets/default/orders/backup-now', json(202, action));
    let streams = 0;
    fake.routes.set('GET /api/v1/events', (_req, res) => {
      streams++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (streams === 1) setTimeout(() => res.end('retry: 50\n\n'), 30);
      else res.write(': keep-alive\n\n');
    });
    fake.routes.set('GET /api/v1/activity', json(200, {
      backups: [{ namespace: 'default', name: 'orders-manual-x7', target: 'orders', phase: 'Failed', message: 'disk full', bytes: 2048 }],
      restores: [],
    }));
    const r = await run(['backup-now', 'orders', '--watch']);
    expect(r.code).toBe(1);
    expect(fake.requests.find((q) => q.path === '/api/v1/activity')?.query.get('limit')).toBe('500');
    expect(r.stdout).toContain('backup default/orders-manual-x7 Failed 2 KiB: disk full\n');
    expect(r.stderr).toBe('error: backup default/orders-manual-x7 failed: disk full\n');
  });

  it('without --watch prints the Action; -o json prints it as JSON', async () => {
    await loggedIn();
    fake.routes.set('POST /api/v1/targets/default/orders/backup-now', json(202, action));
    let r = await run(['backup-now', 'orders']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('backup default/orders-manual-x7 requested\n');
    expect(fake.requests.some((q) => q.path === '/api/v1/events')).toBe(false);
    r = await run(['backup-now', 'orders', '-o', 'json']);
    expect(JSON.parse(r.stdout)).toEqual(action);
  });

  it('a refused event stream stops before the backup is requested', async () => {
    await loggedIn();
    fake.routes.set('GET /api/v1/events', json(403, { error: 'role viewer is below operator' }));
    fake.routes.set('POST /api/v1/targets/default/orders/backup-now', json(202, action));
    const r = await run(['backup-now', 'orders', '--watch']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: role viewer is below operator\n');
    expect(fake.requests.some((q) => q.method === 'POST')).toBe(false);
  });
});

describe('restore', () => {
  it('builds the RestoreRequest from the flags (only the set fields)', async () => {
    await loggedIn();
    fake.routes.set('POST /api/v1/restores', json(202, { message: 'restore default/orders-r1 created', kind: 'Restore', namespace: 'default', name: 'orders-r1' }));
    const r = await run([
      'restore', 'prod/orders', '--mode', 'new', '--at', '2025-03-01T02:00:00Z', '--host', 'db2.internal', '--port', '5433',
      '--database', 'orders_copy', '--credentials-secret', 'db2-admin', '--tables', 'public.orders, public.items', '--reason', 'incident 42',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(last().body)).toEqual({
      target: 'prod/orders',
      at: '2025-03-01T02:00:00Z',
      mode: 'new',
      host: 'db2.internal',
      port: 5433,
      database: 'orders_copy',
      credentialsSecret: 'db2-admin',
      tables: ['public.orders', 'public.items'],
      reason: 'incident 42',
    });
    expect(r.stdout).toBe('restore default/orders-r1 created\n');
  });

  it('in-place needs --confirm equal to the target name', async () => {
    await loggedIn();
    fake.routes.set('POST /api/v1/restores', json(202, { message: 'ok', kind: 'Restore', namespace: 'default', name: 'r2' }));
    let r = await run(['restore', 'orders', '--mode', 'in-place', '--backup', 'b1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--confirm orders');
    r = await run(['restore', 'orders', '--mode', 'in-place', '--backup', 'b1', '--confirm', 'order']);
    expect(r.code).toBe(2);
    expect(fake.requests).toHaveLength(0);
    r = await run(['restore', 'orders', '--mode', 'in-place', '--backup', 'b1', '--confirm', 'orders', '--credentials-secret', 'admin']);
    expect(r.code).toBe(0);
    expect(JSON.parse(last().body)).toEqual({ target: 'default/orders', backupID: 'b1', mode: 'in-place', credentialsSecret: 'admin', confirm: 'orders' });
  });

  it('download --watch follows the restore and prints the download link', async () => {
    await loggedIn();
    fake.routes.set('POST /api/v1/restores', json(202, { message: 'restore default/orders-dl created', kind: 'Restore', namespace: 'default', name: 'orders-dl' }));
    fake.routes.set('GET /api/v1/events', sse([
      { event: 'restore', data: { kind: 'restore', namespace: 'default', name: 'orders-dl', phase: 'Running', stage: 'download', bytes: 2048 } },
      { event: 'restore', data: { kind: 'restore', namespace: 'default', name: 'orders-dl', phase: 'Succeeded' } },
    ]));
    fake.routes.set('GET /api/v1/restores/default/orders-dl', json(200, {
      restore: { namespace: 'default', name: 'orders-dl', phase: 'Succeeded', downloadURL: 'https://s3.example.com/dl?sig=1', downloadExpires: '2025-03-02T00:00:00Z' },
    }));
    const r = await run(['restore', 'orders', '--mode', 'download', '--backup', 'b1', '--watch']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(fake.requests.find((q) => q.method === 'POST')?.body ?? '')).toEqual({ target: 'default/orders', backupID: 'b1', mode: 'download' });
    expect(r.stdout).toContain('restore default/orders-dl Running download 2 KiB\n');
    expect(r.stdout).toContain('restore default/orders-dl succeeded\n');
    expect(r.stdout).toContain('download URL: https://s3.example.com/dl?sig=1\n');
    expect(r.stdout).toContain('expires:      2025-03-02T00:00:00Z\n');
  });

  it('restore --watch exits 1 when the restore fails', async () => {
    await loggedIn();
    fake.routes.set('POST /api/v1/restores', json(202, { message: 'created', kind: 'Restore', namespace: 'default', name: 'orders-sb' }));
    fake.routes.set('GET /api/v1/events', sse([{ event: 'restore', data: { kind: 'restore', namespace: 'default', name: 'orders-sb', phase: 'Failed', message: 'no space left' } }]));
    const r = await run(['restore', 'orders', '--mode', 'sandbox', '--ttl', '4h', '--watch']);
    expect(r.code).toBe(1);
    expect(JSON.parse(fake.requests.find((q) => q.method === 'POST')?.body ?? '')).toEqual({ target: 'default/orders', mode: 'sandbox', ttl: '4h' });
    expect(r.stderr).toBe('error: restore default/orders-sb failed: no space left\n');
  });

  it('re-reads the restore after the stream reconnects (no replay)', async () => {
    await loggedIn();
    fake.routes.set('POST /api/v1/restores', json(202, { message: 'created', kind: 'Restore', namespace: 'default', name: 'orders-n' }));
    let streams = 0;
    fake.routes.set('GET /api/v1/events', (_req, res) => {
      streams++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (streams === 1) {
        // Connected before the restore is created; ends after one event so the CLI reconnects.
        setTimeout(() => res.end('retry: 50\nevent: restore\ndata: {"kind":"restore","namespace":"default","name":"orders-n","phase":"Running","stage":"restore"}\n\n'), 50);
      } else {
        res.write(': keep-alive\n\n');
      }
    });
    fake.routes.set('GET /api/v1/restores/default/orders-n', json(200, { restore: { namespace: 'default', name: 'orders-n', phase: 'Succeeded', mode: 'new' } }));
    const r = await run(['restore', 'orders', '--mode', 'new', '--watch', '--timeout', '10s']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(streams).toBe(2);
    expect(r.stdout).toBe('created\nrestore default/orders-n Running restore\nrestore default/orders-n Succeeded\nrestore default/orders-n succeeded\n');
  });

  it('lists restores of a target and shows one', async () => {
    await loggedIn();
    fake.routes.set('GET /api/v1/restores', json(200, {
      restores: [{ namespace: 'default', name: 'r1', target: 'default/orders', mode: 'new', phase: 'Succeeded', source: { backupID: 'b1' }, created: '2025-03-01T04:00:00Z', durationSeconds: 600, requestedBy: 'ops@example.com' }],
    }));
    fake.routes.set('GET /api/v1/restores/default/r1', json(200, {
      restore: { namespace: 'default', name: 'r1', target: 'default/orders', mode: 'new', phase: 'Succeeded', checks: [{ name: 'schema-matches', passed: true }] },
    }));
    let r = await run(['restores', '--target', 'orders']);
    expect(r.code).toBe(0);
    expect(last().query.get('target')).toBe('default/orders');
    expect(r.stdout).toMatch(/default\/r1\s+default\/orders\s+new\s+Succeeded\s+b1\s+2025-03-01 04:00:00Z\s+10m\s+ops@example.com/);
    r = await run(['restore-status', 'r1']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('PASS  schema-matches');
  });
});

describe('activity, audit, events, settings', () => {
  it('activity and audit pass their query', async () => {
    await loggedIn();
    fake.routes.set('GET /api/v1/activity', json(200, { backups: [{ namespace: 'default', name: 'b-1', target: 'orders', phase: 'Running', bytes: 10 }], restores: [] }));
    fake.routes.set('GET /api/v1/audit', json(200, { events: [{ time: '2025-03-01T00:00:00Z', user: 'ops@example.com', role: 'operator', action: 'backupNow', target: 'default/orders', outcome: 'ok' }] }));
    let r = await run(['activity', '--limit', '5']);
    expect(r.code).toBe(0);
    expect(last().query.get('limit')).toBe('5');
    expect(r.stdout).toMatch(/default\/b-1\s+default\/orders\s+Running/);
    r = await run(['audit', '--action', 'backupNow', '--user', 'ops@example.com', '--limit', '10']);
    expect(r.code).toBe(0);
    expect(Object.fromEntries(last().query)).toEqual({ action: 'backupNow', user: 'ops@example.com', limit: '10' });
    expect(r.stdout).toMatch(/ops@example.com\s+operator\s+backupNow\s+default\/orders\s+-\s+ok/);
  });

  it('events prints every event and stops after --count', async () => {
    await loggedIn();
    fake.routes.set('GET /api/v1/events', sse([
      { event: 'catalog', id: '1', data: { kind: 'catalog', phase: 'Synced', version: 3 } },
      { event: 'target', id: '2', data: { kind: 'target', namespace: 'default', name: 'orders', phase: 'Ready', message: 'ok' } },
      { event: 'backup', id: '3', data: { kind: 'backup', namespace: 'default', name: 'b', phase: 'Running' } },
    ]));
    let r = await run(['events', '--count', '2']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('catalog - Synced\ntarget default/orders Ready: ok\n');
    r = await run(['events', '--count', '1', '--kind', 'backup', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ kind: 'backup', namespace: 'default', name: 'b', phase: 'Running' });
  });

  it('events reconnects with Last-Event-ID when the stream ends', async () => {
    await loggedIn();
    let n = 0;
    fake.routes.set('GET /api/v1/events', (req, res) => {
      n++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (n === 1) {
        res.end('retry: 100\nid: 41\nevent: target\ndata: {"kind":"target","name":"a","namespace":"default"}\n\n');
      } else {
        res.write(`id: 42\nevent: target\ndata: {"kind":"target","name":"b","namespace":"default","message":"${String(req.headers['last-event-id'])}"}\n\n`);
      }
    });
    const r = await run(['events', '--count', '2']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('target default/a\ntarget default/b: 41\n');
  });

  it('settings renders stores and policies', async () => {
    await loggedIn();
    fake.routes.set('GET /api/v1/settings', json(200, {
      stores: [{ name: 'main', endpoint: 'http://s3:9000', region: 'us-east-1', bucket: 'backups', phase: 'Ready', readOnly: false }],
      policies: [{ namespace: 'default', name: 'nightly', store: 'main', schedule: '0 3 * * *', retention: '7/4/12/1', pitr: true }],
      version: '1.0.0',
      catalog: { targets: 3, backups: 40, version: 9 },
    }));
    const r = await run(['settings']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('3 targets, 40 backups (catalog version 9)');
    expect(r.stdout).toMatch(/main\s+http:\/\/s3:9000\s+us-east-1\s+backups\s+-\s+Ready\s+no/);
    expect(r.stdout).toMatch(/default\/nightly\s+main\s+0 3 \* \* \*\s+7\/4\/12\/1\s+yes/);
  });
});

describe('secrets', () => {
  it('secret set parses key=value pairs and --from-file', async () => {
    await loggedIn();
    const file = path.join(dir, 'identity.txt');
    await writeFile(file, 'AGE-SECRET-KEY-1XYZ\n');
    fake.routes.set('PUT /api/v1/secrets/prod/s3-creds', json(200, { message: 'secret prod/s3-creds saved' }));
    const r = await run(['secret', 'set', 'prod/s3-creds', 'accessKeyId=AKIA', 'secretAccessKey=a=b=c', 'empty=', '--from-file', `identity=${file}`]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(last().headers['content-type']).toBe('application/json');
    expect(JSON.parse(last().body)).toEqual({ data: { accessKeyId: 'AKIA', secretAccessKey: 'a=b=c', empty: '', identity: 'AGE-SECRET-KEY-1XYZ\n' } });
    expect(r.stdout).toBe('secret prod/s3-creds saved\n');
  });

  it('secret set rejects malformed pairs and duplicates with exit 2', async () => {
    await loggedIn();
    for (const args of [['secret', 'set', 's', 'novalue'], ['secret', 'set', 's', '=x'], ['secret', 'set', 's', 'a=1', 'a=2'], ['secret', 'set', 's']]) {
      const r = await run(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^error: /);
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('secret list and delete', async () => {
    await loggedIn();
    fake.routes.set('GET /api/v1/secrets', json(200, { secrets: [{ namespace: 'prod', name: 's3-creds', keys: ['accessKeyId', 'secretAccessKey'] }] }));
    fake.routes.set('DELETE /api/v1/secrets/default/old', json(200, { message: 'secret default/old deleted' }));
    let r = await run(['secret', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/prod\/s3-creds\s+accessKeyId,secretAccessKey/);
    r = await run(['secret', 'delete', 'old']);
    expect(r.code).toBe(0);
    expect(last().method).toBe('DELETE');
  });
});

describe('usage errors exit 2 without calling the server', () => {
  const cases: string[][] = [
    [],
    ['frobnicate'],
    ['targets', '--bogus'],
    ['target'],
    ['target', 'a/b/c'],
    ['target', '/x'],
    ['backups', 'orders', '--limit', '0'],
    ['backups', 'orders', '--limit', 'ten'],
    ['restore', 'orders'],
    ['restore', 'orders', '--mode', 'elsewhere'],
    ['restore', 'orders', '--mode', 'new', '--backup', 'b1', '--at', '2025-01-01T00:00:00Z'],
    ['restore', 'orders', '--mode', 'new', '--at', 'yesterday-ish'],
    ['restore', 'orders', '--mode', 'new', '--port', '70000'],
    ['restore', 'orders', '--mode', 'sandbox', '--ttl', 'forever'],
    ['backup-now', 'orders', '--watch', '--timeout', '5 minutes'],
    ['pin', 'b1', '--expires', 'someday'],
    ['login', '--server', 'http://x'],
    ['login', '--server', 'http://x', '--email', 'a@b', '--token', 't'],
    ['login', '--server', 'http://x', '--email', 'a@b', '--role', 'god'],
    ['login', '--server', 'ftp://x', '--token', 't'],
    ['-o', 'xml', 'targets'],
    ['apply'],
    ['get', 'resources', '--kind', 'Database'],
    ['get', 'resource', 'Thing', 'default/x'],
    ['whoami', 'extra'],
  ];
  for (const args of cases) {
    it(`strata ${args.join(' ') || '(nothing)'}`, async () => {
      await loggedIn();
      const r = await run(args);
      expect(r.code).toBe(2);
      expect(r.stderr).not.toBe('');
      expect(fake.requests).toHaveLength(0);
    });
  }

  it('no server configured', async () => {
    const r = await run(['targets']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: no server');
  });

  it('--help and --version exit 0', async () => {
    let r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: strata');
    r = await run(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});

describe('helpers', () => {
  it('parseRef, parsePair, durations, sizes', () => {
    expect(parseRef('orders')).toEqual({ namespace: 'default', name: 'orders' });
    expect(parseRef('prod/orders')).toEqual({ namespace: 'prod', name: 'orders' });
    expect(() => parseRef('a/')).toThrow();
    expect(parsePair('k=v=w')).toEqual(['k', 'v=w']);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(parseDuration('2d')).toBe(172_800_000);
    expect(parseDuration('30')).toBeUndefined();
    expect(humanBytes(0)).toBe('0 B');
    expect(humanBytes(1536)).toBe('1.5 KiB');
    expect(humanBytes(123 * 1024 ** 2)).toBe('123 MiB');
    expect(humanDuration(3725)).toBe('1h2m');
    expect(humanDuration(90)).toBe('1m30s');
    expect(buildRestoreRequest({ namespace: 'default', name: 'o' }, { mode: 'sandbox', expose: true, skipSafetyBackup: false })).toEqual({ target: 'default/o', mode: 'sandbox', expose: true });
  });
});
