import net from 'node:net';
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMysqlDriver } from '../src/engines/index.ts';
import type { DatabaseAccess } from '../src/engines/index.ts';
import { dumpContext } from '../src/engines/mysql/tools.ts';
import { accessFromUrl, createMysqlFixture, dropMysqlDatabase, uniqueDatabaseName } from './fixtures.ts';

/**
 * What the dump reads of a MariaDB server before it runs: a server that accepted the connection and then failed a
 * query is connected (with the query's error), and the dump's record says what was not read; a server that cannot be
 * reached is not connected.
 */
const ADMIN_URL = process.env.MYSQL_URL as string;
const admin: DatabaseAccess = accessFromUrl(ADMIN_URL ?? 'mysql://root@127.0.0.1:3306/');
const database = uniqueDatabaseName('my_ctx');
// An account the server lets in but answers one statement an hour: its second query fails, as a refused one would.
const user = `strata_ctx_${randomBytes(4).toString('hex')}`;
const password = randomBytes(12).toString('hex');
const limited: DatabaseAccess = { ...admin, username: user, password };

async function asAdmin(text: string): Promise<void> {
  const connection = await mysql.createConnection({ host: admin.host, port: admin.port, user: admin.username, password: admin.password });
  try {
    await connection.query(text);
  } finally {
    await connection.end();
  }
}

async function closedPort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  expect(ADMIN_URL, 'the global test setup provides MYSQL_URL').toBeTruthy();
  await createMysqlFixture(ADMIN_URL, database, { largeRowBytes: 1024, rows: 5 });
  await asAdmin(`CREATE USER '${user}'@'%' IDENTIFIED BY '${password}' WITH MAX_QUERIES_PER_HOUR 1`);
  await asAdmin(`GRANT SELECT, SHOW VIEW, TRIGGER, EVENT ON \`${database}\`.* TO '${user}'@'%'`);
}, 60_000);

afterAll(async () => {
  await asAdmin(`DROP USER IF EXISTS '${user}'@'%'`).catch(() => {});
  await dropMysqlDatabase(ADMIN_URL, database).catch(() => {});
});

describe('the context a mysql dump reads first', () => {
  it('a server that accepted the connection and failed a query is connected, with what it read and the error', { timeout: 30_000 }, async () => {
    const context = await dumpContext(limited, database);
    expect(context).toMatchObject({ connected: true, mariadb: true, version: expect.stringMatching(/MariaDB/i), error: expect.stringMatching(/max_queries_per_hour|max_questions/i) });
    expect(context.tables).toBeUndefined();
  });

  it('the dump of such a server records that its settings were not all read', { timeout: 30_000 }, async () => {
    const dump = createMysqlDriver().dump(limited, database, { excludeData: [], excludeTables: [] });
    dump.stdout.resume();
    await dump.done.catch(() => undefined);
    expect(dump.warnings).toContainEqual(expect.stringMatching(/^the server's settings were not all read before the dump \(.*(max_queries_per_hour|max_questions).*\); it records no binlog position$/i));
  });

  it('a server that cannot be reached is not connected, and says why', { timeout: 30_000 }, async () => {
    const context = await dumpContext({ ...admin, port: await closedPort() }, database);
    expect(context).toEqual({ connected: false, error: expect.stringMatching(/ECONNREFUSED/), mariadb: false, binlog: false, canReadPosition: false });
  });
});
