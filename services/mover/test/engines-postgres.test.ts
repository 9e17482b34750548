import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driverFor, summarizeInventory } from '../src/engines/index.ts';
import type { DatabaseAccess, DumpOptions, EngineDriver } from '../src/engines/index.ts';
import { parseArchiveDatabase, tablePattern } from '../src/engines/postgres/index.ts';
import { runTogether } from '../src/engines/together.ts';
import { accessFromUrl, createPostgresFixture, dropPostgresDatabase, FIXTURE, uniqueDatabaseName } from './fixtures.ts';

const ADMIN_URL = process.env.POSTGRES_URL as string;
const driver: EngineDriver = driverFor('postgres');
const access: DatabaseAccess = accessFromUrl(ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const NO_EXCLUSIONS: DumpOptions = { excludeData: [], excludeTables: [] };

const source = uniqueDatabaseName('pg_src');
const second = uniqueDatabaseName('pg_src2');
const created: string[] = [source, second];
const fresh = (label: string): string => {
  const name = uniqueDatabaseName(label);
  created.push(name);
  return name;
};

async function sql<T extends pg.QueryResultRow>(database: string, text: string, params: unknown[] = []): Promise<T[]> {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

async function databaseExists(name: string): Promise<boolean> {
  return (await sql('postgres', 'SELECT 1 FROM pg_database WHERE datname = $1', [name])).length === 1;
}

/** Dump `from` straight into a restore as `to`. */
async function copy(from: string, to: string, options: DumpOptions = NO_EXCLUSIONS): Promise<{ dumpWarnings: string[]; restoreWarnings: string[]; commands: string[][] }> {
  const dump = driver.dump(access, from, options);
  const restore = driver.restore(access, to);
  await Promise.all([pipeline(dump.stdout, restore.stdin), dump.done, restore.done]);
  return { dumpWarnings: dump.warnings, restoreWarnings: restore.warnings, commands: dump.commands };
}

describe('postgres engine driver', () => {
  beforeAll(async () => {
    expect(ADMIN_URL, 'the global test setup provides POSTGRES_URL').toBeTruthy();
    await Promise.all([
      createPostgresFixture(ADMIN_URL, source, { largeRowBytes: 3 * 1024 * 1024, rows: 200 }),
      createPostgresFixture(ADMIN_URL, second, { largeRowBytes: 64 * 1024, rows: 10 }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(created.map((name) => dropPostgresDatabase(ADMIN_URL, name).catch(() => {})));
  });

  it('dumps and restores a database equal to its source: rows, schema, sequences, enums, extensions, locale', { timeout: 60_000 }, async () => {
    const target = fresh('pg_restored');
    const { dumpWarnings, restoreWarnings, commands } = await copy(source, target);
    expect(dumpWarnings).toEqual([]);
    expect(restoreWarnings).toEqual([]);
    expect(commands[0]).toEqual(expect.arrayContaining(['--format=custom', '--compress=0', '--no-password', `--dbname=${source}`]));

    const [before, after] = await Promise.all([driver.tableChecksums(access, source), driver.tableChecksums(access, target)]);
    expect(Object.keys(before).sort()).toEqual([...FIXTURE.postgres.dataTables].sort());
    expect(after).toEqual(before);
    expect(before['public.documents']?.rows).toBe(4);
    expect(before['public.customers']?.rows).toBe(210);

    const [invBefore, invAfter] = await Promise.all([driver.inventory(access, [source]), driver.inventory(access, [target])]);
    expect(invAfter.databases[0]?.schemaHash).toBe(invBefore.databases[0]?.schemaHash);
    const fingerprints = (inv: typeof invBefore): Record<string, string> =>
      Object.fromEntries((inv.databases[0]?.tables ?? []).map((t) => [`${t.schema}.${t.name}`, t.fingerprint]));
    expect(fingerprints(invAfter)).toEqual(fingerprints(invBefore));
    // The restore gathered planner statistics: estimates are there, not -1.
    expect(invAfter.databases[0]?.tables.find((t) => t.name === 'invoices')?.rowsEstimate).toBe(630);

    const sequences = `SELECT last_value::text AS v, is_called FROM public.customers_id_seq UNION ALL SELECT last_value::text, is_called FROM public.order_number_seq`;
    expect(await sql(target, sequences)).toEqual(await sql(source, sequences));
    expect((await sql<{ v: string }>(target, sequences))[0]?.v).toBe(String(FIXTURE.postgres.sequence.lastValue));
    const enumLabels = `SELECT enum_range(NULL::public.mood)::text AS labels`;
    expect(await sql(target, enumLabels)).toEqual([{ labels: '{sad,ok,happy,"ecstatic 😀"}' }]);
    const extensions = `SELECT extname FROM pg_extension ORDER BY 1`;
    expect(await sql(target, extensions)).toEqual(await sql(source, extensions));
    const locale = `SELECT pg_encoding_to_char(encoding) AS encoding, datcollate, datctype FROM pg_database WHERE datname = current_database()`;
    expect(await sql(target, locale)).toEqual(await sql(source, locale));
    // Views, materialized views, triggers and functions came along and work.
    expect(await sql(target, 'SELECT count(*)::int AS n FROM public.customer_totals')).toEqual([{ n: 210 }]);
    expect(await sql(target, 'SELECT sum(n)::int AS n FROM public.mood_counts')).toEqual([{ n: 210 }]);
    const auditBefore = (await sql<{ n: number }>(target, 'SELECT count(*)::int AS n FROM public.audit_log'))[0]?.n ?? 0;
    await sql(target, `INSERT INTO public.customers (email, name) VALUES ('new@example.com', 'new')`);
    expect(await sql(target, 'SELECT count(*)::int AS n FROM public.audit_log')).toEqual([{ n: auditBefore + 1 }]);
    expect(await sql(target, `SELECT id > 5000 AS after_sequence FROM public.customers WHERE email = 'new@example.com'`)).toEqual([{ after_sequence: true }]);
  });

  it('excludeData keeps a table empty and excludeTables leaves one out', { timeout: 60_000 }, async () => {
    const target = fresh('pg_excl');
    await copy(second, target, { excludeData: [FIXTURE.excludeDataTable], excludeTables: [`public.${FIXTURE.excludeTable}`] });
    const [before, after] = await Promise.all([driver.tableChecksums(access, second), driver.tableChecksums(access, target)]);
    expect(after['public.sessions']?.rows).toBe(0);
    expect(before['public.sessions']?.rows).toBeGreaterThan(0);
    expect(after['public.scratch']).toBeUndefined();
    const { 'public.sessions': _s1, 'public.scratch': _x1, ...kept } = before;
    const { 'public.sessions': _s2, ...restored } = after;
    expect(restored).toEqual(kept);
  });

  it('inventories tables, columns, indexes, keys, sizes and the latest migration, without row data', { timeout: 30_000 }, async () => {
    const inventory = await driver.inventory(access, [source, second], { exactCounts: { maxRows: 1_000_000, timeoutMs: 5000 } });
    expect(inventory.engine).toBe('postgres');
    expect(inventory.server.major).toBeGreaterThanOrEqual(12);
    expect(inventory.databases.map((d) => d.name)).toEqual([source, second]);
    expect(inventory.schemaHash).toMatch(/^[0-9a-f]{64}$/);
    const db = inventory.databases[0];
    if (!db) throw new Error('no database in the inventory');
    // The two fixtures have the same schema.
    expect(inventory.databases[1]?.schemaHash).toBe(db.schemaHash);
    expect(db.migrationTable).toBe(FIXTURE.migrationTable);
    expect(db.migrationVersion).toBe(FIXTURE.migrationVersion);
    // The applied migrations, oldest first (the failed one is not applied).
    expect(db.migrations).toEqual(['20240101000000_init', FIXTURE.migrationVersion]);
    expect(db.sizeBytes).toBeGreaterThan(6 * 1024 * 1024);
    expect(db.oid).toBeGreaterThan(0);
    expect(db.schemas).toEqual(['billing', 'public']);
    expect(db.views).toEqual([...FIXTURE.postgres.views]);
    expect(db.extensions?.some((e) => e.startsWith('plpgsql '))).toBe(true);
    expect(db.routines).toEqual(expect.arrayContaining(['public.invoice_total(c bigint)', 'public.log_customer_change()']));
    expect(inventory.extra?.[`${source}.encoding`]).toBe('UTF8');

    const names = db.tables.map((t) => `${t.schema}.${t.name}`);
    expect(names).toEqual(expect.arrayContaining([...FIXTURE.postgres.tables, 'public.mood_counts']));
    const invoices = db.tables.find((t) => t.schema === 'billing' && t.name === 'invoices');
    expect(invoices).toMatchObject({
      kind: 'table',
      primaryKey: ['id'],
      exactRows: 630,
      foreignKeys: [{ name: 'invoices_customer_id_fkey', columns: ['customer_id'], refTable: 'public.customers', refColumns: ['id'] }],
    });
    expect(invoices?.rowsEstimate).toBe(630);
    expect(invoices?.columns.find((c) => c.name === 'amount')).toEqual({ name: 'amount', type: 'public.positive_amount', nullable: false });
    expect(invoices?.columns.find((c) => c.name === 'id')?.default).toBe('generated always as identity');
    expect(invoices?.indexes?.find((i) => i.name === 'invoices_customer_idx')).toMatchObject({ columns: ['customer_id', 'issued_at'], unique: false });
    expect(invoices?.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    const documents = db.tables.find((t) => t.name === 'documents');
    expect(documents?.toastBytes).toBeGreaterThan(3 * 1024 * 1024); // the large rows live in TOAST
    expect(documents?.totalBytes).toBeGreaterThanOrEqual((documents?.tableBytes ?? 0) + (documents?.toastBytes ?? 0));
    expect(documents?.oid).toBeGreaterThan(0);
    expect(documents?.relfilenode).toBeGreaterThan(0);
    const customers = db.tables.find((t) => t.schema === 'public' && t.name === 'customers');
    expect(customers?.indexes?.map((i) => i.name).sort()).toEqual(['customers_email_key', 'customers_lower_name', 'customers_pkey', 'customers_profile_gin']);
    expect(customers?.activity).toBeDefined();
    expect(db.tables.find((t) => t.name === 'measurements')?.kind).toBe('partitioned table');
    // No row data: no value from any row appears in the inventory.
    expect(JSON.stringify(inventory)).not.toContain('example.com');

    const summary = summarizeInventory(inventory);
    expect(summary).toMatchObject({ databases: 2, schemaHash: inventory.schemaHash, migrationVersion: `${source}:${FIXTURE.migrationVersion}, ${second}:${FIXTURE.migrationVersion}` });
    expect(summary.tables).toBe(db.tables.length * 2);
  });

  it('lists databases: * without templates, named ones checked', { timeout: 30_000 }, async () => {
    const all = await driver.listDatabases(access, ['*']);
    expect(all).toEqual(expect.arrayContaining([source, second]));
    expect(all).not.toContain('template0');
    expect(all).not.toContain('template1');
    expect(await driver.listDatabases(access, [second, source, second])).toEqual([second, source]);
    const missing = `strata_t_missing_${Date.now()}`;
    await expect(driver.listDatabases(access, [source, missing])).rejects.toThrow(`database "${missing}" does not exist on postgres 127.0.0.1`);
    await expect(driver.listDatabases(access, ['nope_a', 'nope_b'])).rejects.toThrow('databases "nope_a", "nope_b" do not exist');
  });

  it('reports the server and the position before a dump', { timeout: 30_000 }, async () => {
    const info = await driver.serverInfo(access);
    expect(info.version).toMatch(/^\d+/);
    expect(info.major).toBe(Number.parseInt(info.version, 10));
    expect(info.systemID).toMatch(/^\d+$/);
    expect(info.host).toBe(`${access.host}:${access.port}`);
    expect(info.sizeBytes).toBeGreaterThan(0);
    expect(info.settings.server_encoding).toBeTruthy();
    const position = await driver.position(access);
    expect(position.startLSN).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    expect(position.startWAL).toMatch(/^[0-9A-F]{24}$/);
    expect(position.timeline).toBeGreaterThanOrEqual(1);
    const tools = await driver.tools();
    expect(tools.pg_dump).toMatch(/pg_dump \(PostgreSQL\) \d+/);
  });

  it('keeps the password out of argv', { timeout: 30_000 }, async () => {
    // The server trusts local connections, so any password works; it must travel in PGPASSWORD only.
    const dump = driver.dump({ ...access, password: 'sekret-in-env-only' }, second, NO_EXCLUSIONS);
    const sink = new PassThrough();
    sink.resume();
    await Promise.all([pipeline(dump.stdout, sink), dump.done]);
    expect(JSON.stringify(dump.commands)).not.toContain('sekret-in-env-only');
  });

  it('a bad port makes the dump fail with pg_dump’s own message, and its stream fails too', { timeout: 30_000 }, async () => {
    const dump = driver.dump({ ...access, port: 1 }, source, NO_EXCLUSIONS);
    const sink = new PassThrough();
    sink.resume();
    const piped = pipeline(dump.stdout, sink);
    await expect(dump.done).rejects.toThrow(/^pg_dump: error: connection to server at "127\.0\.0\.1", port 1 failed: Connection refused/);
    await expect(piped).rejects.toThrow(/port 1 failed/);
  });

  it('a missing database makes the dump fail with a clear message', { timeout: 30_000 }, async () => {
    const dump = driver.dump(access, 'strata_t_does_not_exist', NO_EXCLUSIONS);
    dump.stdout.resume();
    await expect(dump.done).rejects.toThrow(/database "strata_t_does_not_exist" does not exist/);
  });

  it('refuses to restore into an existing database, and leaves it alone', { timeout: 30_000 }, async () => {
    const dump = driver.dump(access, second, NO_EXCLUSIONS);
    const restore = driver.restore(access, source);
    const piped = pipeline(dump.stdout, restore.stdin);
    await expect(restore.done).rejects.toThrow(`database "${source}" already exists`);
    // The writer learns it too, unless it had already handed everything over.
    await piped.catch((error: Error) => expect(error.message).toMatch(/already exists/));
    dump.kill();
    await dump.done.catch(() => {});
    expect(await databaseExists(source)).toBe(true);
    expect((await driver.tableChecksums(access, source))['public.customers']?.rows).toBe(210);
  });

  it('rejects what is not a custom-format archive before creating anything', { timeout: 30_000 }, async () => {
    const target = fresh('pg_garbage');
    const restore = driver.restore(access, target);
    await expect(Promise.all([pipeline(Readable.from([Buffer.from('SELECT 1;\n')]), restore.stdin), restore.done])).rejects.toThrow(
      /not a pg_dump custom-format archive/,
    );
    expect(await databaseExists(target)).toBe(false);
  });

  it('a dump stream cut short aborts the restore and drops the half-restored database', { timeout: 30_000 }, async () => {
    const target = fresh('pg_cut');
    const dump = driver.dump(access, source, NO_EXCLUSIONS);
    const restore = driver.restore(access, target);
    let sent = 0;
    dump.stdout.on('data', (chunk: Buffer) => {
      sent += chunk.length;
      if (sent > 2 * 1024 * 1024) dump.stdout.destroy(new Error('upload failed'));
    });
    await expect(pipeline(dump.stdout, restore.stdin)).rejects.toThrow();
    await expect(restore.done).rejects.toThrow(/closed before its end|was stopped|pg_restore/);
    await expect(dump.done).rejects.toThrow(/pg_dump was stopped/);
    expect(await databaseExists(target)).toBe(false);
  });

  it('a feeder that fails mid-restore (a tampered object) is reported only once the half-restored database is gone', { timeout: 30_000 }, async () => {
    const target = fresh('pg_feeder');
    const dump = driver.dump(access, source, NO_EXCLUSIONS);
    const restore = driver.restore(access, target);
    // Like the mover's download: the first megabytes flow, then the object's checksum does not match.
    const feeder = (async () => {
      dump.stdout.pipe(restore.stdin, { end: false });
      await expect.poll(() => databaseExists(target), { timeout: 20_000 }).toBe(true);
      dump.stdout.unpipe(restore.stdin);
      dump.kill();
      throw new Error('sha256 mismatch');
    })();
    await expect(runTogether(feeder, restore.done, restore.kill)).rejects.toThrow('sha256 mismatch');
    // No waiting here: the job reports Failed at this point, and whoever reads it must not find the database.
    expect(await databaseExists(target)).toBe(false);
  });

  it('kill() stops a running dump', { timeout: 30_000 }, async () => {
    const dump = driver.dump(access, source, NO_EXCLUSIONS);
    dump.stdout.once('data', () => dump.kill());
    dump.stdout.resume();
    await expect(dump.done).rejects.toThrow(/pg_dump was stopped/);
  });

  it('dropDatabase drops, is idempotent, and refuses system databases', { timeout: 30_000 }, async () => {
    const target = fresh('pg_drop');
    await copy(second, target);
    expect(await databaseExists(target)).toBe(true);
    await driver.dropDatabase(access, target);
    expect(await databaseExists(target)).toBe(false);
    await driver.dropDatabase(access, target);
    await expect(driver.dropDatabase(access, 'postgres')).rejects.toThrow(/refusing/);
  });
});

describe('postgres helpers', () => {
  it('turns table names into exact pg_dump patterns', () => {
    expect(tablePattern('sessions')).toBe('*."sessions"');
    expect(tablePattern('billing.Invoices')).toBe('"billing"."Invoices"');
    expect(tablePattern('we"ird')).toBe('we"ird');
    expect(tablePattern('audit_*')).toBe('audit_*');
  });

  it('reads the source database options from an archive head', () => {
    const head = Buffer.concat([
      Buffer.from('PGDMP\x01\x0e\x00binary'),
      Buffer.from("CREATE DATABASE \"we\"\"ird db\" WITH TEMPLATE = template0 ENCODING = 'UTF8' LOCALE_PROVIDER = libc LOCALE = 'en_US.UTF-8';\x00\x00"),
    ]);
    expect(parseArchiveDatabase(head)).toEqual({ options: { ENCODING: 'UTF8', LOCALE_PROVIDER: 'libc', LOCALE: 'en_US.UTF-8' } });
    expect(parseArchiveDatabase(Buffer.from('PGDMP nothing here'))).toBeUndefined();
  });
});
