// Unit tests of `strata sandbox ...`: runCli in-process against a fake console API on 127.0.0.1.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { json, runStrata, startFake, writeLogin, type Fake, type Handler, type Recorded, type RunResult } from './fake-console.ts';

let fake: Fake;
let dir: string;
let configFile: string;

const NAME = 'orders-sbx-1a2b3c';
const API = '/api/v1';
const SUBCOMMANDS = ['create', 'list', 'get', 'extend', 'reset', 'connect', 'credentials', 'delete', 'query', 'tables', 'browse'];

function run(args: string[], opts: { env?: NodeJS.ProcessEnv; stdin?: string } = {}): Promise<RunResult> {
  return runStrata(args, { home: dir, configFile }, { ...opts, env: { STRATA_POLL_MS: '5', ...opts.env } });
}

const last = (): Recorded => {
  const r = fake.requests.at(-1);
  if (!r) throw new Error('no request recorded');
  return r;
};

const isoFromNow = (ms: number): string => new Date(Date.now() + ms).toISOString();

function sandbox(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: NAME,
    namespace: 'default',
    target: 'default/orders',
    engine: 'postgres',
    phase: 'Ready',
    message: 'ready for queries',
    owner: 'ops@example.com',
    backupID: '20250301t030000z-ab12',
    time: '2025-03-01T03:00:00Z',
    database: 'app',
    databases: ['app', 'billing'],
    host: '127.0.0.1',
    port: 55432,
    inCluster: '127.0.0.1:55432',
    sizeLimit: '2Gi',
    usedBytes: 1536,
    created: isoFromNow(-(2 * 3600_000 + 30_000)),
    ready: isoFromNow(-3600_000),
    expires: isoFromNow(4 * 3600_000 + 30_000),
    connect: '',
    extensions: [],
    ...extra,
  };
}

/** Answers each request with the next of `answers`, repeating the last one. */
function sequence(answers: Handler[]): Handler {
  let i = 0;
  return (req, res) => {
    const answer = answers[Math.min(i++, answers.length - 1)];
    answer?.(req, res);
  };
}

beforeEach(async () => {
  fake = await startFake();
  dir = await mkdtemp(path.join(os.tmpdir(), 'strata-sandbox-cli-'));
  configFile = path.join(dir, 'cfg', 'config.json');
  await writeLogin(configFile, fake.url);
});

afterEach(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

describe('sandbox create', () => {
  const action = { message: `Sandbox ${NAME} of default/orders from backup b1 is starting.`, kind: 'Sandbox', namespace: 'default', name: NAME, link: `/sandboxes/${NAME}` };

  it('posts a sandbox RestoreRequest with only the given flags and prints the Action', async () => {
    fake.routes.set(`POST ${API}/sandboxes`, json(202, action));
    let r = await run(['sandbox', 'create', 'prod/orders', '--backup', 'b1', '--ttl', '4h', '--expose', '--reason', 'incident 42']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(last().method).toBe('POST');
    expect(last().path).toBe(`${API}/sandboxes`);
    expect(last().headers['cf-access-token']).toBe('tok-123');
    expect(JSON.parse(last().body)).toEqual({ target: 'prod/orders', mode: 'sandbox', backupID: 'b1', ttl: '4h', expose: true, reason: 'incident 42' });
    expect(r.stdout).toBe(`${action.message}\nconsole: ${fake.url}/sandboxes/${NAME}\n`);

    r = await run(['sandbox', 'create', 'orders', '--at', '2025-03-01T02:00:00Z', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(last().body)).toEqual({ target: 'default/orders', mode: 'sandbox', at: '2025-03-01T02:00:00Z' });
    expect(JSON.parse(r.stdout)).toEqual(action);
    expect(fake.requests.some((q) => q.method === 'GET')).toBe(false);
  });

  it('--watch polls the sandbox, prints each phase change and the Ready sandbox, exit 0', async () => {
    fake.routes.set(`POST ${API}/sandboxes`, json(202, action));
    fake.routes.set(`GET ${API}/sandboxes/${NAME}`, sequence([
      json(200, { sandbox: sandbox({ phase: 'Pending', message: 'waiting for a server' }) }),
      json(200, { sandbox: sandbox({ phase: 'Pending', message: 'waiting for a server' }) }),
      json(200, { sandbox: sandbox({ phase: 'Restoring', message: 'restoring the backup' }) }),
      json(200, { sandbox: sandbox() }),
    ]));
    const r = await run(['sandbox', 'create', 'orders', '--watch']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(fake.requests.filter((q) => q.method === 'GET')).toHaveLength(4);
    const lines = r.stdout.split('\n');
    expect(lines.slice(0, 5)).toEqual([
      action.message,
      `console: ${fake.url}/sandboxes/${NAME}`,
      `sandbox ${NAME} Pending: waiting for a server`,
      `sandbox ${NAME} Restoring: restoring the backup`,
      `sandbox ${NAME} Ready: ready for queries`,
    ]);
    expect(r.stdout).toMatch(/\nhost:port:\s+127\.0\.0\.1:55432\n/);
  });

  it('--watch exits 1 with the message when the sandbox fails', async () => {
    fake.routes.set(`POST ${API}/sandboxes`, json(202, action));
    fake.routes.set(`GET ${API}/sandboxes/${NAME}`, sequence([
      json(200, { sandbox: sandbox({ phase: 'Restoring', message: 'restoring the backup' }) }),
      json(200, { sandbox: sandbox({ phase: 'Failed', message: 'pg_restore: out of disk space' }) }),
    ]));
    const r = await run(['sandbox', 'create', 'orders', '--watch']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`sandbox ${NAME} Failed: pg_restore: out of disk space\n`);
    expect(r.stdout).not.toContain('host:port');
    expect(r.stderr).toBe(`error: sandbox ${NAME} failed: pg_restore: out of disk space\n`);
  });

  it('--watch exits 1 when the sandbox expires, and after --timeout', async () => {
    fake.routes.set(`POST ${API}/sandboxes`, json(202, action));
    fake.routes.set(`GET ${API}/sandboxes/${NAME}`, json(200, { sandbox: sandbox({ phase: 'Expired', message: '' }) }));
    let r = await run(['sandbox', 'create', 'orders', '--watch']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: sandbox ${NAME} expired\n`);

    fake.routes.set(`GET ${API}/sandboxes/${NAME}`, json(200, { sandbox: sandbox({ phase: 'Pending', message: 'waiting for a server' }) }));
    r = await run(['sandbox', 'create', 'orders', '--watch', '--timeout', '60ms']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: timed out after 0.1s waiting for sandbox ${NAME} (last phase Pending)\n`);
  });

  it('--watch -o json prints the Action, then the Ready SandboxDetail, one JSON object per line', async () => {
    fake.routes.set(`POST ${API}/sandboxes`, json(202, action));
    const ready = { sandbox: sandbox() };
    fake.routes.set(`GET ${API}/sandboxes/${NAME}`, sequence([json(200, { sandbox: sandbox({ phase: 'Restoring' }) }), json(200, ready)]));
    const r = await run(['sandbox', 'create', 'orders', '--watch', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l))).toEqual([action, ready]);
  });
});

describe('sandbox list, get, extend, delete', () => {
  it('lists sandboxes with relative expiry and age; `strata sandboxes` is the same', async () => {
    const list = { sandboxes: [sandbox({ message: 'x'.repeat(80) })] };
    fake.routes.set(`GET ${API}/sandboxes`, json(200, list));
    for (const args of [['sandbox', 'list'], ['sandboxes']]) {
      const r = await run(args);
      expect(r.code).toBe(0);
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^NAME\s+TARGET\s+ENGINE\s+PHASE\s+EXPIRES\s+AGE\s+MESSAGE$/);
      expect(lines[1]).toMatch(new RegExp(`^${NAME}\\s+default/orders\\s+postgres\\s+Ready\\s+in 4h0m\\s+2h0m\\s+x{59}…$`));
      expect(lines).toHaveLength(2);
    }
    const r = await run(['sandbox', 'list', '-o', 'json']);
    expect(JSON.parse(r.stdout)).toEqual(list);
  });

  it('an empty list says so', async () => {
    fake.routes.set(`GET ${API}/sandboxes`, json(200, { sandboxes: [] }));
    const r = await run(['sandbox', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('No sandboxes.\n');
  });

  it('gets one sandbox as key/values, and as JSON', async () => {
    const detail = {
      sandbox: sandbox({ extensions: [{ by: '2h', granted: '1h', reason: 'still investigating', user: 'ops@example.com', at: '2025-03-01T05:00:00Z' }] }),
    };
    fake.routes.set(`GET ${API}/sandboxes/${NAME}`, json(200, detail));
    let r = await run(['sandbox', 'get', NAME]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(last().path).toBe(`${API}/sandboxes/${NAME}`);
    for (const line of [
      `name:\\s+${NAME}`, 'target:\\s+default/orders', 'engine:\\s+postgres', 'phase:\\s+Ready', 'backup:\\s+20250301t030000z-ab12',
      'time:\\s+2025-03-01 03:00:00Z', 'database:\\s+app', 'databases:\\s+app,billing', 'host:port:\\s+127\\.0\\.0\\.1:55432',
      'size limit:\\s+2Gi', 'used:\\s+1\\.5 KiB', 'expires:\\s+\\S+ \\S+Z \\(in 4h0m\\)',
    ]) expect(r.stdout).toMatch(new RegExp(`^${line}$`, 'm'));
    expect(r.stdout).toContain('extensions:\n  - +2h (granted 1h) by ops@example.com at 2025-03-01 05:00:00Z: still investigating\n');
    r = await run(['sandbox', 'get', NAME, '-o', 'yaml']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`  name: ${NAME}\n`);
  });

  it('a 404 prints the server error and exits 1', async () => {
    fake.routes.set(`GET ${API}/sandboxes/nope`, json(404, { error: 'Sandbox nope does not exist.' }));
    const r = await run(['sandbox', 'get', 'nope']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('error: Sandbox nope does not exist.\n');
  });

  it('extends by a duration with a reason, and deletes', async () => {
    fake.routes.set(`POST ${API}/sandboxes/${NAME}/extend`, json(200, { message: `Sandbox ${NAME} now expires at 2025-03-01T10:00:00Z.` }));
    fake.routes.set(`DELETE ${API}/sandboxes/${NAME}`, json(200, { message: `Sandbox ${NAME} is being deleted.` }));
    let r = await run(['sandbox', 'extend', NAME, '--by', '2h', '--reason', 'still investigating']);
    expect(r.code).toBe(0);
    expect(JSON.parse(last().body)).toEqual({ by: '2h', reason: 'still investigating' });
    expect(r.stdout).toBe(`Sandbox ${NAME} now expires at 2025-03-01T10:00:00Z.\n`);
    r = await run(['sandbox', 'extend', NAME, '--by', '30m', '-o', 'json']);
    expect(JSON.parse(last().body)).toEqual({ by: '30m' });
    expect(JSON.parse(r.stdout)).toEqual({ message: `Sandbox ${NAME} now expires at 2025-03-01T10:00:00Z.` });
    r = await run(['sandbox', 'delete', NAME]);
    expect(r.code).toBe(0);
    expect(last().method).toBe('DELETE');
    expect(last().path).toBe(`${API}/sandboxes/${NAME}`);
    expect(r.stdout).toBe(`Sandbox ${NAME} is being deleted.\n`);
  });
});

describe('sandbox reset', () => {
  const resetAction = { message: `Sandbox ${NAME} is being reset: its server is recreated empty and backup 20250301t030000z-ab12 restored into it again.`, kind: 'Sandbox', namespace: 'default', name: NAME, link: `/sandboxes/${NAME}` };

  it('posts the reason (or an empty body) and prints the Action', async () => {
    fake.routes.set(`POST ${API}/sandboxes/${NAME}/reset`, json(202, resetAction));
    let r = await run(['sandbox', 'reset', NAME, '--reason', 'start over']);
    expect(r.code).toBe(0);
    expect(last()).toMatchObject({ method: 'POST', path: `${API}/sandboxes/${NAME}/reset` });
    expect(JSON.parse(last().body)).toEqual({ reason: 'start over' });
    expect(r.stdout.split('\n')[0]).toBe(resetAction.message);
    r = await run(['sandbox', 'reset', NAME, '-o', 'json']);
    expect(JSON.parse(last().body)).toEqual({});
    expect(JSON.parse(r.stdout)).toEqual(resetAction);
  });

  it('--watch follows the sandbox through Pending and Restoring until it is Ready again', async () => {
    fake.routes.set(`POST ${API}/sandboxes/${NAME}/reset`, json(202, resetAction));
    fake.routes.set(`GET ${API}/sandboxes/${NAME}`, sequence([
      json(200, { sandbox: sandbox({ phase: 'Pending', message: 'reset 1: recreating the server empty' }) }),
      json(200, { sandbox: sandbox({ phase: 'Restoring', message: 'restoring the backup' }) }),
      json(200, { sandbox: sandbox() }),
    ]));
    const r = await run(['sandbox', 'reset', NAME, '--watch']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').slice(0, 5)).toEqual([
      resetAction.message,
      `console: ${fake.url}/sandboxes/${NAME}`,
      `sandbox ${NAME} Pending: reset 1: recreating the server empty`,
      `sandbox ${NAME} Restoring: restoring the backup`,
      `sandbox ${NAME} Ready: ready for queries`,
    ]);
  });

  it('a sandbox that is not Ready (409) prints the server error and exits 1', async () => {
    fake.routes.set(`POST ${API}/sandboxes/${NAME}/reset`, json(409, { error: `Sandbox ${NAME} is Restoring; only a Ready sandbox can be reset.` }));
    const r = await run(['sandbox', 'reset', NAME]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`only a Ready sandbox can be reset`);
  });
});

describe('sandbox connect', () => {
  it('is `strata connect`: a sandbox that is not exposed is refused before any tunnel, under both names', async () => {
    fake.routes.set(`GET ${API}/sandboxes/${NAME}`, json(200, { sandbox: sandbox({ connect: '' }) }));
    for (const args of [['sandbox', 'connect', NAME], ['connect', NAME]]) {
      const r = await run(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(`sandbox ${NAME} is not exposed (or not Ready: it is Ready); create one with \`strata sandbox create TARGET --expose\``);
      expect(last()).toMatchObject({ method: 'GET', path: `${API}/sandboxes/${NAME}` });
    }
  });
});

describe('sandbox credentials', () => {
  const pg = { engine: 'postgres', host: '127.0.0.1', port: 55432, database: 'app', username: 'strata', password: 'p@ss:w/rd', route: '' };

  it('prints the fields and a URL with the user and password encoded', async () => {
    fake.routes.set(`GET ${API}/sandboxes/${NAME}/credentials`, json(200, pg));
    const r = await run(['sandbox', 'credentials', NAME]);
    expect(r.code).toBe(0);
    expect(last().path).toBe(`${API}/sandboxes/${NAME}/credentials`);
    expect(r.stdout).toBe([
      'engine:    postgres',
      'host:      127.0.0.1',
      'port:      55432',
      'database:  app',
      'username:  strata',
      'password:  p@ss:w/rd',
      'url:       postgres://strata:p%40ss%3Aw%2Frd@127.0.0.1:55432/app',
      "shell:     psql 'postgres://strata:p%40ss%3Aw%2Frd@127.0.0.1:55432/app'",
      '',
    ].join('\n'));
  });

  it('for mysql prints a mysql command line; -o json prints the object', async () => {
    const my = { ...pg, engine: 'mysql', port: 33306, password: "it's" };
    fake.routes.set(`GET ${API}/sandboxes/${NAME}/credentials`, json(200, my));
    let r = await run(['sandbox', 'credentials', NAME]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("url:       mysql://strata:it's@127.0.0.1:33306/app\n");
    expect(r.stdout).toContain("shell:     mysql -h 127.0.0.1 -P 33306 -u 'strata' -p'it'\\''s' 'app'\n");
    r = await run(['sandbox', 'credentials', NAME, '-o', 'json']);
    expect(JSON.parse(r.stdout)).toEqual(my);
  });
});

describe('sandbox query, tables, browse', () => {
  const result = { columns: ['id', 'email'], rows: [['1', '***'], ['2', '***']], truncated: false, ms: 3, command: 'SELECT', masked: ['email'] };
  const serverText = 'id | email (masked)\n---+---------------\n1  | ***\n2  | ***\n(2 rows)\n';

  /** Answers like the sandbox service: an aligned text table when asked for text/plain, else the QueryResult. */
  const queryRoute: Handler = (req, res) => {
    if (String(req.headers.accept).includes('text/plain')) {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(serverText);
    } else json(200, result)(req, res);
  };

  it('text mode asks for text/plain and prints the server table as it is', async () => {
    fake.routes.set(`POST ${API}/sandboxes/${NAME}/query`, queryRoute);
    const r = await run(['sandbox', 'query', NAME, 'select id, email from users', '--database', 'billing', '--write', '--limit', '20']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(last().method).toBe('POST');
    expect(last().headers.accept).toBe('text/plain');
    expect(last().headers['content-type']).toBe('application/json');
    expect(JSON.parse(last().body)).toEqual({ sql: 'select id, email from users', database: 'billing', write: true, limit: 20 });
    expect(r.stdout).toBe(serverText);
  });

  it('-o json asks for JSON and prints the QueryResult; "-" reads the SQL from stdin', async () => {
    fake.routes.set(`POST ${API}/sandboxes/${NAME}/query`, queryRoute);
    const sql = 'select id, email\n  from users;\n';
    const r = await run(['sandbox', 'query', NAME, '-', '-o', 'json'], { stdin: sql });
    expect(r.code).toBe(0);
    expect(last().headers.accept).toBe('application/json');
    expect(JSON.parse(last().body)).toEqual({ sql });
    expect(JSON.parse(r.stdout)).toEqual(result);
  });

  it('a refused query (400) prints error: MESSAGE and exits 1', async () => {
    fake.routes.set(`POST ${API}/sandboxes/${NAME}/query`, json(400, { error: 'syntax error at or near "selec"' }));
    for (const output of ['text', 'json']) {
      const r = await run(['sandbox', 'query', NAME, 'selec 1', '-o', output]);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe('error: syntax error at or near "selec"\n');
    }
  });

  it('lists the tables of a database', async () => {
    const tables = {
      tables: [
        { schema: 'public', name: 'orders', fullName: 'public.orders', rowsEstimate: 1200, bytes: 3 * 1024 * 1024, columns: ['id', 'status', 'total'] },
        { schema: 'public', name: 'empty', fullName: 'public.empty', rowsEstimate: 0, bytes: 8192, columns: ['id'] },
      ],
    };
    fake.routes.set(`GET ${API}/sandboxes/${NAME}/tables`, json(200, tables));
    let r = await run(['sandbox', 'tables', NAME, '--database', 'billing']);
    expect(r.code).toBe(0);
    expect(last().query.get('database')).toBe('billing');
    expect(r.stdout).toBe('TABLE          ROWS  SIZE   COLUMNS\npublic.orders  1200  3 MiB  3\npublic.empty   0     8 KiB  1\n');
    r = await run(['sandbox', 'tables', NAME, '-o', 'json']);
    expect([...last().query.keys()]).toEqual([]);
    expect(JSON.parse(r.stdout)).toEqual(tables);
  });

  it('browses a table: masked headers marked, NULL cells empty; -o json prints the QueryResult', async () => {
    const browsed = {
      columns: ['id', 'email', 'note'],
      rows: [['1', '***', ''], ['22', '***', 'multi\nline']],
      truncated: true,
      ms: 4,
      masked: ['email'],
      nulls: [[0, 2]],
    };
    fake.routes.set(`GET ${API}/sandboxes/${NAME}/tables/public.orders`, json(200, browsed));
    let r = await run(['sandbox', 'browse', NAME, 'public.orders', '--database', 'app']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(last().query.get('database')).toBe('app');
    expect(r.stdout).toBe([
      'id  email (masked)  note',
      '--  --------------  -----------',
      '1   ***',
      '22  ***             multi\\nline',
      '(2 rows, truncated)',
      '',
    ].join('\n'));
    r = await run(['sandbox', 'browse', NAME, 'public.orders', '-o', 'json']);
    expect(JSON.parse(r.stdout)).toEqual(browsed);
  });
});

describe('sandbox usage errors exit 2 without calling the server', () => {
  const cases: string[][] = [
    ['sandbox', 'get', 'Not_A_Name'],
    ['sandbox', 'get', 'default/orders-sbx'],
    ['sandbox', 'create', 'a/b/c'],
    ['sandbox', 'create', 'orders', '--ttl', 'forever'],
    ['sandbox', 'create', 'orders', '--backup', 'b1', '--at', '2025-01-01T00:00:00Z'],
    ['sandbox', 'create', 'orders', '--watch', '--timeout', 'soon'],
    ['sandbox', 'extend', NAME],
    ['sandbox', 'extend', NAME, '--by', 'a while'],
    ['sandbox', 'query', NAME],
    ['sandbox', 'query', NAME, '   '],
    ['sandbox', 'query', NAME, 'select 1', '--limit', '0'],
    ['sandbox', 'browse', NAME, 'a/b'],
  ];
  for (const args of cases) {
    it(`strata ${args.join(' ')}`, async () => {
      const r = await run(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/error/);
      expect(fake.requests).toHaveLength(0);
    });
  }

});

describe('sandbox help', () => {
  it('strata --help lists sandbox and sandboxes; sandbox --help lists its commands', async () => {
    let r = await run(['--help']);
    expect(r.stdout).toMatch(/^ {2}sandbox\b/m);
    expect(r.stdout).toMatch(/^ {2}sandboxes\b/m);
    r = await run(['sandbox', '--help']);
    expect(r.code).toBe(0);
    for (const sub of SUBCOMMANDS) expect(r.stdout).toMatch(new RegExp(`^  ${sub}\\b`, 'm'));
  });

  const commands = [['sandbox'], ['sandboxes'], ...SUBCOMMANDS.map((sub) => ['sandbox', sub])];
  it.each(commands.map((c) => [c.join(' '), c] as const))('strata %s --help shows examples', async (_name, command) => {
    const r = await run([...command, '--help']);
    expect(r.code).toBe(0);
    const examples = r.stdout.split('\nExamples:\n')[1] ?? '';
    expect(examples.split('\n').filter((l) => l.startsWith(`  strata ${command[0]}`)).length, r.stdout).toBeGreaterThan(0);
  });
});
