// The inventory's migration version and applied migrations from each known migration table, on both engines: Flyway,
// Rails/dbmate and golang-migrate `schema_migrations`, Knex, Alembic, Django and EF Core (Prisma: the fixtures).
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driverFor } from '../src/engines/index.ts';
import { accessFromUrl, dropMysqlDatabase, dropPostgresDatabase, uniqueDatabaseName } from './fixtures.ts';

type Engine = 'postgres' | 'mysql';

const urls: Record<Engine, string> = {
  postgres: process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  mysql: process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/',
};
const databases: Record<Engine, string> = { postgres: uniqueDatabaseName('pg_mig'), mysql: uniqueDatabaseName('my_mig') };

/** Runs statements in the engine's test database (or, without one, on the server). */
async function run(engine: Engine, statements: string[], database?: string): Promise<void> {
  const access = accessFromUrl(urls[engine]);
  if (engine === 'postgres') {
    const client = new pg.Client({ host: access.host, port: access.port, user: access.username, password: access.password, database: database ?? 'postgres' });
    await client.connect();
    try {
      for (const statement of statements) await client.query(statement);
    } finally {
      await client.end();
    }
    return;
  }
  const connection = await mysql.createConnection({ host: access.host, port: access.port, user: access.username, password: access.password, ...(database ? { database } : {}) });
  try {
    for (const statement of statements) await connection.query(statement);
  } finally {
    await connection.end();
  }
}

interface Case {
  table: string;
  create: (q: (name: string) => string) => string[];
  version: string;
  migrations: string[];
}

const CASES: Case[] = [
  {
    table: 'flyway_schema_history',
    create: (q) => [
      `CREATE TABLE ${q('flyway_schema_history')} (installed_rank int PRIMARY KEY, version varchar(50) NULL, description varchar(200) NOT NULL, success boolean NOT NULL)`,
      `INSERT INTO ${q('flyway_schema_history')} VALUES (1, '1', 'init', true), (2, '1.1', 'add tier', true), (3, NULL, 'repeatable view', true), (4, '2', 'broken', false)`,
    ],
    version: '1.1',
    migrations: ['1', '1.1'],
  },
  {
    table: 'schema_migrations',
    create: (q) => [`CREATE TABLE ${q('schema_migrations')} (version varchar(255) PRIMARY KEY)`, `INSERT INTO ${q('schema_migrations')} VALUES ('20240202000000'), ('9'), ('20240101000000')`],
    version: '20240202000000',
    migrations: ['9', '20240101000000', '20240202000000'],
  },
  {
    table: 'schema_migrations',
    create: (q) => [`CREATE TABLE ${q('schema_migrations')} (version bigint NOT NULL PRIMARY KEY, dirty boolean NOT NULL)`, `INSERT INTO ${q('schema_migrations')} VALUES (7, true)`],
    version: '7 (dirty)',
    migrations: ['7 (dirty)'],
  },
  {
    table: 'knex_migrations',
    create: (q) => [`CREATE TABLE ${q('knex_migrations')} (id int PRIMARY KEY, name varchar(255), batch int)`, `INSERT INTO ${q('knex_migrations')} VALUES (1, '001_init.js', 1), (2, '002_tier.js', 2)`],
    version: '002_tier.js',
    migrations: ['001_init.js', '002_tier.js'],
  },
  {
    table: 'alembic_version',
    create: (q) => [`CREATE TABLE ${q('alembic_version')} (version_num varchar(32) PRIMARY KEY)`, `INSERT INTO ${q('alembic_version')} VALUES ('ae1027a6acf'), ('1975ea83b712')`],
    version: '1975ea83b712,ae1027a6acf',
    migrations: ['1975ea83b712', 'ae1027a6acf'],
  },
  {
    table: 'django_migrations',
    create: (q) => [
      `CREATE TABLE ${q('django_migrations')} (id int PRIMARY KEY, app varchar(255) NOT NULL, name varchar(255) NOT NULL, applied timestamp NOT NULL)`,
      `INSERT INTO ${q('django_migrations')} VALUES (1, 'auth', '0001_initial', '2024-01-01 00:00:00'), (2, 'shop', '0001_initial', '2024-01-02 00:00:00'), (3, 'shop', '0002_tier', '2024-01-03 00:00:00')`,
    ],
    version: 'shop.0002_tier',
    migrations: ['auth.0001_initial', 'shop.0001_initial', 'shop.0002_tier'],
  },
  {
    table: '__EFMigrationsHistory',
    create: (q) => [
      `CREATE TABLE ${q('__EFMigrationsHistory')} (${q('MigrationId')} varchar(150) PRIMARY KEY, ${q('ProductVersion')} varchar(32) NOT NULL)`,
      `INSERT INTO ${q('__EFMigrationsHistory')} VALUES ('20240101000000_Init', '8.0.0'), ('20240202000000_Tier', '8.0.0')`,
    ],
    version: '20240202000000_Tier',
    migrations: ['20240101000000_Init', '20240202000000_Tier'],
  },
];

const quoting: Record<Engine, (name: string) => string> = { postgres: (name) => `"${name}"`, mysql: (name) => `\`${name}\`` };

beforeAll(async () => {
  await run('postgres', [`CREATE DATABASE ${databases.postgres}`]);
  await run('mysql', [`CREATE DATABASE ${databases.mysql}`]);
});

afterAll(async () => {
  await dropPostgresDatabase(urls.postgres, databases.postgres);
  await dropMysqlDatabase(urls.mysql, databases.mysql);
});

describe.each(['postgres', 'mysql'] as const)('%s', (engine) => {
  it.each(CASES.map((c, i) => ({ ...c, label: `${c.table} #${i}` })))('reads $label', async ({ table, create, version, migrations }) => {
    const q = quoting[engine];
    await run(engine, create(q), databases[engine]);
    try {
      const inventory = await driverFor(engine).inventory(accessFromUrl(urls[engine]), [databases[engine]]);
      const database = inventory.databases[0]!;
      expect(inventory.notes ?? []).toEqual([]);
      expect(database).toMatchObject({ migrationTable: table, migrationVersion: version, migrations });
    } finally {
      await run(engine, [`DROP TABLE ${q(table)}`], databases[engine]);
    }
  });
});
