import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listTables, runQuery } from '../src/query/index.ts';
import { closeQueryPools } from '../src/query/pools.ts';
import type { SandboxConnection } from '../src/query/index.ts';
import { describeSharedBehaviour, expectRefusedWithoutLeak, runner, uniqueName, usersValues } from './query-fixtures.ts';

const adminUrl = new URL(process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const database = uniqueName('sbxq_pg');
const conn: SandboxConnection = {
  engine: 'postgres',
  host: adminUrl.hostname,
  port: Number(adminUrl.port || 5432),
  username: decodeURIComponent(adminUrl.username),
  password: decodeURIComponent(adminUrl.password),
  database,
};

async function admin<T>(fn: (client: pg.Client) => Promise<T>, db?: string): Promise<T> {
  const url = new URL(adminUrl);
  if (db) url.pathname = `/${db}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const SEED = `
  CREATE TABLE users (id int PRIMARY KEY, email text, name text, phone text, note text);
  INSERT INTO users VALUES ${usersValues()};
  CREATE TABLE orders (id int PRIMARY KEY, user_id int REFERENCES users (id), note text);
  INSERT INTO orders VALUES (1, 1, 'alice.secret@example.com'), (2, 2, 'first order');
  CREATE TABLE notes (body text);
  CREATE TABLE many (id int PRIMARY KEY, email text);
  INSERT INTO many SELECT i, 'm' || i || '@example.com' FROM generate_series(1, 120) i;
  CREATE TABLE kinds (b bytea, flag boolean, day date, j jsonb, n numeric(6, 2));
  INSERT INTO kinds VALUES ('\\x00ff'::bytea, true, '2024-01-02', '{"a": 1}', 1.5);
  CREATE VIEW v_users AS SELECT id, upper(email) AS x FROM users;
  CREATE MATERIALIZED VIEW mv_users AS SELECT id, lower(email) AS y FROM users;
  CREATE FUNCTION leak(int) RETURNS text LANGUAGE sql AS 'SELECT email FROM users WHERE id = $1';
  CREATE FUNCTION frozen_leak() RETURNS text LANGUAGE sql IMMUTABLE AS 'SELECT min(email) FROM users';
  CREATE INDEX users_email_idx ON users (email);
  CREATE INDEX many_email_idx ON many (email);
  CREATE TABLE parted (id int, email text) PARTITION BY RANGE (id);
  CREATE TABLE parted_low PARTITION OF parted FOR VALUES FROM (0) TO (10);
  CREATE TABLE parted_high PARTITION OF parted FOR VALUES FROM (10) TO (20);
  INSERT INTO parted VALUES (1, 'alice.secret@example.com'), (15, 'bob.hidden@example.com');
  ANALYZE;
`;

beforeAll(async () => {
  await admin((c) => c.query(`CREATE DATABASE ${database}`));
  await admin((c) => c.query(SEED), database);
});

afterAll(async () => {
  await closeQueryPools();
  await admin((c) => c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
});

const run = runner(conn);

describeSharedBehaviour({
  name: 'postgres',
  conn,
  refused: [
    "select email || '' from users",
    'select row_to_json(u) from users u',
    'select to_jsonb(u.*) from users u',
    'select u from users u',
    'select email from users union all select email from users',
    "select s.id from (select id, email as e from users offset 0) s where s.e like 'a%'",
    "with x as materialized (select id, email e from users) select id from x where e like 'a%'",
    "select u.id from users u, lateral (values (u.email)) v(x) where x like 'a%'",
    'select frozen_leak()',
    'select y from mv_users',
    "select query_to_xml('select email from users', true, true, '')",
    "select most_common_vals::text from pg_stats where attname = 'email'",
    'show search_path',
    'select email::varchar(3) from users',
    'select id from many order by email limit 5',
    "select id from parted where email like 'a%'",
  ],
  maskedDirect: [{ sql: 'select id, email from parted order by id', column: 'email' }],
  allowed: ["select name, count(*) from users group by name", 'select u.name, o.id from users u join orders o on o.user_id = u.id'],
  copies: ['insert into notes select email from users', 'create table copied as select email from users', 'insert into notes select phone from users'],
  messages: { readOnly: /cannot execute INSERT in a read-only transaction/, severalStatements: /multiple commands/, syntax: /syntax error/ },
  qualifiedUsers: 'public.users',
});

describe('postgres specifics', () => {
  it('keeps a server session between requests, and nothing a request set, created or locked in it', async () => {
    const bare = (sql: string, write = false) => runQuery(conn, { sql, masks: [], write });
    const pid = (await bare('select pg_backend_pid()')).rows;
    expect((await bare('select pg_backend_pid()')).rows).toEqual(pid);
    await bare("set application_name = 'leaked'", true);
    await bare('create temporary table scratch (a int)', true);
    await bare('select pg_advisory_lock(42)');
    expect((await bare("select current_setting('application_name')")).rows).toEqual([['strata-sandbox']]);
    await expect(bare('select * from scratch')).rejects.toThrow(/"scratch" does not exist/);
    expect((await bare("select count(*) from pg_locks where locktype = 'advisory' and objid = 42")).rows).toEqual([['0']]);
    // A refused statement ends its transaction, not the session.
    expect((await bare('select pg_backend_pid()')).rows).toEqual(pid);
  });

  it('reads only limit + 1 rows of a large result', async () => {
    const result = await run('select i from generate_series(1, 5000) i', { limit: 10 });
    expect(result.rows).toHaveLength(10);
    expect(result.truncated).toBe(true);
  });

  it('prints every cell as the server does', async () => {
    const result = await run('select b, flag, day, j, n from kinds');
    expect(result.rows).toEqual([['\\x00ff', 't', '2024-01-02', '{"a": 1}', '1.50']]);
    expect(Number.isInteger(result.ms)).toBe(true);
  });

  it('stops a statement at its timeout', async () => {
    await expectRefusedWithoutLeak(run('select pg_sleep(5)', { timeoutMs: 300 }), /statement timeout/);
  });

  it('lists base tables, partitions and materialised views with their columns, sorted', async () => {
    const tables = await listTables(conn);
    const names = ['kinds', 'many', 'mv_users', 'notes', 'orders', 'parted', 'parted_high', 'parted_low', 'users'];
    expect(tables.map((t) => t.fullName)).toEqual(names.map((n) => `public.${n}`));
    const users = tables.find((t) => t.name === 'users');
    expect(users).toMatchObject({ schema: 'public', columns: ['id', 'email', 'name', 'phone', 'note'], rowsEstimate: 3 });
    expect(users?.bytes).toBeGreaterThan(0);
  });
});
