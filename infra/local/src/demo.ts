/**
 * A small shop in the stack's own Postgres and MariaDB, so that a new user has something to back up, restore to a
 * second, open in a sandbox and query with a masked column: database `shop`, tables `customers` (with `email`, which
 * `strata quickstart` masks) and `orders`. Only in servers the stack started itself, never in one named by
 * POSTGRES_URL or MYSQL_URL; created once, and an existing `shop` is left as it is.
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { Infra } from './infra.ts';
import { mysqlConnectionOptions } from './mariadb.ts';

export const DEMO_DATABASE = 'shop';

const CUSTOMERS = 200;
const COUNTRIES = ['DE', 'FR', 'NL', 'SE', 'US', 'JP'];

/** The demo rows, the same on both engines. */
function customers(): Array<[number, string, string, string]> {
  return Array.from({ length: CUSTOMERS }, (_, i) => [i + 1, `customer${i + 1}@example.com`, `Customer ${i + 1}`, COUNTRIES[i % COUNTRIES.length] as string]);
}

function orders(): Array<[number, number, string]> {
  return Array.from({ length: CUSTOMERS * 3 }, (_, i) => [i + 1, (i % CUSTOMERS) + 1, (((i * 37) % 9000) / 100 + 5).toFixed(2)]);
}

/** Creates `shop` where the stack owns the server and it is missing; answers the engines that hold it now. */
export async function ensureDemoDatabases(infra: Pick<Infra, 'postgres' | 'mysql'>, log: (line: string) => void = () => undefined, name = DEMO_DATABASE): Promise<{ postgres: boolean; mysql: boolean }> {
  const [postgres, mysqlHeld] = await Promise.all([
    infra.postgres.source === 'started' ? ensurePostgres(infra.postgres.adminUrl, name, log) : Promise.resolve(false),
    infra.mysql.source === 'started' ? ensureMysql(infra.mysql.adminUrl, name, log) : Promise.resolve(false),
  ]);
  return { postgres, mysql: mysqlHeld };
}

async function ensurePostgres(adminUrl: string, name: string, log: (line: string) => void): Promise<boolean> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount) return true;
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const shop = new pg.Client({ connectionString: url.toString() });
  await shop.connect();
  try {
    await shop.query('CREATE TABLE customers (id int PRIMARY KEY, email text NOT NULL UNIQUE, name text NOT NULL, country text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())');
    await shop.query('CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL REFERENCES customers (id), total numeric(10, 2) NOT NULL, placed_at timestamptz NOT NULL DEFAULT now())');
    await shop.query('INSERT INTO customers (id, email, name, country) SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[])', columnsOf(customers()));
    await shop.query('INSERT INTO orders (id, customer_id, total) SELECT * FROM unnest($1::int[], $2::int[], $3::numeric[])', columnsOf(orders()));
  } finally {
    await shop.end();
  }
  log(`demo database "${name}" created in the stack's Postgres (${CUSTOMERS} customers)`);
  return true;
}

async function ensureMysql(adminUrl: string, name: string, log: (line: string) => void): Promise<boolean> {
  const admin = await mysql.createConnection(mysqlConnectionOptions(adminUrl));
  try {
    const [found] = await admin.query<mysql.RowDataPacket[]>('SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [name]);
    if (found.length) return true;
    await admin.query(`CREATE DATABASE \`${name}\``);
    await admin.query(`CREATE TABLE \`${name}\`.customers (id INT PRIMARY KEY, email VARCHAR(255) NOT NULL UNIQUE, name VARCHAR(255) NOT NULL, country CHAR(2) NOT NULL, created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP) ENGINE=InnoDB`);
    await admin.query(`CREATE TABLE \`${name}\`.orders (id INT PRIMARY KEY, customer_id INT NOT NULL, total DECIMAL(10, 2) NOT NULL, placed_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, FOREIGN KEY (customer_id) REFERENCES customers (id)) ENGINE=InnoDB`);
    await admin.query(`INSERT INTO \`${name}\`.customers (id, email, name, country) VALUES ?`, [customers()]);
    await admin.query(`INSERT INTO \`${name}\`.orders (id, customer_id, total) VALUES ?`, [orders()]);
  } finally {
    await admin.end();
  }
  log(`demo database "${name}" created in the stack's MariaDB (${CUSTOMERS} customers)`);
  return true;
}

/** Rows as one array per column (Postgres `unnest` of arrays). */
function columnsOf(rows: unknown[][]): unknown[][] {
  return (rows[0] ?? []).map((_, column) => rows.map((row) => row[column]));
}
