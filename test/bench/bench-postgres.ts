/**
 * Postgres for the Strata benches (strata-backup.ts, strata-sandbox.ts): the client tools as the mover picks them, and
 * the 1 GB database (customers and orders generated with a fixed seed to land just over the size asked for, kept
 * between runs and reused while it is complete).
 */
import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';

/** A Postgres client tool as the mover's driver picks it: STRATA_PG_BINDIR, else the newest /usr/lib/postgresql/<n>/bin, else PATH. */
export function pgTool(name: string): string {
  const dirs: string[] = [];
  if (process.env.STRATA_PG_BINDIR) dirs.push(process.env.STRATA_PG_BINDIR);
  try {
    const versions = fs.readdirSync('/usr/lib/postgresql').sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
    dirs.push(...versions.map((v) => path.join('/usr/lib/postgresql', v, 'bin')));
  } catch {
    // no Debian layout
  }
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    if (fs.existsSync(candidate)) return candidate;
  }
  return name;
}

/** The environment of the client tools: like the driver's (no PG* or LC_* of ours, LC_ALL=C), plus the password. */
export function pgToolEnv(password: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^(PG|LC_)/.test(key) && key !== 'LANGUAGE') env[key] = value;
  return { ...env, LC_ALL: 'C', PGPASSWORD: password };
}

export interface BenchDatabaseOptions {
  connect: (database: string) => Promise<pg.Client>;
  database: string;
  minBytes: number;
  aimBytes: number;
  maxBytes: number;
  /** Recreate it even if a complete one exists. */
  fresh: boolean;
}

export interface BenchDatabase {
  sizeBytes: number;
  orders: number;
  generatedSeconds?: number;
  reusedFrom?: string;
}

const GENERATOR = 'strata-backup v2';
export const gib = (bytes: number): string => `${(bytes / 1024 ** 3).toFixed(3)} GiB`;
const secs = (start: number): string => `${((performance.now() - start) / 1000).toFixed(1)} s`;

const ORDERS_BATCH = 500_000;
const TOPUP_BATCH = 100_000;
/** The four indexes of orders (primary key, customer_id, created_at, status) come to about 60 bytes a row. */
const INDEX_BYTES_PER_ROW = 60;

function insertOrders(from: number, count: number): string {
  return `INSERT INTO orders
SELECT i,
  1 + floor(random() * 200000)::int,
  ts,
  CASE WHEN random() < 0.7 THEN ts + random() * interval '30 days' END,
  (ARRAY['pending','paid','paid','shipped','shipped','delivered','delivered','delivered','cancelled','refunded'])[1 + floor(random() * 10)::int],
  (ARRAY['USD','USD','EUR','GBP','JPY'])[1 + floor(random() * 5)::int],
  round((random() * 500)::numeric, 2),
  1 + floor(random() * 9)::int,
  'SKU-' || lpad(floor(random() * 5000)::int::text, 5, '0'),
  CASE WHEN random() < 0.5 THEN w[1 + floor(random() * 24)::int] || ' ' || w[1 + floor(random() * 24)::int] || ' ' || w[1 + floor(random() * 24)::int] END,
  jsonb_build_object(
    'channel', (ARRAY['web','ios','android','pos','api'])[1 + floor(random() * 5)::int],
    'device', (ARRAY['desktop','mobile','tablet'])[1 + floor(random() * 3)::int],
    'items', 1 + floor(random() * 5)::int,
    'gift', random() < 0.1,
    'score', round(random()::numeric, 3),
    'coupon', CASE WHEN random() < 0.2 THEN 'SAVE' || floor(random() * 50)::int END,
    'ref', md5(i::text)),
  CASE WHEN random() < 0.1 THEN sha256(int8send(i)) || sha256(int8send(-i)) || sha256(int8send(i + 1000000000000)) || sha256(int8send(i + 2000000000000)) END
FROM generate_series(${from + 1}, ${from + count}) AS i,
     LATERAL (SELECT timestamptz '2022-01-01 00:00:00+00' + make_interval(secs => i * 20 + random() * 20) AS ts) t,
     (SELECT ARRAY['please','leave','at','door','gift','wrap','call','before','delivery','fragile','handle','with','care','rush',
                   'order','customer','requested','invoice','copy','backorder','partial','ship','hold','pickup'] AS w) v`;
}

const SCHEMA = `
CREATE TABLE customers (
  id int PRIMARY KEY,
  email text NOT NULL,
  name text NOT NULL,
  country char(2) NOT NULL,
  tier text NOT NULL,
  created_at timestamptz NOT NULL
);
INSERT INTO customers
SELECT i,
  'user' || i || '@' || (ARRAY['example.com','mail.test','corp.example','shop.test'])[1 + floor(random() * 4)::int],
  (ARRAY['Ada','Alan','Grace','Linus','Barbara','Ken','Margaret','Dennis','Radia','Edsger'])[1 + floor(random() * 10)::int] || ' ' ||
  (ARRAY['Lovelace','Turing','Hopper','Torvalds','Liskov','Thompson','Hamilton','Ritchie','Perlman','Dijkstra'])[1 + floor(random() * 10)::int],
  (ARRAY['US','DE','FR','GB','JP','BR','IN','CA'])[1 + floor(random() * 8)::int],
  (ARRAY['free','free','free','pro','pro','enterprise'])[1 + floor(random() * 6)::int],
  timestamptz '2020-01-01 00:00:00+00' + make_interval(secs => i * 300 + random() * 300)
FROM generate_series(1, 200000) AS i;
CREATE TABLE orders (
  id bigint NOT NULL,
  customer_id int NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz,
  status text NOT NULL,
  currency char(3) NOT NULL,
  amount numeric(12,2) NOT NULL,
  quantity int NOT NULL,
  sku text NOT NULL,
  note text,
  attrs jsonb NOT NULL,
  payload bytea
);
CREATE TABLE bench_meta (generator text NOT NULL, orders bigint NOT NULL, generated_at timestamptz NOT NULL, seconds numeric NOT NULL);`;

const INDEXES = `
ALTER TABLE orders ADD PRIMARY KEY (id);
CREATE INDEX orders_customer_id_idx ON orders (customer_id);
CREATE INDEX orders_created_at_idx ON orders (created_at);
CREATE INDEX orders_status_idx ON orders (status);
ALTER TABLE orders ADD CONSTRAINT orders_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES customers (id);`;

export async function databaseSize(client: pg.Client): Promise<number> {
  return Number((await client.query<{ s: string }>('SELECT pg_database_size(current_database()) AS s')).rows[0]!.s);
}

/** Reuses a complete database of the right size unless `fresh`; otherwise (re)generates it. */
export async function ensureBenchDatabase(options: BenchDatabaseOptions): Promise<BenchDatabase> {
  const { connect, database: DATABASE, minBytes: MIN_BYTES, aimBytes: AIM_BYTES, maxBytes: MAX_BYTES, fresh } = options;
  const admin = await connect('postgres');
  try {
    const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE])).rowCount === 1;
    if (exists && !fresh) {
      const db = await connect(DATABASE);
      try {
        const meta = await db
          .query<{ generator: string; orders: string; generated_at: Date }>('SELECT generator, orders, generated_at FROM bench_meta')
          .then((r) => r.rows[0])
          .catch(() => undefined);
        const size = await databaseSize(db);
        if (meta?.generator === GENERATOR && size >= MIN_BYTES && size <= MAX_BYTES) {
          return { sizeBytes: size, orders: Number(meta.orders), reusedFrom: meta.generated_at.toISOString() };
        }
        console.log(`  ${DATABASE} exists but is ${meta ? `${gib(size)} (want ${gib(MIN_BYTES)}–${gib(MAX_BYTES)})` : 'incomplete'}: recreating it`);
      } finally {
        await db.end();
      }
    }
    if (exists) await admin.query(`DROP DATABASE ${DATABASE} WITH (FORCE)`);
    const start = performance.now();
    await admin.query(`CREATE DATABASE ${DATABASE}`);
    const db = await connect(DATABASE);
    try {
      await db.query('SET synchronous_commit = off');
      await db.query('SET maintenance_work_mem = \'256MB\'');
      await db.query('SELECT setseed(0.42)');
      await db.query(SCHEMA);
      // The first batch measures the heap bytes a row takes; the rest is sized to land near AIM_BYTES once indexed.
      const empty = await databaseSize(db);
      let orders = 0;
      let wanted = ORDERS_BATCH;
      while (orders < wanted) {
        const batch = Math.min(ORDERS_BATCH, wanted - orders);
        await db.query(insertOrders(orders, batch));
        orders += batch;
        const size = await databaseSize(db);
        if (orders === batch) wanted = Math.ceil((AIM_BYTES - empty) / ((size - empty) / orders + INDEX_BYTES_PER_ROW));
        if (process.stdout.isTTY) process.stdout.write(`\r  generating: ${orders.toLocaleString('en-US')} of ${wanted.toLocaleString('en-US')} orders, ${gib(size)} before indexes (${secs(start)})   `);
      }
      if (process.stdout.isTTY) process.stdout.write('\n');
      await db.query(INDEXES);
      await db.query('VACUUM ANALYZE');
      while ((await databaseSize(db)) < MIN_BYTES) {
        await db.query(insertOrders(orders, TOPUP_BATCH));
        orders += TOPUP_BATCH;
        await db.query('VACUUM ANALYZE orders');
      }
      // Write the dirty pages out now, not during the first measured run.
      await db.query('CHECKPOINT');
      const seconds = (performance.now() - start) / 1000;
      await db.query('INSERT INTO bench_meta VALUES ($1, $2, now(), $3)', [GENERATOR, orders, seconds.toFixed(1)]);
      return { sizeBytes: await databaseSize(db), orders, generatedSeconds: seconds };
    } finally {
      await db.end();
    }
  } finally {
    await admin.end();
  }
}

