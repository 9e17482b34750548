/**
 * Databases with data that trips dumps: binary, JSON, arrays, enums, unicode (emoji, RTL, combining
 * marks), multi-MB rows, NULLs, time zones, numeric precision, sequences, views, routines, triggers,
 * foreign keys, partitions, and a `_prisma_migrations` table with two applied migrations (and one
 * that failed). The end-to-end tests reuse these: keep the signatures stable.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { DatabaseAccess } from '@sigil/proto';

export interface FixtureOptions {
  /** Size of each of the two large rows (text and binary), in bytes; default 2 MiB. Keep it under a third of the MySQL server's max_allowed_packet. */
  largeRowBytes?: number;
  /** Number of customers (each with 3 invoices, a session and some measurements); default 100. */
  rows?: number;
}

/** What the fixtures contain, for assertions. */
export const FIXTURE = {
  migrationTable: '_prisma_migrations',
  migrationVersion: '20240202000000_add_invoices',
  /** Table whose data the tests exclude, and table they leave out. */
  excludeDataTable: 'sessions',
  excludeTable: 'scratch',
  postgres: {
    tables: [
      'public.customers',
      'billing.invoices',
      'public.documents',
      'public.audit_log',
      'public.measurements',
      'public.measurements_2024',
      'public.measurements_2025',
      'public.sessions',
      'public.scratch',
      'public._prisma_migrations',
    ],
    /** Tables holding rows (what tableChecksums covers): the partitioned parent holds none itself. */
    dataTables: [
      'public.customers',
      'billing.invoices',
      'public.documents',
      'public.audit_log',
      'public.measurements_2024',
      'public.measurements_2025',
      'public.sessions',
      'public.scratch',
      'public._prisma_migrations',
    ],
    views: ['public.customer_totals'],
    /** Sequence and the value the fixture leaves it at. */
    sequence: { name: 'public.customers_id_seq', lastValue: 5000 },
  },
  mysql: {
    tables: ['customers', 'invoices', 'documents', 'audit_log', 'sessions', 'scratch', 'legacy_latin1', '_prisma_migrations'],
    views: ['customer_totals'],
    autoIncrement: { table: 'customers', value: 5000 },
    /** The database's default collation after the fixture changed it (routines keep the one they were created under). */
    charset: 'utf8mb4',
    collation: 'utf8mb4_unicode_ci',
  },
} as const;

/** A database name unique to this run: `strata_t_<label>_<random>`. */
export function uniqueDatabaseName(label: string): string {
  return `strata_t_${label}_${randomBytes(4).toString('hex')}`;
}

/** DatabaseAccess from `postgres://user:pass@host:port/db` or `mysql://user:pass@host:port/`. */
export function accessFromUrl(url: string): DatabaseAccess {
  const parsed = new URL(url);
  const protocol = parsed.protocol.replace(/:$/, '');
  const engine = protocol === 'postgres' || protocol === 'postgresql' ? 'postgres' : protocol === 'mysql' || protocol === 'mariadb' ? 'mysql' : undefined;
  if (!engine) throw new Error(`accessFromUrl: unsupported URL scheme ${parsed.protocol}`);
  return {
    engine,
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsed.port ? Number(parsed.port) : engine === 'postgres' ? 5432 : 3306,
    username: decodeURIComponent(parsed.username) || (engine === 'postgres' ? 'postgres' : 'root'),
    password: decodeURIComponent(parsed.password),
  };
}

/** Text that trips encoders: emoji (with ZWJ sequences), RTL scripts, combining marks, CJK, quotes, backslashes, COPY's end marker. */
export const TRICKY_TEXTS = [
  'plain ascii',
  'emoji 😀 family 👩‍👩‍👧‍👦 flag 🇫🇷',
  'RTL: مرحبا بالعالم — שלום עולם',
  'combining: e\u0301 vs é, Å vs A\u030A',
  'CJK: 漢字かなカナ한국어',
  `quotes ' " \` and backslashes \\ \\N \\\\`,
  'COPY marker on its own line:\n\\.\nand after',
  'tabs\tand\r\nCRLF and \u2028 line separator',
  '',
  ' leading and trailing spaces ',
];

// ---------------------------------------------------------------------------------------------
// Postgres

function pgUrlFor(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

async function withPg<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

const pgIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;

export async function createPostgresFixture(adminUrl: string, database: string, options: FixtureOptions = {}): Promise<void> {
  const rows = options.rows ?? 100;
  const large = options.largeRowBytes ?? 2 * 1024 * 1024;
  await withPg(adminUrl, (c) => c.query(`CREATE DATABASE ${pgIdent(database)} TEMPLATE template0 ENCODING 'UTF8'`));
  await withPg(pgUrlFor(adminUrl, database), async (c) => {
    const available = new Set(
      (await c.query<{ name: string }>(`SELECT name FROM pg_available_extensions WHERE name IN ('citext', 'hstore')`)).rows.map((r) => r.name),
    );
    const citext = available.has('citext');
    const hstore = available.has('hstore');
    if (citext) await c.query('CREATE EXTENSION citext');
    if (hstore) await c.query('CREATE EXTENSION hstore');
    await c.query(`
      CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy', 'ecstatic 😀');
      CREATE DOMAIN positive_amount AS numeric(14, 2) CHECK (VALUE >= 0);
      CREATE SCHEMA billing;
      CREATE SEQUENCE order_number_seq START 1000 INCREMENT 7;

      CREATE TABLE customers (
        id bigserial PRIMARY KEY,
        email ${citext ? 'citext' : 'text'} NOT NULL UNIQUE,
        name text NOT NULL,
        mood mood,
        tags text[],
        scores integer[],
        matrix double precision[][],
        profile jsonb,
        settings json,
        ${hstore ? 'attrs hstore,' : ''}
        avatar bytea,
        balance numeric(30, 10),
        ratio double precision,
        tiny real,
        created_at timestamptz NOT NULL DEFAULT now(),
        local_time timestamp,
        birthday date,
        wakeup timetz,
        span interval,
        uid uuid,
        ip inet,
        note text
      );
      CREATE INDEX customers_profile_gin ON customers USING gin (profile);
      CREATE INDEX customers_lower_name ON customers (lower(name)) WHERE note IS NOT NULL;

      CREATE TABLE billing.invoices (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        number bigint NOT NULL DEFAULT nextval('order_number_seq'),
        customer_id bigint NOT NULL REFERENCES public.customers (id) ON DELETE CASCADE,
        amount positive_amount NOT NULL,
        currency char(3) NOT NULL DEFAULT 'EUR',
        issued_at timestamptz NOT NULL,
        paid boolean NOT NULL DEFAULT false,
        lines jsonb NOT NULL DEFAULT '[]',
        total_cents bigint GENERATED ALWAYS AS ((amount * 100)::bigint) STORED,
        CONSTRAINT invoices_currency_upper CHECK (currency = upper(currency))
      );
      CREATE INDEX invoices_customer_idx ON billing.invoices (customer_id, issued_at DESC);

      CREATE TABLE documents (
        id serial PRIMARY KEY,
        customer_id bigint REFERENCES customers (id),
        title text NOT NULL,
        body text,
        content bytea
      );

      CREATE TABLE audit_log (
        id bigserial PRIMARY KEY,
        customer_id bigint,
        action text NOT NULL,
        at timestamptz NOT NULL DEFAULT now(),
        detail jsonb
      );

      CREATE FUNCTION log_customer_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO audit_log (customer_id, action, detail) VALUES (NEW.id, TG_OP, jsonb_build_object('email', NEW.email::text));
        RETURN NEW;
      END
      $$;
      CREATE TRIGGER customers_audit AFTER INSERT OR UPDATE ON customers FOR EACH ROW EXECUTE FUNCTION log_customer_change();

      CREATE FUNCTION invoice_total(c bigint) RETURNS numeric LANGUAGE sql STABLE
        AS $$ SELECT coalesce(sum(amount), 0) FROM billing.invoices WHERE customer_id = c $$;

      CREATE VIEW customer_totals AS
        SELECT c.id, c.email, count(i.id) AS invoices, coalesce(sum(i.amount), 0) AS total
          FROM customers c LEFT JOIN billing.invoices i ON i.customer_id = c.id
         GROUP BY c.id, c.email;
      CREATE MATERIALIZED VIEW mood_counts AS SELECT mood, count(*) AS n FROM customers GROUP BY mood;

      CREATE TABLE measurements (
        id bigint NOT NULL,
        taken_at date NOT NULL,
        value numeric,
        PRIMARY KEY (id, taken_at)
      ) PARTITION BY RANGE (taken_at);
      CREATE TABLE measurements_2024 PARTITION OF measurements FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
      CREATE TABLE measurements_2025 PARTITION OF measurements FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');

      CREATE TABLE sessions (id text PRIMARY KEY, customer_id bigint, data jsonb, created_at timestamptz NOT NULL DEFAULT now());
      CREATE TABLE scratch (id integer, junk text);

      CREATE TABLE _prisma_migrations (
        id varchar(36) PRIMARY KEY NOT NULL,
        checksum varchar(64) NOT NULL,
        finished_at timestamptz,
        migration_name varchar(255) NOT NULL,
        logs text,
        rolled_back_at timestamptz,
        started_at timestamptz NOT NULL DEFAULT now(),
        applied_steps_count integer NOT NULL DEFAULT 0
      );
      INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES
        ('0c8f8a4e-0000-4000-8000-000000000001', repeat('a', 64), '2024-01-01 00:00:01+00', '20240101000000_init', '2024-01-01 00:00:00+00', 1),
        ('0c8f8a4e-0000-4000-8000-000000000002', repeat('b', 64), '2024-02-02 00:00:01+00', '20240202000000_add_invoices', '2024-02-02 00:00:00+00', 1),
        ('0c8f8a4e-0000-4000-8000-000000000003', repeat('c', 64), NULL, '20240303000000_failed', '2024-03-03 00:00:00+00', 0);
    `);

    // Hand-picked rows at the edges, then generated ones.
    const texts = TRICKY_TEXTS;
    for (const [i, text] of texts.entries()) {
      await c.query(
        `INSERT INTO customers (email, name, mood, tags, scores, matrix, profile, settings, ${hstore ? 'attrs, ' : ''}avatar, balance, ratio, tiny,
                                created_at, local_time, birthday, wakeup, span, uid, ip, note)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, ${hstore ? `'a=>1, "b c"=>NULL, "ü"=>"😀"'::hstore, ` : ''}$9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
        [
          `Edge${i}@Example.COM`,
          text,
          ['sad', 'ok', 'happy', 'ecstatic 😀'][i % 4],
          i % 3 === 0 ? '{}' : `{NULL,"a,b","c\\"d","${i}😀"}`,
          i % 2 === 0 ? null : `{1,-2,${2 ** 31 - 1}}`,
          '{{1.5,2},{-0,1e-300}}',
          // A number beyond double precision, which jsonb keeps exactly.
          `${JSON.stringify({ text, nested: { list: [1, 2.5, null, true, { deep: text }] } }).slice(0, -1)}, "big": 12345678901234567890123}`,
          `{"k": 1,  "k": 2, "text": ${JSON.stringify(text)}}`,
          i % 2 === 0 ? randomBytes(64 + i) : Buffer.alloc(0),
          ['12345678901234567890.0123456789', '-0.0000000001', '0', null][i % 4],
          [Math.PI, Number.NaN, Number.POSITIVE_INFINITY, -1e-300, null][i % 5],
          [3.4028235e38, 1.17549435e-38, -0, null][i % 4],
          ['1970-01-01 00:00:00+00', '2038-01-19 03:14:08+00', '2024-06-01 12:00:00+05:30', 'infinity', '0001-01-01 00:00:00+00'][i % 5],
          ['2024-03-31 02:30:00', '1999-12-31 23:59:59.999999', null][i % 3],
          ['2000-02-29', '4713-01-01 BC', null][i % 3],
          ['23:59:59.999+14', '00:00:00-12', null][i % 3],
          ['1 year 2 mons 3 days 04:05:06.789', '-1 day', null][i % 3],
          i % 2 ? null : `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
          ['10.0.0.1/32', '2001:db8::1', null][i % 3],
          i % 4 === 0 ? null : `note ${text}`,
        ],
      );
    }
    await c.query(
      `INSERT INTO customers (email, name, mood, tags, scores, profile, avatar, balance, ratio, created_at, birthday, note)
       SELECT 'user' || g || '@example.com', 'Customer ' || g || ' ' || $2::text,
              (ARRAY['sad','ok','happy','ecstatic 😀'])[1 + g % 4]::mood,
              ARRAY['t' || g, NULL, '😀'], ARRAY[g, -g], jsonb_build_object('n', g, 'even', g % 2 = 0, 'name', 'ü' || g),
              CASE WHEN g % 3 = 0 THEN NULL ELSE decode(md5(g::text) || md5((g * 7)::text), 'hex') END,
              (g * 1234567.891)::numeric(30, 10), g / 7.0, timestamptz '2024-01-01 00:00:00+00' + g * interval '37 minutes',
              date '1980-01-01' + g, CASE WHEN g % 5 = 0 THEN NULL ELSE 'generated ' || g END
         FROM generate_series(1, $1::int) AS g`,
      [rows, 'مرحبا 😀'],
    );
    await c.query(`UPDATE customers SET note = coalesce(note, '') || ' (updated)' WHERE id % 10 = 0`);
    await c.query(
      `INSERT INTO billing.invoices (customer_id, amount, issued_at, paid, lines)
       SELECT c.id, ((c.id * 13 + k) % 100000) / 100.0, timestamptz '2024-01-01 00:00:00+00' + (c.id * 3 + k) * interval '1 hour', k % 2 = 0,
              jsonb_build_array(jsonb_build_object('sku', 'SKU-' || k, 'qty', k, 'price', 9.99))
         FROM customers c CROSS JOIN generate_series(1, 3) AS k`,
    );
    await c.query(
      `INSERT INTO measurements (id, taken_at, value)
       SELECT g, date '2024-01-01' + (g * 3) % 700, (g * 3.14159)::numeric FROM generate_series(1, $1::int) AS g`,
      [rows * 2],
    );
    await c.query(
      `INSERT INTO sessions (id, customer_id, data) SELECT md5(g::text), g, jsonb_build_object('token', md5((g * 31)::text)) FROM generate_series(1, $1::int) AS g`,
      [rows],
    );
    await c.query(`INSERT INTO scratch (id, junk) SELECT g, repeat('x', g % 50) FROM generate_series(1, 20) AS g`);
    const unit = 'Large row 😀 مرحبا ';
    const body = unit.repeat(Math.ceil(large / Buffer.byteLength(unit))).slice(0, large);
    for (let k = 0; k < 2; k++) {
      await c.query(`INSERT INTO documents (customer_id, title, body, content) VALUES ($1, $2, $3, $4)`, [k + 1, `large ${k}`, body, randomBytes(large)]);
    }
    await c.query(`INSERT INTO documents (customer_id, title, body, content) VALUES (NULL, 'empty', NULL, NULL), (2, '', '', '\\x00'::bytea)`);
    await c.query(`SELECT setval('customers_id_seq', 5000)`);
    await c.query(`REFRESH MATERIALIZED VIEW mood_counts`);
    await c.query(`ANALYZE`);
  });
}

/** Drops a test's database, with the logical slots a target's previews left in it (they keep a database from being dropped). */
export async function dropPostgresDatabase(adminUrl: string, database: string): Promise<void> {
  await withPg(adminUrl, async (c) => {
    await c.query('SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1 AND NOT active', [database]);
    await c.query(`DROP DATABASE IF EXISTS ${pgIdent(database)} WITH (FORCE)`);
  });
}

// ---------------------------------------------------------------------------------------------
// MySQL / MariaDB

const myIdent = (name: string): string => `\`${name.replaceAll('`', '``')}\``;

async function withMysql<T>(adminUrl: string, database: string | undefined, fn: (c: mysql.Connection) => Promise<T>): Promise<T> {
  const access = accessFromUrl(adminUrl);
  const connection = await mysql.createConnection({
    host: access.host,
    port: access.port,
    user: access.username,
    password: access.password,
    ...(database ? { database } : {}),
    charset: 'UTF8MB4_UNICODE_CI',
    timezone: 'Z',
    multipleStatements: false,
  });
  try {
    await connection.query(`SET time_zone = '+00:00'`);
    return await fn(connection);
  } finally {
    await connection.end().catch(() => {});
  }
}

export async function createMysqlFixture(adminUrl: string, database: string, options: FixtureOptions = {}): Promise<void> {
  const rows = options.rows ?? 100;
  const large = options.largeRowBytes ?? 2 * 1024 * 1024;
  const db = myIdent(database);
  await withMysql(adminUrl, undefined, (c) => c.query(`CREATE DATABASE ${db} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci`));
  await withMysql(adminUrl, database, async (c) => {
    const statements = [
      // ENUM labels stay in the BMP: MariaDB keeps table definitions in utf8mb3, so SHOW CREATE TABLE
      // (and with it every dump) turns a 4-byte label such as an emoji into '?'.
      `CREATE TABLE customers (
        id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
        email VARCHAR(191) NOT NULL,
        name VARCHAR(255) NOT NULL,
        mood ENUM('sad', 'ok', 'happy', 'ecstatic ★') NULL,
        flags SET('vip', 'beta', 'blocked') NULL,
        profile JSON NULL,
        avatar BLOB NULL,
        balance DECIMAL(30, 10) NULL,
        ratio DOUBLE NULL,
        tiny FLOAT NULL,
        bits BIT(10) NULL,
        created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
        updated_at DATETIME(3) NULL,
        birthday DATE NULL,
        wakeup TIME(2) NULL,
        yr YEAR NULL,
        uid BINARY(16) NULL,
        note TEXT NULL,
        UNIQUE KEY customers_email (email),
        KEY customers_name (name(50))
      ) ENGINE=InnoDB`,
      `CREATE TABLE invoices (
        id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
        customer_id BIGINT UNSIGNED NOT NULL,
        amount DECIMAL(12, 2) NOT NULL,
        currency CHAR(3) NOT NULL DEFAULT 'EUR',
        issued_at DATETIME(6) NOT NULL,
        paid TINYINT(1) NOT NULL DEFAULT 0,
        \`lines\` JSON NULL,
        KEY invoices_customer_idx (customer_id, issued_at),
        CONSTRAINT invoices_amount_positive CHECK (amount >= 0),
        CONSTRAINT invoices_customer_fk FOREIGN KEY (customer_id) REFERENCES customers (id) ON DELETE CASCADE
      ) ENGINE=InnoDB`,
      `CREATE TABLE documents (
        id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
        customer_id BIGINT UNSIGNED NULL,
        title VARCHAR(200) NOT NULL,
        body LONGTEXT NULL,
        content LONGBLOB NULL,
        CONSTRAINT documents_customer_fk FOREIGN KEY (customer_id) REFERENCES customers (id)
      ) ENGINE=InnoDB`,
      `CREATE TABLE audit_log (
        id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
        customer_id BIGINT UNSIGNED NULL,
        action VARCHAR(20) NOT NULL,
        at DATETIME(6) NOT NULL DEFAULT NOW(6),
        detail JSON NULL
      ) ENGINE=InnoDB`,
      `CREATE TABLE sessions (id CHAR(32) NOT NULL PRIMARY KEY, customer_id BIGINT UNSIGNED NULL, data JSON NULL, created_at DATETIME NOT NULL DEFAULT NOW()) ENGINE=InnoDB`,
      `CREATE TABLE scratch (id INT NULL, junk VARCHAR(100) NULL) ENGINE=InnoDB`,
      `CREATE TABLE legacy_latin1 (id INT NOT NULL PRIMARY KEY, name VARCHAR(100) NOT NULL) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci`,
      `CREATE TABLE _prisma_migrations (
        id VARCHAR(36) NOT NULL PRIMARY KEY,
        checksum VARCHAR(64) NOT NULL,
        finished_at DATETIME(3) NULL,
        migration_name VARCHAR(255) NOT NULL,
        logs TEXT NULL,
        rolled_back_at DATETIME(3) NULL,
        started_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
        applied_steps_count INT UNSIGNED NOT NULL DEFAULT 0
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`,
      `CREATE TRIGGER customers_audit AFTER INSERT ON customers FOR EACH ROW
         INSERT INTO audit_log (customer_id, action, detail) VALUES (NEW.id, 'INSERT', JSON_OBJECT('email', NEW.email))`,
      `CREATE FUNCTION invoice_total(c BIGINT UNSIGNED) RETURNS DECIMAL(14, 2) READS SQL DATA
         RETURN (SELECT COALESCE(SUM(amount), 0) FROM invoices WHERE customer_id = c)`,
      `CREATE PROCEDURE mark_paid(IN c BIGINT UNSIGNED) MODIFIES SQL DATA UPDATE invoices SET paid = 1 WHERE customer_id = c`,
      `CREATE VIEW customer_totals AS
         SELECT c.id, c.email, COUNT(i.id) AS invoices, COALESCE(SUM(i.amount), 0) AS total
           FROM customers c LEFT JOIN invoices i ON i.customer_id = c.id GROUP BY c.id, c.email`,
      `CREATE EVENT purge_sessions ON SCHEDULE EVERY 1 DAY DISABLE DO DELETE FROM sessions WHERE created_at < NOW() - INTERVAL 30 DAY`,
      `INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES
        ('0c8f8a4e-0000-4000-8000-000000000001', REPEAT('a', 64), '2024-01-01 00:00:01', '20240101000000_init', '2024-01-01 00:00:00', 1),
        ('0c8f8a4e-0000-4000-8000-000000000002', REPEAT('b', 64), '2024-02-02 00:00:01', '20240202000000_add_invoices', '2024-02-02 00:00:00', 1),
        ('0c8f8a4e-0000-4000-8000-000000000003', REPEAT('c', 64), NULL, '20240303000000_failed', '2024-03-03 00:00:00', 0)`,
      // The routines above keep utf8mb4_general_ci as their database collation: the dump then switches
      // the database's collation around them (ALTER DATABASE lines naming the source database).
      `ALTER DATABASE ${db} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
    ];
    for (const sql of statements) await c.query(sql);

    for (const [i, text] of TRICKY_TEXTS.entries()) {
      await c.query(
        `INSERT INTO customers (email, name, mood, flags, profile, avatar, balance, ratio, tiny, bits, created_at, updated_at, birthday, wakeup, yr, uid, note)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          `edge${i}@example.com`,
          text,
          ['sad', 'ok', 'happy', 'ecstatic ★'][i % 4],
          ['', 'vip', 'vip,beta', null][i % 4],
          JSON.stringify({ text, nested: { list: [1, 2.5, null, true, { deep: text }] } }),
          i % 2 === 0 ? randomBytes(64 + i) : Buffer.alloc(0),
          ['12345678901234567890.0123456789', '-0.0000000001', '0', null][i % 4],
          [Math.PI, -1e-300, 1.7976931348623157e308, null][i % 4],
          [3.4e38, -1.5, 0, null][i % 4],
          [0b1111111111, 0, 0b1010, null][i % 4],
          ['1970-01-01 00:00:01', '2038-01-19 03:14:07.999999', '2024-03-31 02:30:00'][i % 3],
          ['1000-01-01 00:00:00', '9999-12-31 23:59:59.999', null][i % 3],
          ['2000-02-29', '0001-01-01', null][i % 3],
          ['838:59:59', '-12:30:00.5', null][i % 3],
          [1901, 2155, null][i % 3],
          i % 2 ? null : randomBytes(16),
          i % 4 === 0 ? null : `note ${text}`,
        ],
      );
    }
    await c.query(`INSERT INTO legacy_latin1 (id, name) VALUES (1, 'Ærøskøbing café'), (2, 'naïve façade'), (3, '')`);
    const batch: unknown[][] = [];
    for (let g = 1; g <= rows; g++) {
      batch.push([
        `user${g}@example.com`,
        `Customer ${g} مرحبا 😀`,
        ['sad', 'ok', 'happy', 'ecstatic ★'][g % 4],
        JSON.stringify({ n: g, even: g % 2 === 0, name: `ü${g}` }),
        g % 3 === 0 ? null : randomBytes(32),
        (g * 1234567.891).toFixed(10),
        g / 7,
        `2024-01-01 00:00:00`,
        g % 5 === 0 ? null : `generated ${g}`,
      ]);
    }
    if (batch.length > 0) {
      await c.query(`INSERT INTO customers (email, name, mood, profile, avatar, balance, ratio, created_at, note) VALUES ?`, [batch]);
    }
    await c.query(`UPDATE customers SET created_at = created_at + INTERVAL id * 37 MINUTE, note = CONCAT(COALESCE(note, ''), ' (updated)') WHERE id % 10 = 0`);
    await c.query(
      `INSERT INTO invoices (customer_id, amount, issued_at, paid, \`lines\`)
       SELECT c.id, ((c.id * 13 + k.k) % 100000) / 100.0, '2024-01-01 00:00:00' + INTERVAL (c.id * 3 + k.k) HOUR, k.k % 2 = 0,
              JSON_ARRAY(JSON_OBJECT('sku', CONCAT('SKU-', k.k), 'qty', k.k, 'price', 9.99))
         FROM customers c CROSS JOIN (SELECT 1 AS k UNION ALL SELECT 2 UNION ALL SELECT 3) k`,
    );
    await c.query(`INSERT INTO sessions (id, customer_id, data) SELECT MD5(id), id, JSON_OBJECT('token', MD5(id * 31)) FROM customers`);
    await c.query(`INSERT INTO scratch (id, junk) SELECT id, REPEAT('x', id % 50) FROM customers LIMIT 20`);
    const unit = 'Large row 😀 مرحبا ';
    const body = unit.repeat(Math.ceil(large / Buffer.byteLength(unit))).slice(0, large);
    for (let k = 0; k < 2; k++) {
      await c.query(`INSERT INTO documents (customer_id, title, body, content) VALUES (?, ?, ?, ?)`, [k + 1, `large ${k}`, body, randomBytes(large)]);
    }
    await c.query(`INSERT INTO documents (customer_id, title, body, content) VALUES (NULL, 'empty', NULL, NULL), (2, '', '', UNHEX('00'))`);
    await c.query(`ALTER TABLE customers AUTO_INCREMENT = 5000`);
    await c.query(`ANALYZE TABLE customers, invoices, documents, audit_log, sessions`);
  });
}

export async function dropMysqlDatabase(adminUrl: string, database: string): Promise<void> {
  await withMysql(adminUrl, undefined, (c) => c.query(`DROP DATABASE IF EXISTS ${myIdent(database)}`));
}
