// Replication rights, checked on real servers (the run's Postgres and MariaDB): what is missing, and the exact fix.
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replicationRights } from '../src/change-capture/replication.ts';

const pgUrl = new URL(process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const myUrl = new URL(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/');
const suffix = randomBytes(4).toString('hex');
const pgPlain = `strata_norepl_${suffix}`;
const pgRepl = `strata_repl_${suffix}`;
const myPlain = `strata_ro_${suffix}`;
const myRepl = `strata_repl_${suffix}`;
let admin: pg.Client;
let myAdmin: mysql.Connection;

const pgProbe = (username: string) => ({ engine: 'postgres' as const, host: pgUrl.hostname, port: Number(pgUrl.port || 5432), username, password: 'pw-for-test', databases: ['*'] });
const myProbe = (username: string) => ({ engine: 'mysql' as const, host: myUrl.hostname, port: Number(myUrl.port || 3306), username, password: 'pw-for-test', databases: ['*'] });

beforeAll(async () => {
  admin = new pg.Client({ connectionString: pgUrl.toString() });
  await admin.connect();
  await admin.query(`CREATE ROLE ${pgPlain} LOGIN PASSWORD 'pw-for-test'`);
  await admin.query(`CREATE ROLE ${pgRepl} LOGIN REPLICATION PASSWORD 'pw-for-test'`);
  myAdmin = await mysql.createConnection({ host: myUrl.hostname, port: Number(myUrl.port || 3306), user: decodeURIComponent(myUrl.username), password: decodeURIComponent(myUrl.password) });
  await myAdmin.query(`CREATE USER '${myPlain}'@'%' IDENTIFIED BY 'pw-for-test'`);
  await myAdmin.query(`GRANT SELECT ON *.* TO '${myPlain}'@'%'`);
  await myAdmin.query(`CREATE USER '${myRepl}'@'%' IDENTIFIED BY 'pw-for-test'`);
  await myAdmin.query(`GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '${myRepl}'@'%'`);
});
afterAll(async () => {
  await admin?.query(`DROP ROLE IF EXISTS ${pgPlain}`).catch(() => undefined);
  await admin?.query(`DROP ROLE IF EXISTS ${pgRepl}`).catch(() => undefined);
  await admin?.end();
  await myAdmin?.query(`DROP USER IF EXISTS '${myPlain}'@'%'`).catch(() => undefined);
  await myAdmin?.query(`DROP USER IF EXISTS '${myRepl}'@'%'`).catch(() => undefined);
  await myAdmin?.end();
});

describe('replication rights', () => {
  it('postgres: a role without REPLICATION is told the exact ALTER ROLE', async () => {
    const rights = await replicationRights(pgProbe(pgPlain), 3000);
    expect(rights?.denied).toContain(`role ${pgPlain} has no REPLICATION attribute`);
    expect(rights?.fix).toContain(`ALTER ROLE "${pgPlain}" REPLICATION;`);
  });

  it('postgres: a REPLICATION role is not asked for the attribute; whatever else is missing comes from the server itself', async () => {
    const rights = await replicationRights(pgProbe(pgRepl), 3000);
    expect(rights?.denied ?? '').not.toContain('REPLICATION attribute');
    const walLevel = (await admin.query<{ wal_level: string }>('SHOW wal_level')).rows[0]!.wal_level;
    expect((rights?.denied ?? '').includes('wal_level')).toBe(walLevel === 'minimal');
  });

  it('mariadb: a user without the replication privileges is told the exact GRANT', async () => {
    const rights = await replicationRights(myProbe(myPlain), 3000);
    expect(rights?.denied).toContain(`${myPlain} lacks REPLICATION SLAVE and REPLICATION CLIENT`);
    expect(rights?.fix).toContain(`GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '${myPlain}'@'%';`);
  });

  it('mariadb: with the privileges, only the server settings can be missing, each named as the server reports it', async () => {
    const rights = await replicationRights(myProbe(myRepl), 3000);
    expect(rights?.denied ?? '').not.toContain('lacks');
    const [[vars]] = await myAdmin.query<mysql.RowDataPacket[]>('SELECT @@log_bin AS log_bin, @@binlog_format AS format');
    expect((rights?.denied ?? '').includes('binary log is off')).toBe(Number(vars!.log_bin) !== 1);
    expect((rights?.denied ?? '').includes('binlog_format')).toBe(String(vars!.format).toUpperCase() !== 'ROW');
  });

  it('a server that does not answer is reported, not thrown', async () => {
    const rights = await replicationRights({ ...pgProbe(pgPlain), port: 1 }, 1000);
    expect(rights?.denied).toMatch(/could not be checked/);
  });
});
