import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listTables, QueryRefused, runQuery } from '../src/query/index.ts';
import { closeQueryPools } from '../src/query/pools.ts';
import type { SandboxConnection } from '../src/query/index.ts';
import { describeSharedBehaviour, expectRefusedWithoutLeak, runner, uniqueName, usersValues } from './query-fixtures.ts';

const adminUrl = new URL(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/');
const database = uniqueName('sbxq_my');
const conn: SandboxConnection = {
  engine: 'mysql',
  host: adminUrl.hostname,
  port: Number(adminUrl.port || 3306),
  username: decodeURIComponent(adminUrl.username),
  password: decodeURIComponent(adminUrl.password),
  database,
};

async function admin<T>(fn: (c: mysql.Connection) => Promise<T>, db?: string): Promise<T> {
  const c = await mysql.createConnection({ host: conn.host, port: conn.port, user: conn.username, password: conn.password, multipleStatements: true, ...(db ? { database: db } : {}) });
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const SEED = `
  CREATE TABLE users (id INT PRIMARY KEY, email TEXT, name TEXT, phone TEXT, note TEXT);
  INSERT INTO users VALUES ${usersValues()};
  CREATE TABLE orders (id INT PRIMARY KEY, user_id INT, note TEXT, FOREIGN KEY (user_id) REFERENCES users (id));
  INSERT INTO orders VALUES (1, 1, 'alice.secret@example.com'), (2, 2, 'first order');
  CREATE TABLE notes (body TEXT);
  CREATE TABLE many (id INT PRIMARY KEY, email TEXT);
  INSERT INTO many WITH RECURSIVE r (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 120) SELECT i, CONCAT('m', i, '@example.com') FROM r;
  CREATE TABLE kinds (b VARBINARY(4), flag BOOLEAN, day DATE, j JSON, n DECIMAL(6, 2));
  INSERT INTO kinds VALUES (X'00FF', TRUE, '2024-01-02', '{"a": 1}', 1.5);
  CREATE VIEW v_users AS SELECT id, UPPER(email) AS x FROM users;
  CREATE VIEW v_names AS SELECT id, name FROM users;
  CREATE FUNCTION leak(i INT) RETURNS TEXT READS SQL DATA RETURN (SELECT email FROM users WHERE id = i);
`;

beforeAll(async () => {
  await admin((c) => c.query(`CREATE DATABASE \`${database}\``));
  await admin((c) => c.query(SEED), database);
});

afterAll(async () => {
  await closeQueryPools();
  await admin((c) => c.query(`DROP DATABASE IF EXISTS \`${database}\``));
});

const run = runner(conn);

describeSharedBehaviour({
  name: 'mysql',
  conn,
  refused: [
    "select json_object('e', email) from users",
    'select concat(email) from users',
    "select email || '' from users",
    'select * from users order by 2',
    'select distinct email from users',
    'select /*!50000 upper(email) */ from users',
    'select /*M!100000 upper(email) */ from users',
    'select id from users u join users v using (email)',
    'select u.id from users u natural join orders o',
    'select * from users union select * from users',
    "execute immediate 'select upper(email) from users'",
    'select min_value from mysql.column_stats',
    'select `email` from users where `email` is not null',
    'select e from (select email as e from users) s order by e',
    'select sha2(x, 256) from v_users',
    'select id from v_users',
    'select * from users procedure analyse()',
    'select @e := email from users',
    "select * from users into outfile '/tmp/sbxq-users.txt'",
  ],
  maskedDirect: [
    { sql: 'with x (i, b) as (select id, email from users) select b from x order by i', column: 'b' },
    { sql: 'select e from (select email as e from users order by id limit 2) s', column: 'e' },
    { sql: 'select s.* from (select * from users) s', column: 'phone' },
  ],
  allowed: ['select id, name from v_names', "select email from users where name = 'Bob'", 'select u.id, o.id from users u join orders o on o.user_id = u.id'],
  copies: ['insert into notes select email from users', 'insert into notes select phone from users', 'create table copied as select * from users'],
  messages: { readOnly: /Cannot execute statement in a READ ONLY transaction/, severalStatements: /only one statement/, syntax: /SQL syntax/ },
  qualifiedUsers: `${database}.users`,
});

describe('mysql specifics', () => {
  it('keeps a server session between requests, and nothing a request set or created in it', async () => {
    const bare = (sql: string, write = false) => runQuery(conn, { sql, masks: [], write });
    const id = (await bare('select connection_id()')).rows;
    expect((await bare('select connection_id()')).rows).toEqual(id);
    await bare("set @leak = 'x'");
    await bare('create temporary table scratch (a int)', true);
    expect(await bare('select @leak')).toMatchObject({ rows: [['']], nulls: [[0, 0]] });
    await expect(bare('select * from scratch')).rejects.toThrow(/scratch' doesn't exist/);
    // A refused statement ends its transaction, not the session.
    expect((await bare('select connection_id()')).rows).toEqual(id);
  });

  it('runs no DDL in a read-only request, and DDL with write: true', async () => {
    await expectRefusedWithoutLeak(run('create table sneaky (a int)'), /READ ONLY/);
    expect((await listTables(conn)).map((t) => t.name)).not.toContain('sneaky');
    expect((await run('create table made (a int)', { write: true })).command).toBe('CREATE TABLE');
    expect((await listTables(conn)).map((t) => t.name)).toContain('made');
    await run('drop table made', { write: true });
  });

  it('prints every cell as the server does', async () => {
    const result = await run('select b, flag, day, j, n from kinds');
    expect(result.rows).toEqual([['0x00FF', '1', '2024-01-02', '{"a": 1}', '1.50']]);
    expect(Number.isInteger(result.ms)).toBe(true);
  });

  it('stops a statement at its timeout', async () => {
    // MariaDB interrupts SLEEP with an error; a server that let SLEEP run its 5 s would answer 0.
    const outcome = await run('select sleep(5) as slept', { timeoutMs: 300 }).then(
      (result) => result.rows[0]?.[0],
      (error: unknown) => error,
    );
    if (outcome instanceof Error) {
      expect(outcome).toBeInstanceOf(QueryRefused);
      expect(outcome.message).toMatch(/max_statement_time|max_execution_time|interrupted/i);
    } else {
      expect(outcome).toBe('1');
    }
  });

  it('takes one trailing semicolon', async () => {
    expect((await run('select 1;')).rows).toEqual([['1']]);
  });

  it('lists base tables with their columns, sorted', async () => {
    const tables = await listTables(conn);
    expect(tables.map((t) => t.fullName)).toEqual(['kinds', 'many', 'notes', 'orders', 'users'].map((n) => `${database}.${n}`));
    const users = tables.find((t) => t.name === 'users');
    expect(users).toMatchObject({ schema: database, columns: ['id', 'email', 'name', 'phone', 'note'] });
    expect(users?.rowsEstimate).toBeGreaterThanOrEqual(0);
    expect(users?.bytes).toBeGreaterThan(0);
  });
});
