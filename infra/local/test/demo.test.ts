import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureDemoDatabases } from '../src/demo.ts';
import { mysqlConnectionOptions } from '../src/mariadb.ts';

// The test run's servers stand in for servers the stack started itself; the demo gets a name of its own here.
const POSTGRES_URL = process.env.POSTGRES_URL as string;
const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';
const name = `demo_${randomBytes(3).toString('hex')}`;
const started = { postgres: { adminUrl: POSTGRES_URL, source: 'started' as const }, mysql: { adminUrl: MYSQL_URL, source: 'started' as const } };

async function pgQuery(sql: string, database = name): Promise<unknown[][]> {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return (await client.query({ text: sql, rowMode: 'array' })).rows;
  } finally {
    await client.end();
  }
}

async function myQuery(sql: string): Promise<unknown[][]> {
  const connection = await mysql.createConnection({ ...mysqlConnectionOptions(MYSQL_URL), database: name, rowsAsArray: true });
  try {
    return (await connection.query(sql))[0] as unknown[][];
  } finally {
    await connection.end();
  }
}

afterAll(async () => {
  await pgQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`, 'postgres').catch(() => undefined);
  const connection = await mysql.createConnection(mysqlConnectionOptions(MYSQL_URL));
  await connection.query(`DROP DATABASE IF EXISTS \`${name}\``);
  await connection.end();
});

describe('the demo database of the local stack', () => {
  it('is created with customers and orders in both servers, once: a second start keeps what is there', async () => {
    const lines: string[] = [];
    expect(await ensureDemoDatabases(started, (line) => lines.push(line), name)).toEqual({ postgres: true, mysql: true });
    expect(lines).toHaveLength(2);
    expect(lines).toContainEqual(expect.stringContaining(`"${name}" created in the stack's Postgres`));
    expect(lines).toContainEqual(expect.stringContaining(`"${name}" created in the stack's MariaDB`));
    for (const query of [pgQuery, myQuery]) {
      expect(await query('SELECT email, country FROM customers WHERE id = 1')).toEqual([['customer1@example.com', 'DE']]);
      expect(Number((await query('SELECT count(*) FROM customers'))[0]?.[0])).toBe(200);
      expect(Number((await query('SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id'))[0]?.[0])).toBe(600);
    }
    await pgQuery("UPDATE customers SET name = 'kept' WHERE id = 1");
    await myQuery("UPDATE customers SET name = 'kept' WHERE id = 1");
    lines.length = 0;
    expect(await ensureDemoDatabases(started, (line) => lines.push(line), name)).toEqual({ postgres: true, mysql: true });
    expect(lines).toEqual([]);
    expect(await pgQuery('SELECT name FROM customers WHERE id = 1')).toEqual([['kept']]);
    expect(await myQuery('SELECT name FROM customers WHERE id = 1')).toEqual([['kept']]);
  });

  it('is never made in a server the stack did not start (POSTGRES_URL, MYSQL_URL)', async () => {
    const other = `demo_${randomBytes(3).toString('hex')}`;
    const fromEnv = { postgres: { ...started.postgres, source: 'env' as const }, mysql: { ...started.mysql, source: 'env' as const } };
    expect(await ensureDemoDatabases(fromEnv, () => undefined, other)).toEqual({ postgres: false, mysql: false });
    expect(await pgQuery(`SELECT count(*) FROM pg_database WHERE datname = '${other}'`, 'postgres')).toEqual([['0']]);
  });
});
