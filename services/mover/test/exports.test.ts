// Selective exports at the engine level, on real servers: the statement timeout holds, large results stream in
// batches, and the transaction is read-only (MariaDB and Postgres).
import { randomBytes } from 'node:crypto';
import pgClient from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testPostgresAdminUrl } from '@sigil/kit/testing';
import { mysqlExport } from '../src/engines/mysql/export.ts';
import { postgresExport } from '../src/engines/postgres/export.ts';
import type { ExportBatch } from '../src/engines/csv.ts';
import { accessFromUrl } from './fixtures.ts';

const pg = accessFromUrl(testPostgresAdminUrl());
const my = accessFromUrl(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/');

const sequence = `strata_t_export_${randomBytes(3).toString('hex')}`;

async function onPostgres(sql: string): Promise<void> {
  const client = new pgClient.Client({ host: pg.host, port: pg.port, user: pg.username, password: pg.password, database: 'postgres' });
  await client.connect();
  await client.query(sql).finally(() => client.end());
}

beforeAll(() => onPostgres(`CREATE SEQUENCE ${sequence}`));
afterAll(() => onPostgres(`DROP SEQUENCE IF EXISTS ${sequence}`));

async function all(batches: AsyncGenerator<ExportBatch>): Promise<ExportBatch[]> {
  const list: ExportBatch[] = [];
  for await (const batch of batches) list.push(batch);
  return list;
}

describe.each([
  { engine: 'postgres', run: (sql: string, ms: number) => postgresExport(pg, 'postgres', sql, ms), slow: 'SELECT pg_sleep(3)', timedOut: /canceling statement due to statement timeout/, rows: 'SELECT g AS n FROM generate_series(1, 2500) g', write: `SELECT nextval('${sequence}')`, readOnly: /cannot execute nextval\(\) in a read-only transaction/, nothing: 'SELECT WHERE false' },
  { engine: 'mysql', run: (sql: string, ms: number) => mysqlExport(my, 'mysql', sql, ms), slow: 'SELECT SLEEP(3) FROM mysql.user LIMIT 1', timedOut: /max_statement_time exceeded|maximum statement execution time exceeded|interrupted/, rows: 'SELECT seq AS n FROM seq_1_to_2500', write: 'CREATE TEMPORARY TABLE strata_export_probe (id int)', readOnly: /READ ONLY transaction/, nothing: 'DO 1' },
])('$engine exports', ({ run, slow, timedOut, rows, write, readOnly, nothing }) => {
  it('stops a query at the statement timeout with the server message', async () => {
    await expect(all(run(slow, 200))).rejects.toThrow(timedOut);
  });

  it('streams a large result in batches of 1,000 rows, the columns in each', async () => {
    const batches = await all(run(rows, 60_000));
    expect(batches.map((b) => b.rows.length).filter((n) => n > 0)).toEqual([1000, 1000, 500]);
    expect(batches.every((b) => b.columns.join() === 'n')).toBe(true);
    expect(batches.at(-1)?.rows.at(-1)).toEqual(['2500']);
  });

  it('ends on a statement without a result: no columns, no rows', async () => {
    const batches = await all(run(nothing, 60_000));
    expect(batches.flatMap((b) => b.rows)).toEqual([]);
    expect(batches.flatMap((b) => b.columns)).toEqual([]);
  });

  it('refuses to write', async () => {
    await expect(all(run(write, 60_000))).rejects.toThrow(readOnly);
  });
});
