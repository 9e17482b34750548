// What a new user trips over, through the CLI: failed runs, every apply problem at once, the download link without
// --watch, checked filters, help examples, absolute console links, `namespace/name` targets, a server URL with /api/v1.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { json, runStrata, sse, startFake, writeLogin, type Fake, type RunResult } from './fake-console.ts';

let fake: Fake;
let dir: string;
let configFile: string;

const run = (args: string[], env?: NodeJS.ProcessEnv): Promise<RunResult> => runStrata(args, { home: dir, configFile }, { env });

beforeEach(async () => {
  fake = await startFake();
  dir = await mkdtemp(path.join(os.tmpdir(), 'strata-new-user-'));
  configFile = path.join(dir, 'config.json');
  await writeLogin(configFile, fake.url);
});

afterEach(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

const toolMessage = 'pg_dump: error: connection to server at "orders.internal" (10.0.0.9), port 5432 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?';
const failedRun = { id: '20250302t030000z-ffff0000', phase: 'Failed', restorable: false, error: toolMessage, target: 'orders', engine: 'postgres', storedBytes: 0, rawBytes: 0, durationSeconds: 2, databases: [] };
const goodRun = { id: '20250301t030000z-aaaa1111', phase: 'Succeeded', restorable: true, error: '', target: 'orders', engine: 'postgres', time: '2025-03-01T03:00:00Z', storedBytes: 2048, durationSeconds: 30, databases: ['app'] };

describe('failed runs look failed', () => {
  it('strata backups shows each run with its phase; a failed one with no size, its error, and not restorable', async () => {
    const queued = { id: '20250303t030000z-0000aaaa', phase: 'Queued', restorable: false, error: '', target: 'orders', storedBytes: 0, databases: [] };
    fake.routes.set('GET /api/v1/targets/prod/orders/backups', json(200, { target: 'prod/orders', backups: [queued, failedRun, goodRun] }));
    const r = await run(['backups', 'prod/orders']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+PHASE\s+TIME\s+DATABASES\s+STORED\s+DURATION\s+RETAINED BY\s+UNTIL\s+FLAGS$/);
    expect(lines[1]).toMatch(/^20250303t030000z-0000aaaa\s+Queued\s+-\s+-\s+-\s+/);
    expect(lines[2]).toMatch(/^20250302t030000z-ffff0000\s+Failed\s+-\s+-\s+-\s+2s\s+-\s+-\s+-$/);
    expect(lines[3]).toMatch(/^20250301t030000z-aaaa1111\s+Succeeded\s+2025-03-01 03:00:00Z\s+app\s+2 KiB\s+30s\s+-\s+-\s+-$/);
    expect(lines.slice(4)).toEqual([
      '',
      'Failed runs (not restorable; `strata backup ID` shows the whole message):',
      '  20250302t030000z-ffff0000: pg_dump: error: connection to server at "orders.internal" (10.0.0.9), port 5432 failed: Connection refused (…)',
    ]);
  });

  it('strata backup ID shows the phase, the target as namespace/name and the whole message of the tool', async () => {
    fake.routes.set(`GET /api/v1/backups/${failedRun.id}`, json(200, { backup: failedRun, manifest: { target: { namespace: 'prod', name: 'orders' } }, tags: {} }));
    const r = await run(['backup', failedRun.id]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^phase:\s+Failed \(not restorable\)$/m);
    expect(r.stdout).toMatch(/^target:\s+prod\/orders$/m);
    expect(r.stdout).toContain(
      "error (the tool's or the store's own message):\n" +
        '  pg_dump: error: connection to server at "orders.internal" (10.0.0.9), port 5432 failed: Connection refused\n' +
        '  \tIs the server running on that host and accepting TCP/IP connections?\n',
    );
    fake.routes.set(`GET /api/v1/backups/${goodRun.id}`, json(200, { backup: goodRun, manifest: { target: { namespace: 'prod', name: 'orders' } }, tags: {} }));
    const good = await run(['backup', goodRun.id]);
    expect(good.stdout).toMatch(/^phase:\s+Succeeded \(restorable\)$/m);
    expect(good.stdout).not.toContain('error');
  });
});

describe('apply shows every problem at once', () => {
  // What the catalog answers (services/backup-catalog/test/mistakes-and-failures.test.ts checks the catalog's side).
  const refused = {
    error: '2 problems, nothing was applied:\n  BackupPolicy default/nightly: spec.full.schedule: "0 3 * *" is not a 5-field cron expression\n  BackupTarget prod/orders: spec.engine: "oracle" is not one of "postgres", "mysql", "mongodb"',
    errors: [
      { document: 2, kind: 'BackupPolicy', namespace: 'default', name: 'nightly', path: 'spec.full.schedule', message: '"0 3 * *" is not a 5-field cron expression' },
      { document: 3, kind: 'BackupTarget', namespace: 'prod', name: 'orders', path: 'spec.engine', message: '"oracle" is not one of "postgres", "mysql", "mongodb"' },
    ],
  };

  it('prints each problem on its own line with its resource and field, and exits 1', async () => {
    fake.routes.set('POST /api/v1/resources', json(400, refused));
    const file = path.join(dir, 'stack.yaml');
    await writeFile(file, 'kind: BackupPolicy\n---\nkind: BackupTarget\n');
    const r = await run(['apply', '-f', file]);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')).toEqual([
      'error: 2 problems, nothing was applied:',
      '  BackupPolicy default/nightly: spec.full.schedule: "0 3 * *" is not a 5-field cron expression',
      '  BackupTarget prod/orders: spec.engine: "oracle" is not one of "postgres", "mysql", "mongodb"',
      '',
    ]);
    expect(r.stderr).not.toMatch(/and \d+ more/);
  });

  it('names the file when several are applied', async () => {
    fake.routes.set('POST /api/v1/resources', json(400, refused));
    const a = path.join(dir, 'a.yaml');
    const b = path.join(dir, 'b.yaml');
    await writeFile(a, 'kind: BackupPolicy\n');
    await writeFile(b, 'kind: BackupTarget\n');
    const r = await run(['apply', '-f', a, '-f', b]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^error: ${a.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: 2 problems, nothing was applied:\n {2}BackupPolicy default/nightly`));
  });
});

describe('resource status in the CLI', () => {
  it('apply prints a warning for each name that points nowhere, with its resource and field, and exits 0', async () => {
    fake.routes.set('POST /api/v1/resources', json(200, {
      applied: [{ kind: 'BackupTarget', namespace: 'prod', name: 'orders', action: 'created' }],
      message: '1 resource(s) applied, 1 changed. 1 warning(s): ...',
      warnings: [{ document: 1, kind: 'BackupTarget', namespace: 'prod', name: 'orders', path: 'spec.policy', message: 'policy nightly does not exist in namespace prod or strata-system' }],
    }));
    const file = path.join(dir, 'target.yaml');
    await writeFile(file, 'kind: BackupTarget\n');
    const r = await run(['apply', '-f', file]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      'backuptarget/prod/orders created',
      'warning: BackupTarget prod/orders: spec.policy: policy nightly does not exist in namespace prod or strata-system',
      '',
    ]);
  });

  it('get resources shows each phase and message', async () => {
    const condition = { type: 'Ready', status: 'False', reason: 'PolicyNotFound', message: 'policy nightly does not exist', observedGeneration: 1, lastTransitionTime: '2025-03-01T03:00:00Z' };
    fake.routes.set('GET /api/v1/resources', json(200, {
      resources: [
        { apiVersion: 'backups.strata.dev/v1alpha1', kind: 'BackupStore', metadata: { namespace: 'default', name: 'local' }, spec: {}, status: { phase: 'Ready', message: '', observedGeneration: 1, conditions: [] } },
        { apiVersion: 'backups.strata.dev/v1alpha1', kind: 'BackupTarget', metadata: { namespace: 'prod', name: 'orders' }, spec: {}, status: { phase: 'NotReady', message: 'policy nightly does not exist', observedGeneration: 1, conditions: [condition] } },
      ],
    }));
    const r = await run(['get', 'resources']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[1]).toMatch(/^BackupStore\s+default\/local\s+Ready\s*/);
    expect(lines[2]).toMatch(/^BackupTarget\s+prod\/orders\s+NotReady\s+policy nightly does not exist$/);
  });
});

describe('plan says what a restore to a moment takes, or why it cannot be done', () => {
  it('prints the base, the segments and the windows; exit 1 with the reason outside every window', async () => {
    const windows = [{ from: '2025-03-01T01:00:00.000Z', to: '2025-03-01T03:00:00.000Z' }];
    fake.routes.set('GET /api/v1/targets/prod/orders/plan', (req, res) => {
      const at = req.query.get('at');
      const body = at === '2025-03-01T02:00:00.250Z'
        ? { restorable: true, baseBackupID: 'b1', baseTime: '2025-03-01T01:00:00.000Z', targetTime: at, effectiveTime: at, segments: 7, bytes: 3 * 1024 * 1024, windows }
        : { restorable: false, reason: `${at} lies outside every change-capture window`, segments: 0, bytes: 0, windows };
      json(200, body)(req, res);
    });
    const ok = await run(['plan', 'prod/orders', '--at', '2025-03-01T02:00:00.250Z']);
    expect(ok.code, ok.stderr + ok.stdout).toBe(0);
    expect(ok.stdout).toContain('effective time:  2025-03-01T02:00:00.250Z');
    expect(ok.stdout).toMatch(/base backup:\s+b1/);
    expect(ok.stdout).toMatch(/segments:\s+7/);
    expect(ok.stdout).toContain('restore windows:\n  2025-03-01 01:00:00Z .. 2025-03-01 03:00:00Z');
    const outside = await run(['plan', 'prod/orders', '--at', '2020-01-01T00:00:00Z']);
    expect(outside.code).toBe(1);
    expect(outside.stdout).toMatch(/restorable:\s+no/);
    expect(outside.stdout).toContain('lies outside every change-capture window');
  });
});

describe('restore --mode download prints the link and its expiry', () => {
  const action = { message: 'Restore orders-restore-x of prod/orders from backup b1 is ready.', kind: 'Restore', namespace: 'prod', name: 'orders-restore-x', link: '/restores/prod/orders-restore-x' };
  const ready = { restore: { namespace: 'prod', name: 'orders-restore-x', target: 'prod/orders', phase: 'Succeeded', mode: 'download', downloadURL: 'https://s3.example.com/b/app.pgdump.zst.age?X-Amz-Signature=1', downloadExpires: '2025-03-02T04:00:00.000Z' } };

  it('without --watch', async () => {
    fake.routes.set('POST /api/v1/restores', json(202, action));
    fake.routes.set('GET /api/v1/restores/prod/orders-restore-x', json(200, ready));
    const r = await run(['restore', 'prod/orders', '--mode', 'download']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        action.message,
        `console: ${fake.url}/restores/prod/orders-restore-x`,
        'download URL: https://s3.example.com/b/app.pgdump.zst.age?X-Amz-Signature=1',
        'expires:      2025-03-02T04:00:00.000Z',
        '',
      ].join('\n'),
    );
    expect(fake.requests.some((q) => q.path === '/api/v1/events')).toBe(false);
  });

  it('with --watch', async () => {
    fake.routes.set('POST /api/v1/restores', json(202, action));
    fake.routes.set('GET /api/v1/events', sse([{ event: 'restore', data: { kind: 'restore', namespace: 'prod', name: 'orders-restore-x', phase: 'Succeeded' } }]));
    fake.routes.set('GET /api/v1/restores/prod/orders-restore-x', json(200, ready));
    const r = await run(['restore', 'prod/orders', '--mode', 'download', '--watch']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('download URL: https://s3.example.com/b/app.pgdump.zst.age?X-Amz-Signature=1\nexpires:      2025-03-02T04:00:00.000Z\n');
  });

  it('-o json prints the Action and then the restore holding the link, one JSON object per line', async () => {
    fake.routes.set('POST /api/v1/restores', json(202, action));
    fake.routes.set('GET /api/v1/restores/prod/orders-restore-x', json(200, ready));
    const r = await run(['restore', 'prod/orders', '--mode', 'download', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as unknown)).toEqual([action, ready]);
  });

  it('a restore not ready yet says where the link will be; a failed one exits 1 with its message', async () => {
    fake.routes.set('POST /api/v1/restores', json(202, action));
    fake.routes.set('GET /api/v1/restores/prod/orders-restore-x', json(200, { restore: { ...ready.restore, phase: 'Running', downloadURL: '' } }));
    let r = await run(['restore', 'prod/orders', '--mode', 'download']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('restore prod/orders-restore-x is Running; `strata restore-status prod/orders-restore-x` shows the link once it is ready\n');
    fake.routes.set('GET /api/v1/restores/prod/orders-restore-x', json(200, { restore: { ...ready.restore, phase: 'Failed', message: 'The specified bucket does not exist', downloadURL: '' } }));
    r = await run(['restore', 'prod/orders', '--mode', 'download']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: restore prod/orders-restore-x failed: The specified bucket does not exist\n');
  });
});

describe('filters are checked', () => {
  it('strata targets --health refuses a value outside the list, naming the allowed ones, without calling the server', async () => {
    const r = await run(['targets', '--health', 'purple']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('ok, never, failing, stale, suspended, misconfigured');
    expect(fake.requests).toHaveLength(0);
  });

  it("prints the server's 400 for a filter it refuses", async () => {
    fake.routes.set('GET /api/v1/targets', json(400, { error: 'query.health: must be one of ok, never, failing, stale, suspended, misconfigured' }));
    const r = await run(['targets', '--health', 'stale']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: query.health: must be one of ok, never, failing, stale, suspended, misconfigured\n');
  });
});

describe('the CLI', () => {
  const commands = [
    [], ['login'], ['logout'], ['whoami'], ['settings'], ['quickstart'], ['apply'], ['get'], ['get', 'resources'], ['get', 'resource'],
    ['delete'], ['delete', 'resource'], ['targets'], ['target'], ['suspend'], ['resume'], ['backup-now'], ['backups'], ['backup'],
    ['inventory'], ['diff'], ['pin'], ['unpin'], ['gc'], ['plan'], ['changes'], ['previews'], ['restore'], ['restores'], ['restore-status'], ['activity'], ['audit'], ['events'],
    ['secret'], ['secret', 'set'], ['secret', 'list'], ['secret', 'delete'],
    ['sandbox'], ['sandbox', 'create'], ['sandbox', 'list'], ['sandbox', 'get'], ['sandbox', 'extend'], ['sandbox', 'credentials'],
    ['sandbox', 'reset'], ['sandbox', 'connect'], ['sandbox', 'delete'], ['sandbox', 'query'], ['sandbox', 'tables'], ['sandbox', 'browse'], ['sandboxes'], ['connect'],
  ];

  it.each(commands.map((c) => [c.join(' ') || '(no command)', c] as const))('strata %s --help shows examples', async (_name, command) => {
    const r = await run([...command, '--help']);
    expect(r.code).toBe(0);
    const examples = r.stdout.split('\nExamples:\n')[1];
    expect(examples, r.stdout).toBeDefined();
    expect(examples?.split('\n').filter((l) => l.startsWith('  strata ') || l.includes('| strata ')).length).toBeGreaterThan(0);
  });

  it('lists every command in the examples test', async () => {
    const r = await run(['--help']);
    const section = r.stdout.split('\nCommands:\n')[1]?.split('\nExamples:\n')[0] ?? '';
    const listed = [...section.matchAll(/^ {2}([a-z-]+)/gm)].map((m) => m[1]).filter((c) => c !== 'help');
    expect(new Set(listed)).toEqual(new Set(commands.filter((c) => c.length === 1).map((c) => c[0])));
  });

  it('prints console links absolute against the server', async () => {
    fake.routes.set('POST /api/v1/targets/prod/orders/suspend', json(200, { message: 'Target prod/orders suspended.', kind: 'BackupTarget', namespace: 'prod', name: 'orders', link: '/targets/prod/orders' }));
    const r = await run(['suspend', 'prod/orders']);
    expect(r.stdout).toBe(`Target prod/orders suspended.\nconsole: ${fake.url}/targets/prod/orders\n`);
    const asJson = await run(['suspend', 'prod/orders', '-o', 'json']);
    expect(JSON.parse(asJson.stdout).link).toBe('/targets/prod/orders');
  });

  it('writes every target as namespace/name: activity, restores, a backup', async () => {
    fake.routes.set('GET /api/v1/activity', json(200, {
      backups: [{ namespace: 'prod', name: 'orders-x', target: 'orders', phase: 'Failed', created: '2025-03-01T00:00:00Z' }],
      restores: [{ namespace: 'prod', name: 'orders-r', target: 'prod/orders', mode: 'new', phase: 'Running', source: { backupID: 'b1', targetNamespace: 'prod' } }],
    }));
    const r = await run(['activity']);
    expect(r.stdout).toMatch(/^prod\/orders-x\s+prod\/orders\s+Failed/m);
    expect(r.stdout).toMatch(/^prod\/orders-r\s+prod\/orders\s+new\s+Running/m);
    expect(r.stdout).not.toMatch(/\sorders\s/);
  });

  it('a server URL ending in /api/v1 gets a hint and is used without it', async () => {
    fake.routes.set('GET /api/v1/whoami', json(200, { principal: { email: 'ops@example.com', role: 'operator' }, version: '1', externalURL: fake.url }));
    const r = await run(['whoami', '--server', `${fake.url}/api/v1/`]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`hint: --server ${fake.url}/api/v1/ ends in /api/v1, which the CLI adds itself; using ${fake.url}\n`);
    expect(fake.requests.map((q) => q.path)).toEqual(['/api/v1/whoami']);
    const fromEnv = await run(['whoami'], { STRATA_SERVER: `${fake.url}/api/v1` });
    expect(fromEnv.stderr).toContain(`hint: STRATA_SERVER ${fake.url}/api/v1 ends in /api/v1`);
    expect(fake.requests.at(-1)?.path).toBe('/api/v1/whoami');
  });

  it('login stores the server without /api/v1', async () => {
    fake.routes.set('POST /api/dev/token', json(200, { token: 'dev-jwt', expiresAt: '2030-01-01T00:00:00Z' }));
    const r = await run(['login', '--server', `${fake.url}/api/v1`, '--email', 'dev@example.com']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Logged in to ${fake.url} as dev@example.com`);
    expect(fake.requests[0]?.path).toBe('/api/dev/token');
  });
});
